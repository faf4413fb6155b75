import { warning, type Warning } from '../warnings.js';
import { createHash } from 'node:crypto';
import { DomainError, ErrorCode } from '../../errors/domain-error.js';
import { oneLine, type Cert } from '../pki/certificates.js';
import { revocationPointers } from '../pki/revocation/evidence.js';
import type { PortableAnchor } from '../pki/trust.js';
import { fetchEvidence, type RevocationFetcher } from '../pki/revocation/check.js';
import { signatureMaterial } from '../verify/verify-pdf.js';
import { PdfDict, PdfRef, pdfDict, pdfName, pdfStream, withEntries, type PdfValue } from '../pdf/objects.js';
import { IncrementalWriter } from '../pdf/writer.js';
import { RevisionEdits } from './pdf/edits.js';
import { signaturePlaceholders, signedBytes, writeWithByteRange } from './pdf/placeholder.js';
import { assertUnambiguous, readPdfStructure } from './pdf/structure.js';
import { requestTimestamp, type TsaOptions } from '../pki/tsa-client.js';

/**
 * PAdES B-LT and B-LTA (ETSI EN 319 142-1): validation data for every signature of the document
 * (certificates, OCSP responses, CRLs) in a document security store added by an incremental
 * update, then, for B-LTA, a document time-stamp over the whole file. Neither touches a signed
 * byte, so every earlier signature stays valid.
 */
export type SignatureLevel = 'B-B' | 'B-T' | 'B-LT' | 'B-LTA';

export interface LtvOptions {
  trustRoots: string[];
  /** Sourced anchors (trusted lists, the system store …), as verify uses them. */
  anchors?: PortableAnchor[];
  /**
   * Fetches OCSP responses and CRLs within one operation's budget (revocationFetcher); absent when
   * REVOCATION_FETCH is off: then only the revocation data the document carries is used, and a
   * certificate that names a responder but has none in the document makes the request fail (422).
   */
  fetchRevocation?: RevocationFetcher;
  now?: Date;
}

const fingerprint = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

interface DssContent {
  certs: Map<string, Buffer>;
  ocsps: Map<string, Buffer>;
  crls: Map<string, Buffer>;
  /** Per signature (key: upper-case SHA-1 of its /Contents): the fingerprints of its material. */
  vri: Map<string, { certs: string[]; ocsps: string[]; crls: string[] }>;
}

const publishesRevocation = (cert: Cert) => {
  const { ocsp, crl } = revocationPointers(cert);
  return ocsp.length + crl.length > 0;
};

async function gatherValidationData(pdf: Buffer, options: LtvOptions, warnings: Warning[]): Promise<DssContent> {
  const material = signatureMaterial(pdf, { trustRoots: options.trustRoots, anchors: options.anchors });
  if (!material.length) throw new DomainError(ErrorCode.UNPROCESSABLE_DOCUMENT, 'The PDF has no signature to add validation data (B-LT) for.');
  const now = options.now ?? new Date();
  const content: DssContent = { certs: new Map(), ocsps: new Map(), crls: new Map(), vri: new Map() };
  const fetched = new Map<string, Awaited<ReturnType<typeof fetchEvidence>>>();
  const missing: Cert[] = [];
  for (const signature of material) {
    const entry = { certs: [] as string[], ocsps: [] as string[], crls: [] as string[] };
    for (const cert of [...signature.chain, ...signature.otherCerts]) {
      const key = fingerprint(cert.der);
      content.certs.set(key, cert.der);
      if (!entry.certs.includes(key)) entry.certs.push(key);
    }
    content.vri.set(createHash('sha1').update(signature.contents).digest('hex').toUpperCase(), entry);
    // Only chains that end at a trusted root are worth an outbound request: any other chain is the
    // caller's to make up, with whatever responder URLs it likes.
    if (!signature.trusted) {
      warnings.push(warning('VALIDATION_DATA_INCOMPLETE', `The signature in field "${signature.field}" does not chain to a trusted root: its certificates were stored, but no revocation data was fetched for it and its validation data may not satisfy a verifier.`, signature.field));
      continue;
    }
    if (!options.fetchRevocation) {
      for (const cert of signature.unsettled) {
        if (publishesRevocation(cert)) missing.push(cert);
        else warnings.push(warning('VALIDATION_DATA_INCOMPLETE', `No revocation data was stored for "${oneLine(cert.x509.subject)}": the certificate names no OCSP responder or CRL.`));
      }
      continue;
    }
    // The signer's chain and the time-stamp unit's chain, each ending at its trust anchor.
    const chains = [signature.chain, ...(signature.timestampChain ? [signature.timestampChain] : [])];
    const pairs = chains.flatMap((chain) => chain.slice(0, -1).map((cert, i) => ({ cert, issuer: chain[i + 1]! })));
    for (const { cert, issuer } of pairs) {
      const key = fingerprint(cert.der);
      if (!fetched.has(key)) fetched.set(key, await fetchEvidence(cert, issuer, options.fetchRevocation, now, { useCache: false }));
      const evidence = fetched.get(key)!;
      if ('problems' in evidence) {
        warnings.push(warning('VALIDATION_DATA_INCOMPLETE', `No revocation data was stored for "${oneLine(cert.x509.subject)}": ${evidence.problems.join('; ')}.`));
        continue;
      }
      const der = Buffer.from(evidence.der);
      const ocsp = evidence.verdict.method === 'ocsp';
      (ocsp ? content.ocsps : content.crls).set(fingerprint(der), der);
      (ocsp ? entry.ocsps : entry.crls).push(fingerprint(der));
    }
  }
  if (missing.length) {
    const names = [...new Set(missing.map((cert) => `"${oneLine(cert.x509.subject)}"`))];
    throw new DomainError(ErrorCode.UNPROCESSABLE_DOCUMENT, `B-LT needs revocation data for ${names.slice(0, 3).join(', ')}${names.length > 3 ? ` and ${names.length - 3} more` : ''}, which the document does not carry, and this service fetches none (REVOCATION_FETCH is off). Ask the operator to turn REVOCATION_FETCH on, or send a document that already carries that revocation data.`);
  }
  return content;
}

/** Appends a revision whose catalog carries /DSS (merged with an existing store). */
function writeDss(pdf: Buffer, content: DssContent): Buffer {
  const structure = readPdfStructure(pdf);
  const { view } = structure;
  const writer = new IncrementalWriter(view);
  const refs = new Map<string, PdfRef>();
  const stream = (key: string, data: Buffer) => {
    let ref = refs.get(key);
    if (!ref) {
      ref = writer.allocate();
      writer.set(ref, pdfStream(pdfDict({}), data));
      refs.set(key, ref);
    }
    return ref;
  };
  const existing = view.dict(structure.catalog.get('DSS'));
  const existingRefs = (name: string) => (view.array(existing?.get(name)) ?? []).filter((item): item is PdfRef => item instanceof PdfRef);
  const list = (keys: Iterable<string>, data: Map<string, Buffer>) => [...keys].map((key) => stream(key, data.get(key)!));
  const certs = [...existingRefs('Certs'), ...list(content.certs.keys(), content.certs)];
  const ocsps = [...existingRefs('OCSPs'), ...list(content.ocsps.keys(), content.ocsps)];
  const crls = [...existingRefs('CRLs'), ...list(content.crls.keys(), content.crls)];
  const vri = new Map<string, PdfValue>(view.dict(existing?.get('VRI'))?.entries ?? []);
  for (const [key, entry] of content.vri) {
    vri.set(key, pdfDict({
      Cert: list(entry.certs, content.certs),
      OCSP: entry.ocsps.length ? list(entry.ocsps, content.ocsps) : undefined,
      CRL: entry.crls.length ? list(entry.crls, content.crls) : undefined,
    }));
  }
  const dssRef = writer.allocate();
  writer.set(dssRef, pdfDict({ Type: pdfName('DSS'), Certs: certs, OCSPs: ocsps, CRLs: crls, VRI: new PdfDict(vri) }));
  writer.set(structure.rootRef, withEntries(structure.catalog, { DSS: dssRef }));
  assertUnambiguous(view);
  return writer.write().bytes;
}

/** B-LT: stores the validation data of every signature of `pdf` in a new revision. */
export async function addValidationData(pdf: Buffer, options: LtvOptions): Promise<{ document: Buffer; warnings: Warning[] }> {
  const warnings: Warning[] = [];
  const content = await gatherValidationData(pdf, options, warnings);
  return { document: writeDss(pdf, content), warnings };
}

const TIMESTAMP_ROOM = 16_384;

/** B-LTA: a document time-stamp (ETSI.RFC3161) over the whole file, in a new revision. */
export async function addDocumentTimestamp(pdf: Buffer, tsa: TsaOptions): Promise<Buffer> {
  const structure = readPdfStructure(pdf);
  if (structure.docMdpPermission === 1) {
    throw new DomainError(ErrorCode.UNPROCESSABLE_DOCUMENT, 'The PDF is certified with "no changes allowed" (DocMDP P=1); it cannot take a document time-stamp.');
  }
  const writer = new IncrementalWriter(structure.view);
  const edits = new RevisionEdits(structure, writer);
  const signatureRef = edits.addSignatureField(undefined, { signerName: 'Document time-stamp', signedAt: new Date() });
  await edits.finish();
  const placeholders = signaturePlaceholders(TIMESTAMP_ROOM);
  writer.set(signatureRef, pdfDict({
    Type: pdfName('DocTimeStamp'), Filter: pdfName('Adobe.PPKLite'), SubFilter: pdfName('ETSI.RFC3161'), ByteRange: placeholders.byteRange, Contents: placeholders.contents,
  }));
  const span = writeWithByteRange(writer, placeholders);
  const token = await requestTimestamp(Buffer.concat(signedBytes(span)), tsa);
  if (token.length > TIMESTAMP_ROOM) throw new DomainError(ErrorCode.TIMESTAMP_AUTHORITY_FAILED, 'The time-stamp token is larger than the space reserved for it.');
  span.pdf.write(token.toString('hex').toUpperCase(), span.contentsStart + 1, 'latin1');
  return span.pdf;
}
