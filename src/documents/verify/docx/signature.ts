import type { Document, Element } from '@xmldom/xmldom';
import { createHash } from 'node:crypto';
import { describeScheme, schemeHash } from '../../pki/algorithms.js';
import { parseCert, summarizeCert, validAt, type Cert } from '../../pki/certificates.js';
import { buildChain } from '../../pki/chain.js';
import { anchorReport, developmentAnchorWarning } from '../../pki/trust.js';
import type { TrustStore } from '../../pki/trust.js';
import { readTimestampToken } from '../../pki/timestamp.js';
import { DIGEST_METHODS, decodeBase64 } from '../../xml-dsig/algorithms.js';
import { C14N_ALGORITHMS, canonicalize } from '../../ooxml/c14n.js';
import { NS } from '../../ooxml/constants.js';
import type { OpcPackage } from '../../ooxml/package.js';
import { childElements, decodeXmlBytes, descendants, firstChild, parseXml, textOf } from '../../ooxml/xml.js';
import { checkReference, describeC14n, indexIds, type ReferenceCheck, type ReferenceContext } from '../../xml-dsig/references.js';
import { signatureValueSigner, signedInfoMethods } from '../../xml-dsig/signed-info.js';
import { unsignedScope } from './scope.js';
import type { DocxSignatureReport, DocxSignedPart } from './types.js';

export interface DocxEvaluationContext {
  pkg: OpcPackage;
  trust: TrustStore;
  now: Date;
  /** Something about the package that makes every signature in it unreliable (e.g. two signature origins). */
  packageProblem?: string;
}

/** What decides the indication beyond the report's booleans. */
interface Findings {
  formatError?: string;
  unsupported?: string;
  noCertificate?: string;
  hashFailure?: string;
  weakAlgorithm?: string;
  chainProblem?: string;
  /** What an office application shows that the signature does not sign (scope.ts). */
  unsignedScope?: string[];
  signerCert?: Cert;
}

const XADES_NAMESPACES = [NS.xades132, NS.xades141];

function emptyReport(part: string): DocxSignatureReport {
  return {
    part,
    id: null,
    signingTime: null,
    reason: null,
    signer: null,
    digestAlgorithm: null,
    signatureAlgorithm: null,
    canonicalization: null,
    xades: false,
    intact: false,
    cryptoValid: false,
    trusted: false,
    certificateValidAtSigningTime: false,
    timestamp: null,
    signedObjects: [],
    parts: [],
    indication: 'INDETERMINATE',
    subIndication: null,
    errors: [],
    warnings: [],
  };
}

const isoOrNull = (value: string): string | null => {
  const t = Date.parse(value);
  return Number.isNaN(t) ? null : new Date(t).toISOString();
};

function inXades(root: Element, localName: string): Element[] {
  return XADES_NAMESPACES.flatMap((ns) => descendants(root, ns, localName));
}

function partReport(check: ReferenceCheck): DocxSignedPart {
  return {
    part: check.part?.name ?? check.uri,
    contentType: check.part?.contentType ?? null,
    digestAlgorithm: check.hash ? check.hash.toUpperCase().replace('SHA', 'SHA-') : null,
    transforms: check.transforms,
    relationships: check.part?.relationships ?? null,
    intact: check.intact,
    error: check.error ?? null,
  };
}

function readCertificates(root: Element): Cert[] {
  const keyInfo = firstChild(root, NS.dsig, 'KeyInfo');
  if (!keyInfo) return [];
  return descendants(keyInfo, NS.dsig, 'X509Certificate')
    .map((el) => parseCert(decodeBase64(textOf(el))))
    .filter((c): c is Cert => !!c);
}

/** XAdES SigningCertificate(V2): true when one CertDigest matches the certificate, undefined when there is none to check. */
function signingCertificateMatches(signedProperties: Element, cert: Cert): boolean | undefined {
  const digests = inXades(signedProperties, 'CertDigest');
  if (!digests.length) return undefined;
  return digests.some((d) => {
    const hash = DIGEST_METHODS[firstChild(d, NS.dsig, 'DigestMethod')?.getAttribute('Algorithm') ?? ''];
    return !!hash && createHash(hash).update(cert.der).digest().equals(decodeBase64(textOf(firstChild(d, NS.dsig, 'DigestValue'))));
  });
}

function rsaBits(cert: Cert): number | undefined {
  return cert.x509.publicKey.asymmetricKeyType === 'rsa' ? cert.x509.publicKey.asymmetricKeyDetails?.modulusLength : undefined;
}

class SignatureEvaluator {
  readonly report: DocxSignatureReport;
  readonly findings: Findings = {};
  private refCtx!: ReferenceContext;

  constructor(
    partName: string,
    private readonly ctx: DocxEvaluationContext,
  ) {
    this.report = emptyReport(partName);
  }

  run(): void {
    const root = this.parse();
    if (!root) return;
    const signedInfo = firstChild(root, NS.dsig, 'SignedInfo');
    const signatureValue = firstChild(root, NS.dsig, 'SignatureValue');
    if (!signedInfo || !signatureValue) {
      this.findings.formatError = 'the signature has no SignedInfo or no SignatureValue';
      return;
    }
    this.report.id = root.getAttribute('Id') || null;
    const signedElements = this.checkSignedInfoReferences(signedInfo);
    this.checkManifests(signedElements);
    this.readSignedProperties(root, signedElements);
    const certificates = readCertificates(root);
    this.checkSignatureValue(signedInfo, signatureValue, certificates);
    this.checkSigner(root, signedElements, certificates);
    this.checkTimestamp(root, signatureValue);
    this.report.intact = !this.findings.hashFailure && !this.findings.formatError && this.report.parts.length > 0;
    if (this.ctx.packageProblem) this.findings.formatError ??= this.ctx.packageProblem;
    const open = this.report.parts.length ? unsignedScope(this.ctx.pkg, this.report) : [];
    if (open.length) this.findings.unsignedScope = open;
  }

  private parse(): Element | undefined {
    const bytes = this.ctx.pkg.bytes(this.report.part);
    let doc: Document;
    try {
      doc = parseXml(decodeXmlBytes(bytes ?? new Uint8Array()));
    } catch (err) {
      this.findings.formatError = `the signature part is not well-formed XML (${err instanceof Error ? err.message : String(err)})`;
      return undefined;
    }
    const root = doc.documentElement;
    if (!root || root.namespaceURI !== NS.dsig || root.localName !== 'Signature') {
      this.findings.formatError = 'the signature part does not hold an XML-DSig Signature element';
      return undefined;
    }
    this.refCtx = { pkg: this.ctx.pkg, ids: indexIds(doc) };
    return root;
  }

  private noteReferenceProblem(check: ReferenceCheck): void {
    if (check.unsupported) this.findings.unsupported ??= check.unsupported;
    else if (!check.intact) this.findings.hashFailure ??= check.error ?? `${check.uri} does not match its digest`;
    if (check.hash === 'sha1') this.findings.weakAlgorithm ??= 'SHA-1';
  }

  private checkSignedInfoReferences(signedInfo: Element): Element[] {
    const elements: Element[] = [];
    for (const reference of childElements(signedInfo, NS.dsig, 'Reference')) {
      const check = checkReference(reference, this.refCtx);
      this.noteReferenceProblem(check);
      if (check.element) {
        elements.push(check.element);
        this.report.signedObjects.push({ uri: check.uri, type: check.type, intact: check.intact });
      } else if (check.part) {
        this.report.parts.push(partReport(check));
      } else if (check.error) {
        this.report.errors.push(check.error);
      }
    }
    return elements;
  }

  /** OPC signs package parts through a Manifest inside a signed ds:Object. */
  private checkManifests(signedElements: Element[]): void {
    const manifests = signedElements.flatMap((el) => (el.namespaceURI === NS.dsig && el.localName === 'Manifest' ? [el] : descendants(el, NS.dsig, 'Manifest')));
    for (const manifest of manifests) {
      for (const reference of childElements(manifest, NS.dsig, 'Reference')) {
        const check = checkReference(reference, this.refCtx);
        this.noteReferenceProblem(check);
        this.report.parts.push(partReport(check));
      }
    }
    if (!this.report.parts.length) this.findings.formatError ??= 'the signature signs no package Manifest, so it covers no part of the document';
  }

  private readSignedProperties(root: Element, signedElements: Element[]): void {
    const inSigned = (ns: string, name: string) => signedElements.flatMap((el) => descendants(el, ns, name));
    const opcTime = inSigned(NS.mdssi, 'SignatureTime').map((t) => textOf(firstChild(t, NS.mdssi, 'Value')))[0];
    const comments = inSigned(NS.officeDigsig, 'SignatureComments').map((c) => textOf(c))[0];
    this.report.reason = comments || null;
    const signedProperties = this.signedProperties(root, signedElements);
    this.report.xades = !!signedProperties;
    const xadesTime = signedProperties ? textOf(inXades(signedProperties, 'SigningTime')[0]) : '';
    this.report.signingTime = isoOrNull(xadesTime) ?? (opcTime ? isoOrNull(opcTime) : null);
    if (!signedProperties && inXades(root, 'SignedProperties').length) {
      this.report.warnings.push('the XAdES signed properties are present but not signed; they were ignored');
    }
  }

  private signedProperties(root: Element, signedElements: Element[]): Element | undefined {
    return signedElements.find((el) => XADES_NAMESPACES.includes(el.namespaceURI as never) && el.localName === 'SignedProperties') ??
      (inXades(root, 'SignedProperties').find((el) => signedElements.includes(el)));
  }

  private checkSignatureValue(signedInfo: Element, signatureValue: Element, certificates: Cert[]): void {
    const { c14nUri, methodUri, c14n, scheme } = signedInfoMethods(signedInfo);
    this.report.canonicalization = c14n ? describeC14n(c14nUri) : c14nUri || null;
    this.report.signatureAlgorithm = scheme ? describeScheme(scheme) : methodUri || null;
    const hash = scheme && schemeHash(scheme);
    this.report.digestAlgorithm = hash ? hash.toUpperCase().replace('SHA', 'SHA-') : null;
    if (!c14n) this.findings.unsupported ??= `canonicalization ${c14nUri || '(none)'}`;
    if (!scheme) this.findings.unsupported ??= `signature method ${methodUri || '(none)'}`;
    if (hash === 'sha1') this.findings.weakAlgorithm ??= 'SHA-1';
    if (!c14n || !scheme) return;
    const verifying = signatureValueSigner(signedInfo, signatureValue, certificates);
    this.report.cryptoValid = !!verifying;
    this.findings.signerCert = verifying ?? certificates[0];
  }

  private checkSigner(root: Element, signedElements: Element[], certificates: Cert[]): void {
    const signer = this.findings.signerCert;
    if (!signer) {
      this.findings.noCertificate = 'the signature carries no X.509 signer certificate (KeyInfo/X509Data)';
      return;
    }
    const signedProperties = this.signedProperties(root, signedElements);
    if (signedProperties && signingCertificateMatches(signedProperties, signer) === false) {
      this.findings.noCertificate = 'the XAdES SigningCertificate does not identify the certificate that made the signature';
    }
    const bits = rsaBits(signer);
    if (bits !== undefined && bits < 1024) this.findings.weakAlgorithm ??= `RSA-${bits}`;
    const at = this.report.signingTime ? new Date(this.report.signingTime) : this.ctx.now;
    const chain = buildChain(signer, certificates.filter((c) => c !== signer), this.ctx.trust, { purpose: 'signature', at });
    this.report.signer = { ...summarizeCert(signer), chain: chain.chain.map((c) => summarizeCert(c).subject), trustAnchor: anchorReport(chain.anchor) };
    this.report.trusted = chain.trusted;
    const development = developmentAnchorWarning(chain.anchor);
    if (development) this.report.warnings.push(development);
    if (!chain.trusted) this.findings.chainProblem = chain.problem;
    this.report.certificateValidAtSigningTime = validAt(signer, at);
  }

  /** XAdES-T: an RFC 3161 token over the canonicalised SignatureValue element. */
  private checkTimestamp(root: Element, signatureValue: Element): void {
    const stamp = inXades(root, 'SignatureTimeStamp')[0];
    if (!stamp) return;
    const encapsulated = inXades(stamp, 'EncapsulatedTimeStamp')[0];
    const c14nUri = firstChild(stamp, NS.dsig, 'CanonicalizationMethod')?.getAttribute('Algorithm') ?? 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315';
    const c14n = C14N_ALGORITHMS[c14nUri];
    if (!encapsulated || !c14n) {
      this.report.warnings.push('the XAdES signature time-stamp cannot be read and was ignored');
      return;
    }
    const stamped = Buffer.from(canonicalize(signatureValue, c14n), 'utf8');
    this.report.timestamp = readTimestampToken(decodeBase64(textOf(encapsulated)), stamped, this.ctx.trust).report;
  }
}

function decide(report: DocxSignatureReport, findings: Findings, now: Date): void {
  const fail = (indication: 'TOTAL_FAILED' | 'INDETERMINATE', sub: NonNullable<DocxSignatureReport['subIndication']>, error?: string) => {
    report.indication = indication;
    report.subIndication = sub;
    if (error && !report.errors.includes(error)) report.errors.push(error);
  };
  if (findings.formatError) return fail('TOTAL_FAILED', 'FORMAT_FAILURE', findings.formatError);
  if (findings.unsupported) return fail('INDETERMINATE', 'CRYPTO_CONSTRAINTS_FAILURE_NO_POE', `unsupported algorithm: ${findings.unsupported}`);
  if (findings.noCertificate) return fail('INDETERMINATE', 'NO_SIGNING_CERTIFICATE_FOUND', findings.noCertificate);
  if (findings.hashFailure) return fail('TOTAL_FAILED', 'HASH_FAILURE', `${findings.hashFailure}: the document was altered after signing`);
  if (!report.cryptoValid) return fail('TOTAL_FAILED', 'SIG_CRYPTO_FAILURE', 'the signature value does not verify with the signer certificate');
  // As for a PDF changed after signing in a way no rule allows: intact, but not what is shown.
  if (findings.unsignedScope) {
    for (const problem of findings.unsignedScope) fail('TOTAL_FAILED', 'FORMAT_FAILURE', `the signature does not cover what the document shows: ${problem}`);
    return;
  }
  if (!report.trusted) {
    return fail('INDETERMINATE', 'NO_CERTIFICATE_CHAIN_FOUND', `the signer certificate does not chain to a trusted root${findings.chainProblem ? ` (${findings.chainProblem})` : ''}`);
  }
  const signer = findings.signerCert!;
  if (report.signingTime && new Date(report.signingTime).getTime() < new Date(signer.x509.validFrom).getTime()) {
    return fail('TOTAL_FAILED', 'NOT_YET_VALID', 'the signer certificate was not yet valid at the claimed signing time');
  }
  if (report.signingTime && new Date(report.signingTime).getTime() > new Date(signer.x509.validTo).getTime()) {
    return fail('TOTAL_FAILED', 'EXPIRED', `the signer certificate had expired (${new Date(signer.x509.validTo).toISOString()}) at the claimed signing time`);
  }
  const ts = report.timestamp;
  const poe = ts?.valid && ts.intact && ts.trusted && ts.time ? new Date(ts.time) : undefined;
  if (!validAt(signer, now) && !(poe && validAt(signer, poe))) {
    return fail('INDETERMINATE', 'OUT_OF_BOUNDS_NO_POE', 'the signer certificate is outside its validity period and no trusted time-stamp proves the signature existed before');
  }
  if (findings.weakAlgorithm) {
    return fail('INDETERMINATE', 'CRYPTO_CONSTRAINTS_FAILURE_NO_POE', `the signature uses ${findings.weakAlgorithm}, which is no longer considered secure`);
  }
  report.indication = 'TOTAL_PASSED';
  report.subIndication = null;
}

/** Verifies one OOXML signature part (XML-DSig with OPC package references). Never throws. */
export function evaluateDocxSignature(partName: string, ctx: DocxEvaluationContext): DocxSignatureReport {
  const evaluator = new SignatureEvaluator(partName, ctx);
  try {
    evaluator.run();
  } catch (err) {
    evaluator.findings.formatError ??= `the signature cannot be processed: ${err instanceof Error ? err.message : String(err)}`;
  }
  decide(evaluator.report, evaluator.findings, ctx.now);
  return evaluator.report;
}
