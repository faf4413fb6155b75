import { createHash, X509Certificate } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { signatureScheme, verifySignature } from '../algorithms.js';
import { hasExtendedKeyUsage, issuedBy, parseCert, type Cert } from '../certificates.js';
import { decodeBer } from '../asn1.js';

/**
 * Reads one piece of revocation evidence (an OCSP response or a CRL) about one certificate and says
 * what it proves, after checking it: the OCSP response's signature (by the issuer, or by a responder
 * the issuer authorised with id-kp-OCSPSigning), that it is about this certificate, its
 * thisUpdate/nextUpdate and, when one was sent, its nonce; the CRL's issuer, signature and validity.
 */
export type RevocationStatus = 'good' | 'revoked' | 'unknown';

export interface EvidenceVerdict {
  status: RevocationStatus;
  method: 'ocsp' | 'crl';
  /** When the evidence was produced (OCSP thisUpdate / CRL thisUpdate). */
  producedAt: string;
  nextUpdate: string | null;
  revokedAt?: string;
  reason?: string;
}

export class EvidenceProblem extends Error {}

/** ASN.1 structures decode lazily: a damaged field (a time that is not one) throws late, as any Error. */
function damagedIsAProblem<T>(what: string, read: () => T): T {
  try {
    return read();
  } catch (error) {
    if (error instanceof EvidenceProblem) throw error;
    throw new EvidenceProblem(`the ${what} is damaged (${(error as Error)?.message ?? String(error)})`);
  }
}

const OCSP_BASIC = '1.3.6.1.5.5.7.48.1.1';
const OCSP_NONCE = '1.3.6.1.5.5.7.48.1.2';
const KP_OCSP_SIGNING = '1.3.6.1.5.5.7.3.9';
const OCSP_NO_CHECK = '1.3.6.1.5.5.7.48.1.5';
/** Clock difference tolerated between this machine and a responder. */
const SKEW_MS = 5 * 60 * 1000;

const REASONS = ['unspecified', 'keyCompromise', 'cACompromise', 'affiliationChanged', 'superseded', 'cessationOfOperation', 'certificateHold', 'unused', 'removeFromCRL', 'privilegeWithdrawn', 'aACompromise'];

const hex = (bytes: ArrayBuffer | Uint8Array) => Buffer.from(bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes)).toString('hex');
const serialOf = (serial: asn1js.Integer) => hex(serial.valueBlock.valueHexView).replace(/^(00)+(?=.)/, '');
const serialHex = (cert: Cert) => serialOf(cert.parsed.serialNumber);

function fromDer<T>(der: Uint8Array, make: (schema: asn1js.AsnType) => T, what: string): T {
  const asn1 = decodeBer(der);
  if (asn1.offset === -1) throw new EvidenceProblem(`the ${what} is not DER`);
  try {
    return make(asn1.result);
  } catch {
    throw new EvidenceProblem(`the ${what} is not a ${what}`);
  }
}

function verifiedBy(tbs: Uint8Array, algorithm: pkijs.AlgorithmIdentifier, signature: Uint8Array, signer: Cert): boolean {
  const scheme = signatureScheme(algorithm, 'sha256');
  return !!scheme && verifySignature(scheme, signer.x509.publicKey, tbs, signature);
}

const time = (value: Date | undefined) => (value ? value.toISOString() : null);

/** The responder that signed `basic`: the issuer itself or a delegated OCSP signer it issued. */
function ocspSigner(basic: pkijs.BasicOCSPResponse, issuer: Cert, at: Date): Cert {
  const candidates = [issuer, ...(basic.certs ?? []).flatMap((c) => parseCert(new Uint8Array(c.toSchema().toBER()), c) ?? [])];
  const signature = new Uint8Array(basic.signature.valueBlock.valueHexView);
  for (const candidate of candidates) {
    if (!verifiedBy(basic.tbsResponseData.tbsView, basic.signatureAlgorithm, signature, candidate)) continue;
    if (candidate === issuer) return candidate;
    if (!issuedBy(candidate, issuer)) throw new EvidenceProblem('the OCSP response is signed by a responder the issuer did not certify');
    if (!hasExtendedKeyUsage(candidate, KP_OCSP_SIGNING)) throw new EvidenceProblem('the OCSP responder certificate is not authorised for OCSP signing (id-kp-OCSPSigning)');
    const t = at.getTime();
    if (t < new Date(candidate.x509.validFrom).getTime() - SKEW_MS || t > new Date(candidate.x509.validTo).getTime() + SKEW_MS) {
      throw new EvidenceProblem('the OCSP responder certificate was not valid when the response was produced');
    }
    return candidate;
  }
  throw new EvidenceProblem('the OCSP response signature does not verify with the issuer or an authorised responder');
}

function matchesCertId(id: pkijs.CertID, cert: Cert, issuer: Cert): boolean {
  const hashName = { '1.3.14.3.2.26': 'sha1', '2.16.840.1.101.3.4.2.1': 'sha256', '2.16.840.1.101.3.4.2.2': 'sha384', '2.16.840.1.101.3.4.2.3': 'sha512' }[id.hashAlgorithm.algorithmId];
  if (!hashName) return false;
  const issuerName = new Uint8Array(issuer.parsed.subject.toSchema().toBER());
  const issuerKey = new Uint8Array(issuer.parsed.subjectPublicKeyInfo.subjectPublicKey.valueBlock.valueHexView);
  return hex(id.issuerNameHash.valueBlock.valueHexView) === createHash(hashName).update(issuerName).digest('hex')
    && hex(id.issuerKeyHash.valueBlock.valueHexView) === createHash(hashName).update(issuerKey).digest('hex')
    && serialOf(id.serialNumber) === serialHex(cert);
}

/**
 * What an OCSP response says about `cert`. Throws EvidenceProblem when the response cannot be relied
 * on (unsigned, for another certificate, from the future, wrong nonce); whether it is fresh enough
 * for the time it must speak for is the caller's judgement (producedAt, nextUpdate).
 */
export function readOcspResponse(der: Uint8Array, cert: Cert, issuer: Cert, at: Date, nonce?: Uint8Array): EvidenceVerdict {
  return damagedIsAProblem('OCSP response', () => readOcsp(der, cert, issuer, at, nonce));
}

function readOcsp(der: Uint8Array, cert: Cert, issuer: Cert, at: Date, nonce?: Uint8Array): EvidenceVerdict {
  const response = fromDer(der, (schema) => new pkijs.OCSPResponse({ schema }), 'OCSP response');
  const status = response.responseStatus.valueBlock.valueDec;
  if (status !== 0) throw new EvidenceProblem(`the OCSP responder answered with status ${status} (${['successful', 'malformedRequest', 'internalError', 'tryLater', '', 'sigRequired', 'unauthorized'][status] ?? 'unknown'})`);
  if (!response.responseBytes || response.responseBytes.responseType !== OCSP_BASIC) throw new EvidenceProblem('the OCSP response is not a basic OCSP response');
  const basic = fromDer(new Uint8Array(response.responseBytes.response.valueBlock.valueHexView), (schema) => new pkijs.BasicOCSPResponse({ schema }), 'basic OCSP response');
  const data = basic.tbsResponseData;
  const single = data.responses.find((r) => matchesCertId(r.certID, cert, issuer));
  if (!single) throw new EvidenceProblem('the OCSP response is about another certificate');
  ocspSigner(basic, issuer, data.producedAt);
  if (nonce) {
    const sent = data.responseExtensions?.find((e) => e.extnID === OCSP_NONCE);
    const echoed = sent ? decodeBer(sent.extnValue.valueBlock.valueHexView) : undefined;
    const value = echoed && echoed.offset !== -1 && echoed.result instanceof asn1js.OctetString ? new Uint8Array(echoed.result.valueBlock.valueHexView) : sent ? new Uint8Array(sent.extnValue.valueBlock.valueHexView) : undefined;
    if (!value || hex(value) !== hex(nonce)) throw new EvidenceProblem('the OCSP response does not echo the nonce sent (a replayed answer)');
  }
  const thisUpdate = single.thisUpdate;
  if (thisUpdate.getTime() > at.getTime() + SKEW_MS) throw new EvidenceProblem('the OCSP response was produced after the validation time');
  const verdict: EvidenceVerdict = { status: 'unknown', method: 'ocsp', producedAt: thisUpdate.toISOString(), nextUpdate: time(single.nextUpdate) };
  const certStatus = single.certStatus as asn1js.AsnType & { idBlock: { tagNumber: number }; valueBlock: { value?: asn1js.AsnType[] } };
  const tag = certStatus.idBlock.tagNumber;
  if (tag === 0) verdict.status = 'good';
  else if (tag === 1) {
    verdict.status = 'revoked';
    const [revocationTime, reason] = certStatus.valueBlock.value ?? [];
    verdict.revokedAt = revocationTime instanceof asn1js.GeneralizedTime ? revocationTime.toDate().toISOString() : undefined;
    const reasonValue = (reason as asn1js.Constructed | undefined)?.valueBlock?.value?.[0];
    if (reasonValue instanceof asn1js.Enumerated) verdict.reason = REASONS[reasonValue.valueBlock.valueDec] ?? String(reasonValue.valueBlock.valueDec);
    if (!verdict.revokedAt) {
      // Constructed-as-implicit: pkijs leaves the [1] content raw; read the GeneralizedTime from its bytes.
      const raw = decodeBer(certStatus.valueBlock.value?.[0]?.toBER() ?? new ArrayBuffer(0));
      if (raw.offset !== -1 && raw.result instanceof asn1js.GeneralizedTime) verdict.revokedAt = raw.result.toDate().toISOString();
    }
  }
  return verdict;
}

/** What a CRL says about `cert`. Throws EvidenceProblem when it is not the issuer's or its signature fails. */
export function readCrl(der: Uint8Array, cert: Cert, issuer: Cert): EvidenceVerdict {
  return damagedIsAProblem('CRL', () => readCrlChecked(der, cert, issuer));
}

/** What a CRL says, kept per decoded CRL: a DSS lists one CRL for many certificates, decoded once. */
interface CrlSummary {
  issuer: string;
  tbs: Uint8Array;
  algorithm: pkijs.AlgorithmIdentifier;
  signature: Uint8Array;
  thisUpdate: Date;
  nextUpdate?: Date;
  /** Serial (hex, no leading zero octets) → revocation date and reason. */
  revoked: Map<string, { at: Date; reason?: string }>;
  /** Issuer certificate fingerprint → the signature verified with its key. */
  signatureBy: Map<string, boolean>;
}

const crlSummaries = new WeakMap<Uint8Array, CrlSummary>();


function summarizeCrl(der: Uint8Array): CrlSummary {
  let summary = crlSummaries.get(der);
  if (summary) return summary;
  const crl = fromDer(der, (schema) => new pkijs.CertificateRevocationList({ schema }), 'CRL');
  const revoked = new Map<string, { at: Date; reason?: string }>();
  for (const entry of crl.revokedCertificates ?? []) {
    const serial = serialOf(entry.userCertificate);
    if (revoked.has(serial)) continue;
    const reasonExt = entry.crlEntryExtensions?.extensions.find((e) => e.extnID === '2.5.29.21');
    const reason = reasonExt ? decodeBer(reasonExt.extnValue.valueBlock.valueHexView) : undefined;
    const code = reason && reason.offset !== -1 && reason.result instanceof asn1js.Enumerated ? reason.result.valueBlock.valueDec : undefined;
    revoked.set(serial, { at: entry.revocationDate.value, reason: code === undefined ? undefined : REASONS[code] ?? String(code) });
  }
  summary = {
    issuer: hex(crl.issuer.toSchema().toBER()),
    tbs: crl.tbsView,
    algorithm: crl.signatureAlgorithm,
    signature: new Uint8Array(crl.signatureValue.valueBlock.valueHexView),
    thisUpdate: crl.thisUpdate.value,
    nextUpdate: crl.nextUpdate?.value,
    revoked,
    signatureBy: new Map(),
  };
  crlSummaries.set(der, summary);
  return summary;
}

function readCrlChecked(der: Uint8Array, cert: Cert, issuer: Cert): EvidenceVerdict {
  const crl = summarizeCrl(der);
  if (crl.issuer !== hex(issuer.parsed.subject.toSchema().toBER()) || crl.issuer !== hex(cert.parsed.issuer.toSchema().toBER())) {
    throw new EvidenceProblem('the CRL was issued by another CA');
  }
  const key = issuer.x509.fingerprint256;
  if (!crl.signatureBy.has(key)) crl.signatureBy.set(key, verifiedBy(crl.tbs, crl.algorithm, crl.signature, issuer));
  if (!crl.signatureBy.get(key)) throw new EvidenceProblem('the CRL signature does not verify with the issuer certificate');
  const verdict: EvidenceVerdict = { status: 'good', method: 'crl', producedAt: crl.thisUpdate.toISOString(), nextUpdate: crl.nextUpdate ? crl.nextUpdate.toISOString() : null };
  const entry = crl.revoked.get(serialHex(cert));
  if (entry) {
    verdict.status = 'revoked';
    verdict.revokedAt = entry.at.toISOString();
    if (entry.reason) verdict.reason = entry.reason;
  }
  return verdict;
}

/** The certificate says no revocation check is needed (OCSP responders' own certificates). */
export const noCheckNeeded = (cert: Cert) => !!cert.parsed.extensions?.some((e) => e.extnID === OCSP_NO_CHECK);

/** OCSP responder URLs (AIA) and CRL distribution points (CDP) the certificate names. */
export function revocationPointers(cert: Cert): { ocsp: string[]; crl: string[] } {
  const x509 = cert.x509 as X509Certificate;
  const ocsp = [...(x509.infoAccess ?? '').matchAll(/OCSP - URI:(\S+)/g)].map((m) => m[1]!);
  const crl: string[] = [];
  const cdp = cert.parsed.extensions?.find((e) => e.extnID === '2.5.29.31')?.parsedValue as pkijs.CRLDistributionPoints | undefined;
  for (const point of cdp?.distributionPoints ?? []) {
    const names = Array.isArray(point.distributionPoint) ? point.distributionPoint : [];
    for (const name of names) if (name.type === 6 && typeof name.value === 'string') crl.push(name.value);
  }
  return { ocsp, crl };
}

/** An OCSP request for `cert` (SHA-1 CertID, as responders expect) with a fresh nonce. */
export function ocspRequest(cert: Cert, issuer: Cert, nonce: Uint8Array): Uint8Array {
  const sha1 = (bytes: Uint8Array) => new asn1js.OctetString({ valueHex: createHash('sha1').update(bytes).digest() });
  const certId = new pkijs.CertID({
    hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: '1.3.14.3.2.26', algorithmParams: new asn1js.Null() }),
    issuerNameHash: sha1(new Uint8Array(issuer.parsed.subject.toSchema().toBER())),
    issuerKeyHash: sha1(new Uint8Array(issuer.parsed.subjectPublicKeyInfo.subjectPublicKey.valueBlock.valueHexView)),
    serialNumber: cert.parsed.serialNumber,
  });
  const request = new pkijs.OCSPRequest();
  request.tbsRequest.requestList = [new pkijs.Request({ reqCert: certId })];
  request.tbsRequest.requestExtensions = [
    new pkijs.Extension({ extnID: OCSP_NONCE, extnValue: new asn1js.OctetString({ valueHex: nonce }).toBER() }),
  ];
  return new Uint8Array(request.toSchema(true).toBER());
}
