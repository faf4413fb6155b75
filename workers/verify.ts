import { envelopeTask } from '../src/compute/task-envelope.js';
import * as engine from '../src/documents/verify/index.js';
import { revocationFetcher, type RevocationFetchPolicy } from '../src/documents/pki/revocation/fetcher.js';
import type { PortableAnchor } from '../src/documents/pki/trust.js';

/** Structured-clonable input of the `verifyPdf` worker task (output: VerifyReport, plain JSON). */
export interface VerifyPdfTaskInput {
  pdf: Uint8Array;
  trustRoots: string[];
  /** Anchors with their source (operator's and the request's own), before trustRoots. */
  anchors?: PortableAnchor[];
  /** ISO date; defaults to now. */
  now?: string;
  maxBytes?: number;
  /** Set when REVOCATION_FETCH is on: ask responders for certificates the PDF has no evidence for. */
  revocationFetch?: RevocationFetchPolicy;
}

export const verifyPdf = envelopeTask<VerifyPdfTaskInput, engine.VerifyReport>((input) => {
  const options = { trustRoots: input.trustRoots, anchors: input.anchors, now: input.now ? new Date(input.now) : undefined, maxBytes: input.maxBytes };
  if (!input.revocationFetch) return engine.verifyPdf(input.pdf, options);
  return engine.verifyPdfOnline(input.pdf, { ...options, fetchRevocation: revocationFetcher(input.revocationFetch) });
});

/** Structured-clonable input of the `verifyDocx` worker task (output: DocxVerifyReport, plain JSON). */
export interface VerifyDocxTaskInput {
  docx: Uint8Array;
  trustRoots: string[];
  anchors?: PortableAnchor[];
  /** ISO date; defaults to now. */
  now?: string;
  maxBytes?: number;
}

export const verifyDocx = envelopeTask<VerifyDocxTaskInput, engine.DocxVerifyReport>((input) =>
  engine.verifyDocx(input.docx, { trustRoots: input.trustRoots, anchors: input.anchors, now: input.now ? new Date(input.now) : undefined, maxBytes: input.maxBytes }),
);
