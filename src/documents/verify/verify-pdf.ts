import { createHash, type Hash } from 'node:crypto';
import { hashRanges, type HashName } from '../pki/algorithms.js';
import { DomainError, ErrorCode, fileTooLarge, invalidFile } from '../../errors/domain-error.js';
import type { Cert } from '../pki/certificates.js';
import { TrustStore } from '../pki/trust.js';
import { PdfView, revisionEnds, type RevisionEnd } from '../pdf/document.js';
import { DecodeBudget } from '../pdf/filters.js';
import { PdfRef } from '../pdf/objects.js';
import { findSignatureFields, walkPageTree, type SignatureFieldRef } from '../pdf/structure.js';
import { hasContentAfter } from './signature/byte-range.js';
import { examineSignature, type EvaluationContext, type SignatureFacts } from './signature/evaluate.js';
import { decideIndication, levelAllowed } from './signature/indication.js';
import { RULE } from './signature/change-rules.js';
import { SignedRevision, classifyModifications } from './signature/modifications.js';
import { resolveByFetching, revocationFromEvidence, type EmbeddedEvidence, type ValidationTime } from '../pki/revocation/check.js';
import { dssEvidence } from './dss-evidence.js';
import type { OnlineVerifyOptions, SignatureReport, SignerSummary, VerifyOptions, VerifyReport } from './types.js';

export const DEFAULT_MAX_PDF_BYTES = 50 * 1024 * 1024;
const MAX_SIGNATURE_FIELDS = 200;

function openFinal(data: Uint8Array, budget: DecodeBudget): PdfView {
  const header = Buffer.from(data.subarray(0, 1024)).indexOf('%PDF-');
  if (header < 0) throw invalidFile('The file is not a PDF (no %PDF- header); send a PDF document.');
  let view: PdfView;
  try {
    view = new PdfView(data, data.length, budget);
  } catch {
    throw invalidFile('The PDF is malformed beyond recovery (no readable cross-reference or catalog); re-save it and try again.');
  }
  if (view.encryptionError?.reason === 'password') {
    throw new DomainError(ErrorCode.ENCRYPTED_DOCUMENT, 'The PDF needs a password to open; send it without the password protection.');
  }
  if (view.encryptionError) {
    throw new DomainError(ErrorCode.ENCRYPTED_DOCUMENT, `The PDF is encrypted in a way that cannot be verified (${view.encryptionError.message}).`);
  }
  if (!view.catalog) throw invalidFile('The PDF has no readable document catalog; re-save it and try again.');
  return view;
}

const BYTE_RANGE_KEY = Buffer.from('/ByteRange');
/**
 * Node's Buffer.indexOf searches needles of up to 7 bytes linearly (memchr on the first byte) and
 * longer ones with Boyer–Moore–Horspool, about 6× slower over a 1 MB PDF (0.5 vs 0.08 ms): the key
 * is found by its first 7 bytes, the rest compared here. Same matches as indexOf of the whole key.
 */
const BYTE_RANGE_PREFIX = BYTE_RANGE_KEY.subarray(0, 7);
function indexOfByteRangeKey(bytes: Buffer, from: number): number {
  for (let at = bytes.indexOf(BYTE_RANGE_PREFIX, from); at >= 0; at = bytes.indexOf(BYTE_RANGE_PREFIX, at + 1)) {
    let i = BYTE_RANGE_PREFIX.length;
    while (i < BYTE_RANGE_KEY.length && bytes[at + i] === BYTE_RANGE_KEY[i]) i++;
    if (i === BYTE_RANGE_KEY.length) return at;
  }
  return -1;
}
const BYTE_RANGE_VALUE = /^\s*\[\s*(\d{1,12})\s+(\d{1,12})\s+(\d{1,12})\s+(\d{1,12})\s*\]/;
/** Digits, `[` and what the value pattern takes for whitespace (JS `\s` on latin1, and NUL): all that may come before the `]`. */
const inByteRangeValue = (b: number) => (b >= 0x30 && b <= 0x39) || b === 0x5b || b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09 || b === 0x0c || b === 0x0b || b === 0xa0 || b === 0x00;
const MAX_HIDDEN_SIGNATURES = 50;

/**
 * Byte ranges of filled signatures written anywhere in the file: [0 a b c] whose gap is a hex
 * string. A signature dictionary is never compressed (its /Contents gap lies in the file), so
 * this finds every signature ever written, whatever later updates did to the fields. Searched as
 * bytes: the whole file is never turned into a string.
 */
function signatureByteRangesInFile(data: Uint8Array): number[][] {
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.length);
  const found = new Map<string, number[]>();
  for (let at = indexOfByteRangeKey(bytes, 0); at >= 0; at = indexOfByteRangeKey(bytes, at + BYTE_RANGE_KEY.length)) {
    const from = at + BYTE_RANGE_KEY.length;
    // The array ends at the first byte that is not whitespace, a digit or `[` (each run is read once).
    let end = from;
    while (end < bytes.length && inByteRangeValue(bytes[end]!)) end++;
    if (bytes[end] !== 0x5d) continue;
    const m = BYTE_RANGE_VALUE.exec(bytes.toString('latin1', from, end + 1));
    if (!m) continue;
    const br = m.slice(1, 5).map(Number) as [number, number, number, number];
    const [start, gapStart, gapEnd, tail] = br;
    if (start !== 0 || gapStart >= gapEnd || gapEnd + tail > data.length) continue;
    if (data[gapStart] !== 0x3c || data[gapEnd - 1] !== 0x3e) continue;
    found.set(br.join(' '), br);
    if (found.size > MAX_SIGNATURE_FIELDS) break;
  }
  return [...found.values()];
}

/**
 * Signatures the file holds but the final document no longer shows (a later update dropped their
 * field from the form, or a /Prev chain skips their revision). Each is examined in the revision
 * it was made in; it cannot pass, because the document changed it away.
 */
function hiddenSignatures(data: Uint8Array, shown: SignatureFacts[], ctx: EvaluationContext, warnings: string[]): SignatureFacts[] {
  const known = new Set(shown.flatMap((f) => (f.report.byteRange ? [f.report.byteRange.join(' ')] : [])));
  const out: SignatureFacts[] = [];
  for (const br of signatureByteRangesInFile(data)) {
    const key = br.join(' ');
    if (known.has(key) || out.length >= MAX_HIDDEN_SIGNATURES) continue;
    known.add(key);
    const home = ctx.signedView(br[2]! + br[3]!);
    const field = home && findSignatureFields(home).find((f) => {
      const value = home.resolve(home.dict(f.value)?.get('ByteRange'));
      return Array.isArray(value) && value.join(' ') === key;
    });
    if (!home || !field) {
      warnings.push(`the file holds a signature (/ByteRange [${key}]) that no signature field of its revision shows`);
      continue;
    }
    const facts = examineSignature(field, ctx, home);
    if (!facts.report.signed) continue;
    facts.hidden = true;
    facts.report.errors.push('this signature is no longer part of the document: a later update removed its field or hid its revision');
    out.push(facts);
  }
  return out;
}

/**
 * SHA-256 over the file, hashed once: a signature's ranges start at byte 0, so the state after its
 * first range is kept (the longest one) and the report's whole-file digest continues from it instead
 * of hashing the file again.
 */
class SharedSha256 {
  private prefix?: { end: number; state: Hash };

  constructor(private readonly data: Uint8Array) {}

  digestRanges(hash: HashName, ranges: Array<[number, number]>): Buffer {
    const first = ranges[0];
    if (hash !== 'sha256' || !first || first[0] !== 0) return hashRanges(hash, this.data, ranges);
    const h = createHash('sha256').update(this.data.subarray(0, first[1]));
    if (!this.prefix || first[1] > this.prefix.end) this.prefix = { end: first[1], state: h.copy() };
    for (const [start, end] of ranges.slice(1)) h.update(this.data.subarray(start, end));
    return h.digest();
  }

  wholeFile(): string {
    const h = this.prefix ? this.prefix.state.copy() : createHash('sha256');
    return h.update(this.data.subarray(this.prefix?.end ?? 0)).digest('hex');
  }
}

function countRevisions(data: Uint8Array, ends: number): number {
  const linearized = /\/Linearized\b/.test(Buffer.from(data.subarray(0, 2048)).toString('latin1'));
  return Math.max(1, linearized && ends > 1 ? ends - 1 : ends);
}

const signerSummary = (s: SignatureReport): SignerSummary => ({
  name: s.signer?.commonName ?? null,
  email: s.signer?.email ?? null,
  organization: s.signer?.organization ?? null,
});

/** The views of every revision after `signedEnd`, oldest first, the final document last. */
function laterViews(ctx: EvaluationContext, signedEnd: number): Array<PdfView | undefined> {
  const views = ctx.revisions.filter((r) => r.marker > signedEnd && r.end < ctx.data.length).map((r) => ctx.signedView(r.end));
  views.push(ctx.final);
  return views;
}

function applyModifications(facts: SignatureFacts, ctx: EvaluationContext, certificationP: 1 | 2 | 3 | undefined): boolean {
  const { report, byteRange } = facts;
  if (!report.signed || byteRange.signedEnd === undefined) return true;
  const signedEnd = byteRange.signedEnd;
  if (!hasContentAfter(ctx.data, signedEnd)) return !facts.hidden;
  const signed = ctx.signedRevision(signedEnd);
  const later = laterViews(ctx, signedEnd);
  if (!signed || later.some((v) => v === undefined)) {
    report.modificationsAfter = 'other';
    report.errors.push(signed ? 'a revision after the signature cannot be read, so its changes cannot be checked' : 'the signed revision cannot be read, so later changes cannot be checked');
    return false;
  }
  const permission = certificationP ?? facts.lockPermission;
  const mods = classifyModifications(signed, later as PdfView[], { certification: permission, lock: facts.lock });
  if (facts.hidden) mods.level = 'other';
  if (ctx.final.startxref !== undefined && ctx.final.startxref < signedEnd) {
    mods.level = 'other';
    mods.findings.push('data was appended after the signed revision outside any cross-reference section');
  }
  report.modificationsAfter = mods.level;
  const allowed = levelAllowed(mods.level, permission);
  report.warnings.push(...mods.warnings);
  for (const finding of mods.findings) (allowed ? report.warnings : report.errors).push(`after signing: ${finding}`);
  if (report.docMdp) report.docMdp.respected = allowed;
  if (report.fieldMdp) report.fieldMdp.respected = !mods.findings.some((f) => f.endsWith(`[${RULE.fieldMdp}]`));
  return allowed;
}

function summaryReason(signed: SignatureReport[], timestamps: SignatureReport[], unsignedFields: string[]): string {
  if (signed.length === 0) {
    if (timestamps.length > 0) {
      return `The document has no signatures, only ${timestamps.length === 1 ? 'a document time-stamp' : `${timestamps.length} document time-stamps`}: a time-stamp proves when the document existed, not who signed it.`;
    }
    return unsignedFields.length ? 'The document has no signatures, only empty signature fields.' : 'The document has no signatures.';
  }
  const failing = signed.find((s) => s.indication !== 'TOTAL_PASSED');
  if (failing) {
    const why = failing.errors[0] ?? failing.subIndication ?? 'it did not pass validation';
    return `Signature "${failing.field}" is not valid (${failing.indication}${failing.subIndication ? `/${failing.subIndication}` : ''}): ${why}.`;
  }
  return signed.length === 1
    ? 'The signature is valid, trusted, and the document was not changed in a disallowed way after signing.'
    : `All ${signed.length} signatures are valid, trusted, and the document was not changed in a disallowed way after signing.`;
}

/**
 * Verifies every signature of a PDF: integrity of the signed bytes, the CMS signature, the
 * certificate chain against `trustRoots`, time-stamps, DocMDP and what changed after each signature.
 * Throws DomainError: FILE_TOO_LARGE, INVALID_FILE_FORMAT (not a PDF / unreadable), ENCRYPTED_DOCUMENT.
 */
function examineDocument(input: Uint8Array, options: VerifyOptions): Examination {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_PDF_BYTES;
  if (input.length > maxBytes) throw fileTooLarge(`The PDF is larger than ${Math.floor(maxBytes / 1024 / 1024)} MiB; send a smaller file.`);
  const data = input;
  const budget = new DecodeBudget();
  const final = openFinal(data, budget);
  const revisions = revisionEnds(data);
  const sha256 = new SharedSha256(data);
  const views = new Map<number, PdfView | undefined>();
  const indexed = new Map<number, SignedRevision | undefined>();
  const ctx: EvaluationContext = {
    data,
    final,
    revisions,
    trust: TrustStore.forVerification(options.trustRoots, options.anchors),
    now: options.now ?? new Date(),
    signedView: (end) => {
      if (!views.has(end)) {
        let view: PdfView | undefined;
        try {
          view = end === data.length ? final : new PdfView(data, end, budget);
        } catch {
          view = undefined;
        }
        views.set(end, view);
      }
      return views.get(end);
    },
    digestRanges: (hash, ranges) => sha256.digestRanges(hash, ranges),
    signedRevision: (end) => {
      if (!indexed.has(end)) {
        const view = ctx.signedView(end);
        indexed.set(end, view && new SignedRevision(view));
      }
      return indexed.get(end);
    },
  };

  const allFields = findSignatureFields(final);
  const fields = allFields.slice(0, MAX_SIGNATURE_FIELDS);
  const { distinct, sharedBy } = distinctSignatureValues(fields);
  const examined = distinct.map((field) => examineSignature(field, ctx));
  for (const facts of examined) {
    const others = sharedBy.get(facts.report.field);
    if (others) facts.report.warnings.push(`this signature dictionary is also the value of field${others.length > 1 ? 's' : ''} ${others.map((n) => `"${n}"`).join(', ')}: one signature, reported once`);
  }
  const warnings = [...final.recovery];
  const tooMany = allFields.length > fields.length
    ? `The document has ${allFields.length} signature fields; only the first ${MAX_SIGNATURE_FIELDS} were checked, so it is not reported valid.`
    : undefined;
  if (tooMany) warnings.push(tooMany);
  const facts = examined.filter((f) => f.report.signed);
  const hidden = hiddenSignatures(data, facts, ctx, warnings);
  if (hidden.length > 0) warnings.push(`${hidden.length} signature(s) in the file are not shown by the final document (their fields were removed or their revisions skipped by a later update)`);
  facts.push(...hidden);
  const unsignedFields = examined.filter((f) => !f.report.signed).map((f) => f.report.field);
  facts.sort((a, b) => (a.byteRange.signedEnd ?? Infinity) - (b.byteRange.signedEnd ?? Infinity));
  const certification = facts.find((f) => f.report.docMdp && f.report.signed)?.report.docMdp?.permission;
  attachArchivePoe(facts);
  attachRevocation(facts, final, ctx.now);
  return { data, final, revisions, ctx, facts, warnings, tooMany, unsignedFields, certification, sha256 };
}

/** Fields whose /V is the same signature dictionary object hold one signature (EU DSS reports it once). */
function distinctSignatureValues(fields: SignatureFieldRef[]): { distinct: SignatureFieldRef[]; sharedBy: Map<string, string[]> } {
  const firstByValue = new Map<number, SignatureFieldRef>();
  const sharedBy = new Map<string, string[]>();
  const distinct: SignatureFieldRef[] = [];
  for (const field of fields) {
    const num = field.value instanceof PdfRef ? field.value.num : undefined;
    const first = num === undefined ? undefined : firstByValue.get(num);
    if (!first) {
      if (num !== undefined) firstByValue.set(num, field);
      distinct.push(field);
    } else sharedBy.set(first.name, [...(sharedBy.get(first.name) ?? []), field.name]);
  }
  return { distinct, sharedBy };
}

/** What examining the file found, before the verdicts (revocation may still be fetched). */
interface Examination {
  data: Uint8Array;
  final: PdfView;
  revisions: readonly RevisionEnd[];
  ctx: EvaluationContext;
  facts: SignatureFacts[];
  warnings: string[];
  tooMany: string | undefined;
  unsignedFields: string[];
  certification: 1 | 2 | 3 | undefined;
  sha256: SharedSha256;
}

/**
 * The validation time of a signature's revocation evidence (ETSI EN 319 102-1 §5.2.5): its proof of
 * existence — its own trusted time-stamp, else the earliest trusted document time-stamp after it —
 * when it has one, else now. The signing time a signature claims is not proof: a signer whose
 * certificate was revoked could claim a time before the revocation.
 */
function signatureValidationTime(fact: SignatureFacts, now: Date): ValidationTime {
  const ts = fact.report.timestamp;
  if (fact.report.kind !== 'documentTimestamp' && ts?.valid && ts.intact && ts.trusted && ts.time) return { at: new Date(ts.time), basis: 'the time of the signature time-stamp' };
  if (fact.archivePoe) return { at: fact.archivePoe, basis: 'the time of the first document time-stamp after the signature' };
  if (fact.report.kind === 'documentTimestamp' && ts?.time) return { at: new Date(ts.time), basis: 'the time of this time-stamp' };
  return { at: now, basis: 'now (no time-stamp proves when the signature existed)' };
}

/** Revocation of each trusted signer chain from the evidence the PDF carries (DSS, CMS archival). */
function attachRevocation(facts: SignatureFacts[], final: PdfView, now: Date): void {
  const dss = dssEvidence(final);
  for (const fact of facts) {
    if (!fact.chain || !fact.report.trusted) continue;
    const archived = fact.cms?.archivedRevocation;
    const evidence: EmbeddedEvidence[] = [...(dss ? [dss] : []), ...(archived ? [{ source: 'cms' as const, ...archived }] : [])];
    fact.revocation = revocationFromEvidence(fact.chain, true, evidence, signatureValidationTime(fact, now));
    fact.report.revocation = fact.revocation.entries;
    const ts = fact.report.timestamp;
    if (fact.timestampChain?.trusted && ts?.time) {
      // A time-stamp unit is judged at the time of its token (a deliberate choice, see README).
      fact.timestampRevocation = revocationFromEvidence(fact.timestampChain.chain, true, evidence, { at: new Date(ts.time), basis: 'the time of the signature time-stamp' });
      ts.revocation = fact.timestampRevocation.entries;
    }
  }
}

/** What B-LT validation data is gathered for: each signature's /Contents and certificates. */
export interface SignatureMaterial {
  field: string;
  contents: Uint8Array;
  /** Signer first; ends at the trust anchor when trusted. */
  chain: Cert[];
  trusted: boolean;
  /** The CMS's other certificates and those of its time-stamp token. */
  otherCerts: Cert[];
  /** The signature time-stamp unit's chain, when the signature has one that is trusted. */
  timestampChain?: Cert[];
  /** Certificates of the trusted chains whose revocation the document's own evidence does not settle. */
  unsettled: Cert[];
}

/** The signatures of a PDF with their certificates, as the verifier reads them (no verdicts). */
export function signatureMaterial(input: Uint8Array, options: VerifyOptions): SignatureMaterial[] {
  const { facts } = examineDocument(input, options);
  return facts.flatMap((fact) => (fact.contents && fact.chain ? [{
    field: fact.report.field,
    contents: fact.contents,
    chain: fact.chain,
    trusted: fact.report.trusted,
    otherCerts: [...(fact.cms?.certificates ?? []), ...(fact.timestampCerts ?? [])],
    timestampChain: fact.timestampChain?.trusted ? fact.timestampChain.chain : undefined,
    unsettled: [...(fact.revocation?.unresolved ?? []), ...(fact.timestampRevocation?.unresolved ?? [])].map((u) => u.cert),
  }] : []));
}

/**
 * Verifies every signature of a PDF with the revocation evidence the file carries: certificates it
 * has none for are reported `notChecked` (see verifyPdfOnline to ask their responders).
 */
export function verifyPdf(input: Uint8Array, options: VerifyOptions): VerifyReport {
  return conclude(examineDocument(input, options));
}

/** verifyPdf, asking OCSP responders / CRL distribution points for certificates the PDF carries no evidence for. */
export async function verifyPdfOnline(input: Uint8Array, options: OnlineVerifyOptions): Promise<VerifyReport> {
  const examination = examineDocument(input, options);
  if (options.fetchRevocation) {
    for (const fact of examination.facts) {
      if (fact.revocation?.unresolved.length) {
        await resolveByFetching(fact.revocation, options.fetchRevocation, examination.ctx.now);
        fact.report.revocation = fact.revocation.entries;
      }
      if (fact.timestampRevocation?.unresolved.length && fact.report.timestamp) {
        await resolveByFetching(fact.timestampRevocation, options.fetchRevocation, examination.ctx.now);
        fact.report.timestamp.revocation = fact.timestampRevocation.entries;
      }
    }
  }
  return conclude(examination);
}

/**
 * A trusted, intact document time-stamp (B-LTA) proves every revision before it existed at its time:
 * each earlier signature gets the earliest such time as proof of existence.
 */
function attachArchivePoe(facts: SignatureFacts[]): void {
  const stamps = facts.filter((f) => f.report.kind === 'documentTimestamp' && f.report.intact && f.report.cryptoValid && f.report.trusted && f.report.timestamp?.time && f.byteRange.signedEnd !== undefined);
  for (const fact of facts) {
    const end = fact.byteRange.signedEnd;
    if (end === undefined) continue;
    const times = stamps.filter((s) => s !== fact && s.byteRange.signedEnd! > end).map((s) => new Date(s.report.timestamp!.time!).getTime());
    if (times.length) fact.archivePoe = new Date(Math.min(...times));
  }
}

/**
 * A file that display readers could read otherwise than we did (documents/pdf `ambiguities`) is
 * judged on no reading: every signature is TOTAL_FAILED/FORMAT_FAILURE.
 */
function refuseAmbiguousReading(facts: SignatureFacts[], ctx: EvaluationContext, warnings: string[]): void {
  const views = [ctx.final, ...facts.map((f) => (f.byteRange.signedEnd === undefined ? undefined : ctx.signedView(f.byteRange.signedEnd)))];
  const problems = [...new Set(views.flatMap((view) => (view ? view.ambiguities : [])))];
  if (problems.length === 0) return;
  const message = `the file can be read in more than one way (${problems.slice(0, 3).join('; ')}${problems.length > 3 ? '; …' : ''}): poppler, qpdf or pdf.js may show other content than was checked`;
  warnings.push(message);
  for (const { report } of facts) {
    if (!report.signed) continue;
    report.indication = 'TOTAL_FAILED';
    report.subIndication = 'FORMAT_FAILURE';
    report.errors.unshift(message);
  }
}

function conclude({ data, final, revisions, ctx, facts, warnings, tooMany, unsignedFields, certification, sha256 }: Examination): VerifyReport {
  for (const fact of facts) {
    const allowed = applyModifications(fact, ctx, certification);
    decideIndication(fact, allowed, ctx.now);
  }
  refuseAmbiguousReading(facts, ctx, warnings);

  const all = facts.map((f) => f.report);
  const signed = all.filter((s) => s.kind !== 'documentTimestamp');
  const timestamps = all.filter((s) => s.kind === 'documentTimestamp');
  const lastIndex = facts.findLastIndex((f) => f.report.kind !== 'documentTimestamp');
  const last = facts[lastIndex];
  const modifiedAfterLastSignature =
    !!last && (last.report.modificationsAfter !== 'none' || last.byteRange.signedEnd === undefined || hasContentAfter(data, last.byteRange.signedEnd));
  const allPassed = signed.length > 0 && signed.every((s) => s.indication === 'TOTAL_PASSED');
  const valid = allPassed && !tooMany;
  return {
    valid,
    reason: allPassed && tooMany ? tooMany : summaryReason(signed, timestamps, unsignedFields),
    signer: last ? signerSummary(last.report) : null,
    signers: signed.map(signerSummary),
    document: {
      format: 'pdf',
      pages: walkPageTree(final).pages.length,
      sha256: sha256.wholeFile(),
      revisions: countRevisions(data, revisions.length),
      signatureCount: signed.length,
      timestampCount: timestamps.length,
      modifiedAfterLastSignature,
      warnings,
    },
    signatures: signed,
    timestamps,
    unsignedFields,
  };
}
