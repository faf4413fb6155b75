import type { JobContext } from '../compute/fair-queue.js';
import { requestAnchors, type PortableAnchor } from '../documents/pki/trust.js';
import type { DocxVerifyReport, VerifyReport } from '../documents/verify/index.js';
import { reportWarnings } from '../documents/warnings.js';
import { ErrorCode, validationError } from '../errors/domain-error.js';
import { detectFormat } from '../inputs/detect-format.js';
import { documentBytes, type DocumentInput, type OperationDeps } from './deps.js';

const VERIFIABLE_FORMATS = ['pdf', 'docx'] as const;

export interface VerifyInput {
  document: DocumentInput;
  /** PEM certificates the caller trusts for this request, besides the operator's anchors. */
  trustRoots?: string;
}

/** Verify: every signature of a PDF or a DOCX (told apart by content), against the operator's anchors and the caller's. */
export async function verifyDocument(deps: OperationDeps, input: VerifyInput, job?: JobContext): Promise<(VerifyReport | DocxVerifyReport) & { warnings: ReturnType<typeof reportWarnings> }> {
  const ownRoots = input.trustRoots === undefined ? [] : readTrustRoots(input.trustRoots);
  const data = await documentBytes(input.document, deps);
  const { trustRoots, anchors: operatorAnchors } = await deps.signing();
  const anchors = [...operatorAnchors, ...ownRoots];
  const maxBytes = deps.config.limits.maxFileBytes;
  const { fetch, ...revocationFetch } = deps.config.revocation;
  const report = detectFormat(data, VERIFIABLE_FORMATS, { unsupportedAs: ErrorCode.INVALID_FILE_FORMAT }) === 'docx'
    ? await deps.workers.verifyDocx({ docx: data, trustRoots, anchors, maxBytes }, job)
    : await deps.workers.verifyPdf({ pdf: data, trustRoots, anchors, maxBytes, ...(fetch ? { revocationFetch } : {}) }, job);
  return { ...report, warnings: reportWarnings(report) };
}

function readTrustRoots(text: string): PortableAnchor[] {
  const anchors = requestAnchors(text);
  if (typeof anchors === 'string') throw validationError(`trustRoots ${anchors}; send one or more PEM certificates.`, [{ field: 'trustRoots', issue: anchors }]);
  return anchors;
}
