import { warning, type Warning } from '../warnings.js';
import { createHash, type X509Certificate } from 'node:crypto';
import { DomainError, ErrorCode } from '../../errors/domain-error.js';
import { AUDIT_TRAIL_KEY, assertSignableRequest, auditTrailString, buildAuditRecord } from './audit.js';
import { assembleSignedData, buildSignedAttributes, signAttributes, signDigest, type CmsSigner } from '../pki/cms/build.js';
import type { SigningIdentity } from './identity.js';
import { pdfDict, pdfName, textString, type PdfDict, type PdfRef } from '../pdf/objects.js';
import type { AppearanceText } from './pdf/appearance.js';
import { IncrementalWriter } from '../pdf/writer.js';
import { RevisionEdits } from './pdf/edits.js';
import { signaturePlaceholders, writeWithByteRange, type SignaturePlaceholders } from './pdf/placeholder.js';
import { readPdfStructure } from './pdf/structure.js';
import { embedAppearanceImage, inspectAppearanceImage } from './pdf/appearance-image.js';
import { pdfDate } from './pdf/text.js';
import { requestTimestamp } from '../pki/tsa-client.js';
import { DOC_MDP_PERMISSION, type AuditRecord, type FieldAppearance, type RectAppearance, type SignOptions, type SignRequest, type SignResult } from './types.js';

/**
 * PAdES B-B (B-T with a TSA) signing as an incremental update: the original bytes stay
 * untouched, and one new revision carries the audit page(s), the audit-trail.json
 * attachment, the signature field and the signature, so the signature covers them all.
 * Every signature carries its audit record in its own dictionary (/DocprocAuditTrail); on an
 * already signed PDF that is the only place, so the earlier signatures see nothing but a new
 * signature field (no page, no attachment, no catalog change).
 */
export const AUDIT_FILE_NAME = 'audit-trail.json';
const AUDIT_DESCRIPTION = 'docproc signature audit trail';

/** Room for ECDSA length jitter and the unsigned-attribute wrapper of a timestamp. */
const CONTENTS_MARGIN = 64;

/**
 * Per certificate object, whose identity brings its chain (a caller's identity is new each request
 * and takes its entry with it; the service's own is kept by the worker, see pki/cms/build.ts), and
 * per operator-configured TSA URL.
 */
const cmsSizeCache = new WeakMap<X509Certificate, number>();
const tsaTokenSizeCache = new Map<string, number>();

/** Placeholder size from a trial signature over a dummy digest (+ measured timestamp room). */
async function contentsSize(signer: CmsSigner, options: SignOptions): Promise<number> {
  let size = cmsSizeCache.get(signer.certificate);
  if (size === undefined) {
    size = signDigest(Buffer.alloc(32), signer).cms.length;
    cmsSizeCache.set(signer.certificate, size);
  }
  if (options.tsa) {
    let token = tsaTokenSizeCache.get(options.tsa.url);
    if (token === undefined) {
      token = (await requestTimestamp(Buffer.alloc(512, 1), options.tsa)).length;
      tsaTokenSizeCache.set(options.tsa.url, token);
    }
    size += token + 256;
  }
  return size + CONTENTS_MARGIN;
}

/** The signature reference dictionary of a certification signature (ISO 32000-1 §12.8.1, Table 253). */
const docMdpReference = (permission: 1 | 2 | 3): PdfDict => pdfDict({
  Type: pdfName('SigRef'), TransformMethod: pdfName('DocMDP'),
  TransformParams: pdfDict({ Type: pdfName('TransformParams'), P: permission, V: pdfName('1.2') }),
});

function signatureDictionary(request: SignRequest, now: Date, placeholders: SignaturePlaceholders, audit: AuditRecord): PdfDict {
  const text = (value: string | undefined) => (value ? textString(value) : undefined);
  return pdfDict({
    Reference: request.certify ? [docMdpReference(DOC_MDP_PERMISSION[request.certify])] : undefined,
    Type: pdfName('Sig'), Filter: pdfName('Adobe.PPKLite'), SubFilter: pdfName('ETSI.CAdES.detached'),
    ByteRange: placeholders.byteRange, Contents: placeholders.contents, M: pdfDate(now),
    Name: text(request.signer.name), Reason: text(request.reason), Location: text(request.location), ContactInfo: text(request.contactInfo),
    Prop_Build: pdfDict({ App: pdfDict({ Name: pdfName('docproc') }) }),
    [AUDIT_TRAIL_KEY]: auditTrailString(audit),
  });
}

/** Adds the time since the previous lap to `stages[name]` (milliseconds), when stages are collected. */
class StageClock {
  private last = performance.now();

  constructor(private readonly stages: Record<string, number> | undefined) {}

  lap(name: string): void {
    if (!this.stages) return;
    const now = performance.now();
    this.stages[name] = (this.stages[name] ?? 0) + (now - this.last);
    this.last = now;
  }
}

const isFieldAppearance = (a: SignRequest['appearance']): a is FieldAppearance => !!a && typeof (a as FieldAppearance).field === 'string';

/**
 * Where the signature goes: the field the caller named; else the first unfilled placeholder a
 * two-step signer (@signpdf, for one) left for it, which readers otherwise fail on as a broken
 * signature; else a new field (visible at `appearance`'s box, or invisible). Returns the
 * reference of the signature dictionary.
 */
async function placeSignature(edits: RevisionEdits, writer: IncrementalWriter, request: SignRequest, text: AppearanceText, warnings: Warning[]): Promise<PdfRef> {
  const image = request.appearance?.image ? await embedAppearanceImage(request.appearance.image, writer) : undefined;
  if (isFieldAppearance(request.appearance)) return edits.fillSignatureField(request.appearance, text, image, warnings);
  const placeholders = edits.unfilledPlaceholders();
  if (!request.appearance && placeholders.length > 0) {
    const [first, ...others] = placeholders;
    if (others.length > 0) warnings.push(warning('SIGNATURE_FIELDS_UNFILLED', `The PDF has ${placeholders.length} unfilled signature placeholders; this signature filled "${first!.name}". Sign again with appearance.field to fill ${others.map((f) => `"${f.name}"`).join(', ')}.`, first!.name));
    return edits.fillSignatureField({ field: first!.name }, text);
  }
  if (placeholders.length > 0) {
    warnings.push(warning('SIGNATURE_FIELDS_UNFILLED', `The PDF has unfilled signature placeholders (${placeholders.map((f) => `"${f.name}"`).join(', ')}) that many readers report as broken signatures; sign into one with appearance.field.`));
  }
  return edits.addSignatureField(request.appearance as RectAppearance | undefined, text, image);
}

export async function signPdfReport(input: Buffer, request: SignRequest, identity: SigningIdentity, options: SignOptions = {}): Promise<SignResult> {
  assertSignableRequest(request);
  if (request.appearance?.image) inspectAppearanceImage(request.appearance.image);
  const clock = new StageClock(options.stages);
  const structure = readPdfStructure(input);
  clock.lap('read');
  if (structure.docMdpPermission === 1) {
    throw new DomainError(ErrorCode.UNPROCESSABLE_DOCUMENT, 'The PDF is certified with "no changes allowed" (DocMDP P=1); it cannot take another signature.');
  }
  if (structure.docMdpPermission === 2 && request.appearance && !isFieldAppearance(request.appearance)) {
    // Validators (pyHanko, our verify) refuse a visible signature field added after a P1/P2 certification: its appearance could cover certified content.
    throw new DomainError(ErrorCode.UNPROCESSABLE_DOCUMENT, 'The PDF is certified (DocMDP P=2): a new visible signature field would break its certification (validators refuse one, against the Sneaky Signature Attack). Sign without appearance (an invisible signature), or in an existing empty signature field (appearance.field).');
  }
  if (request.certify && (structure.signedFieldCount > 0 || structure.docMdpPermission !== undefined)) {
    throw new DomainError(ErrorCode.UNPROCESSABLE_DOCUMENT,
      'The PDF already carries a signature: a certification signature (certify) must be the first one in a document. Sign it without certify, or certify the unsigned original.');
  }
  const now = new Date(Math.floor((options.now ?? new Date()).getTime() / 1000) * 1000);
  const warnings: Warning[] = [];
  const alreadySigned = structure.signedFieldCount > 0 || structure.docMdpPermission !== undefined;
  const title = structure.title?.trim() || request.documentName || 'Untitled document';
  // The input is hashed once: the audit record takes its digest, the signature continues the same
  // hash over the update (its /ByteRange starts with the whole input).
  const inputHash = createHash('sha256').update(input);
  const audit = buildAuditRecord(request, input, identity, now, title, { ...options, receivedSha256: options.receivedSha256 ?? inputHash.copy().digest('hex') });
  clock.lap('hash input');

  const writer = new IncrementalWriter(structure.view);
  const edits = new RevisionEdits(structure, writer);
  const pdfA = structure.pdfA;
  const pdfALabel = pdfA && `PDF/A-${pdfA.part}${pdfA.conformance.toLowerCase()}`;
  if (request.certificate?.enabled !== false) {
    if (alreadySigned) {
      warnings.push(warning('AUDIT_PAGE_OMITTED', 'The PDF already carries signatures: no audit page was added, because a page added after signing is reported as a forbidden change by strict validators.'));
    } else if (pdfA && (pdfA.conformance === 'A' || pdfA.conformance === 'U' || pdfA.part === 4)) {
      // Our audit page is untagged (and carries no Unicode mapping guarantees for -u): it would break the claim.
      warnings.push(warning('AUDIT_PAGE_OMITTED', `The PDF claims ${pdfALabel} conformance: no audit page was added, because an untagged page would break it. The audit record is in the signature dictionary.`));
    } else {
      edits.addAuditPages(audit);
      clock.lap('audit page layout');
    }
  }
  // The record always goes into the new signature's dictionary (covered by the signature); the
  // first signature also attaches it as audit-trail.json where the document allows attachments.
  if (alreadySigned) {
    warnings.push(warning('AUDIT_RECORD_PLACEMENT', `The PDF already carries signatures: the audit record is in this signature's dictionary (/${AUDIT_TRAIL_KEY}, covered by the signature; verify reports it as auditTrail), not in a new attachment, which strict validators (pyHanko) count as a forbidden change for the earlier signatures, whose own validity this signing does not check.`));
  } else if (pdfA && pdfA.part < 3) {
    // PDF/A-1 forbids embedded files; PDF/A-2 allows only embedded PDF/A files.
    warnings.push(warning('AUDIT_RECORD_PLACEMENT', `The PDF claims ${pdfALabel} conformance, which does not allow a JSON attachment: ${AUDIT_FILE_NAME} was left out; the audit record is in the signature dictionary (/${AUDIT_TRAIL_KEY}).`));
  } else {
    edits.attachJson(AUDIT_FILE_NAME, AUDIT_DESCRIPTION, Buffer.from(JSON.stringify(audit, null, 2)), now);
  }

  const appearanceText = { signerName: request.signer.name, signedAt: now, reason: request.reason, location: request.location };
  const signatureRef = await placeSignature(edits, writer, request, appearanceText, warnings);
  if (request.certify) edits.certifyWith(signatureRef);
  clock.lap('attachment and field');
  await edits.finish();
  clock.lap('fonts');

  const signer: CmsSigner = { privateKey: identity.privateKey, certificate: identity.certificate, chain: identity.chain };
  const size = await contentsSize(signer, options);
  const placeholders = signaturePlaceholders(size);
  writer.set(signatureRef, signatureDictionary(request, now, placeholders, audit));
  const span = writeWithByteRange(writer, placeholders);
  const { pdf, contentsStart, contentsEnd } = span;
  clock.lap('write update');

  const digest = inputHash.update(pdf.subarray(input.length, contentsStart)).update(pdf.subarray(contentsEnd)).digest();
  clock.lap('hash update');
  const attributes = buildSignedAttributes(digest, identity.certificate);
  const signatureValue = signAttributes(attributes, identity.privateKey);
  clock.lap('sign');
  const timeStampToken = options.tsa ? await requestTimestamp(signatureValue, options.tsa) : undefined;
  const cms = assembleSignedData({ signer, attributes, signatureValue, timeStampToken });
  if (cms.length > size) {
    tsaTokenSizeCache.clear();
    throw new DomainError(ErrorCode.SIGNATURE_SPACE_EXCEEDED, 'The signature did not fit its reserved space (the timestamp authority changed its reply size); retry the request.');
  }
  pdf.write(cms.toString('hex').toUpperCase(), contentsStart + 1, 'latin1');
  clock.lap('cms');
  return { document: pdf, warnings, audit };
}

/** Signs a PDF; see signPdfReport for the warnings and the audit record. */
export async function signPdf(input: Buffer, request: SignRequest, identity: SigningIdentity, options: SignOptions = {}): Promise<Buffer> {
  return (await signPdfReport(input, request, identity, options)).document;
}
