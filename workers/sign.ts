import { warning, type Warning } from '../src/documents/warnings.js';
import { envelopeTask } from '../src/compute/task-envelope.js';
import { assertCertificateCurrent, fromPortable, parsePkcs12, type PortableIdentity, type SigningIdentity } from '../src/documents/sign/identity.js';
import { signPdfReport } from '../src/documents/sign/sign-pdf.js';
import { signDocx } from '../src/documents/sign/docx/sign-docx.js';
import type { SignOptions, SignRequest } from '../src/documents/sign/types.js';
import { addDocumentTimestamp, addValidationData, type SignatureLevel } from '../src/documents/sign/ltv.js';
import { revocationFetcher, type RevocationFetchPolicy } from '../src/documents/pki/revocation/fetcher.js';
import { ErrorCode, DomainError } from '../src/errors/domain-error.js';
import type { PortableAnchor } from '../src/documents/pki/trust.js';

/** Structured-clonable input of the `signPdfTask` and `signDocxTask` worker tasks. */
export interface SignTaskInput {
  document: Uint8Array;
  request: SignRequest;
  /** The service identity (toPortable(loadSigningIdentity(...))). */
  identity: PortableIdentity;
  /** A caller's own PKCS#12 for this request only; replaces `identity`. */
  p12?: { data: Uint8Array; passphrase: string };
  tsa?: { url: string; timeoutMs?: number; allowPrivateAddresses?: boolean };
  /** SHA-256 hex of what the caller sent, when the route converted it first (DOCX → PDF). */
  receivedSha256?: string;
  /** PAdES level to reach: B-LT adds validation data, B-LTA also a document time-stamp (PDF only). */
  level?: SignatureLevel;
  /** Validation data (B-LT, B-LTA): trust anchors to build chains, and how to reach responders (unset: REVOCATION_FETCH is off). */
  ltv?: { trustRoots: string[]; anchors?: PortableAnchor[]; fetch?: RevocationFetchPolicy };
}

/** Input of `extendPdfTask`: raise an already signed PDF to B-LT or B-LTA without signing it again. */
export interface ExtendTaskInput {
  document: Uint8Array;
  level: 'B-LT' | 'B-LTA';
  ltv: { trustRoots: string[]; anchors?: PortableAnchor[]; fetch?: RevocationFetchPolicy };
  tsa?: { url: string; timeoutMs?: number; allowPrivateAddresses?: boolean };
}

export interface SignTaskOutput {
  document: Uint8Array;
  warnings: Warning[];
}

/** The caller's PKCS#12 (refused when its certificate is not valid now) or the service identity. */
export function identityFor(input: Pick<SignTaskInput, 'identity' | 'p12'>, now = new Date()): SigningIdentity {
  if (!input.p12) return fromPortable(input.identity);
  const identity = parsePkcs12(input.p12.data, input.p12.passphrase);
  assertCertificateCurrent(identity.certificate, now);
  return identity;
}

const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

const asBytes = (buffer: Buffer) => new Uint8Array(buffer.buffer, buffer.byteOffset, buffer.byteLength);

/** Adds B-LT validation data and, for B-LTA, the document time-stamp. */
async function raiseLevel(document: Buffer, level: 'B-LT' | 'B-LTA', input: Pick<ExtendTaskInput, 'ltv' | 'tsa'>, warnings: Warning[]): Promise<Buffer> {
  // One fetcher per operation: it carries the operation's outbound budget and deadline.
  const fetcher = input.ltv.fetch ? revocationFetcher(input.ltv.fetch) : undefined;
  const lt = await addValidationData(document, { trustRoots: input.ltv.trustRoots, anchors: input.ltv.anchors, fetchRevocation: fetcher });
  const budgetNote = fetcher?.budgetNote();
  warnings.push(...(budgetNote ? [warning('VALIDATION_DATA_INCOMPLETE', budgetNote)] : []), ...lt.warnings);
  if (level === 'B-LT') return lt.document;
  if (!input.tsa) throw new DomainError(ErrorCode.SIGNING_ERROR, 'B-LTA needs a time-stamp authority (TSA_URL) for its document time-stamp; this service has none.');
  return addDocumentTimestamp(lt.document, input.tsa);
}

export const signPdfTask = envelopeTask<SignTaskInput, SignTaskOutput>(async (input) => {
  const options: SignOptions = { tsa: input.level === 'B-B' ? undefined : input.tsa, receivedSha256: input.receivedSha256 };
  const result = await signPdfReport(asBuffer(input.document), input.request, identityFor(input), options);
  let document = result.document;
  if ((input.level === 'B-LT' || input.level === 'B-LTA') && input.ltv) document = await raiseLevel(document, input.level, { ltv: input.ltv, tsa: input.tsa }, result.warnings);
  return { document: asBytes(document), warnings: result.warnings };
});

export const extendPdfTask = envelopeTask<ExtendTaskInput, SignTaskOutput>(async (input) => {
  const warnings: Warning[] = [];
  const document = await raiseLevel(asBuffer(input.document), input.level, input, warnings);
  return { document: asBytes(document), warnings };
});

/** DOCX stays DOCX with an OOXML package signature; same input and output as signPdfTask. */
export const signDocxTask = envelopeTask<SignTaskInput, SignTaskOutput>(async (input) => {
  const options: SignOptions = { tsa: input.tsa, receivedSha256: input.receivedSha256 };
  const result = await signDocx(asBuffer(input.document), input.request, identityFor(input), options);
  return { document: new Uint8Array(result.document.buffer, result.document.byteOffset, result.document.byteLength), warnings: result.warnings };
});
