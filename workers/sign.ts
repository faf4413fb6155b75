import { envelopeTask } from '../src/compute/task-envelope.js';
import { assertCertificateCurrent, fromPortable, parsePkcs12, type PortableIdentity, type SigningIdentity } from '../src/documents/sign/identity.js';
import { signPdfReport } from '../src/documents/sign/sign-pdf.js';
import { signDocx } from '../src/documents/sign/docx/sign-docx.js';
import type { SignOptions, SignRequest } from '../src/documents/sign/types.js';

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
}

export interface SignTaskOutput {
  document: Uint8Array;
  warnings: string[];
}

/** The caller's PKCS#12 (refused when its certificate is not valid now) or the service identity. */
export function identityFor(input: Pick<SignTaskInput, 'identity' | 'p12'>, now = new Date()): SigningIdentity {
  if (!input.p12) return fromPortable(input.identity);
  const identity = parsePkcs12(input.p12.data, input.p12.passphrase);
  assertCertificateCurrent(identity.certificate, now);
  return identity;
}

const asBuffer = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

export const signPdfTask = envelopeTask<SignTaskInput, SignTaskOutput>(async (input) => {
  const options: SignOptions = { tsa: input.tsa, receivedSha256: input.receivedSha256 };
  const result = await signPdfReport(asBuffer(input.document), input.request, identityFor(input), options);
  return { document: new Uint8Array(result.document.buffer, result.document.byteOffset, result.document.byteLength), warnings: result.warnings };
});

/** DOCX stays DOCX with an OOXML package signature; same input and output as signPdfTask. */
export const signDocxTask = envelopeTask<SignTaskInput, SignTaskOutput>(async (input) => {
  const options: SignOptions = { tsa: input.tsa, receivedSha256: input.receivedSha256 };
  const result = await signDocx(asBuffer(input.document), input.request, identityFor(input), options);
  return { document: new Uint8Array(result.document.buffer, result.document.byteOffset, result.document.byteLength), warnings: result.warnings };
});
