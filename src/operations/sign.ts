import { createHash } from 'node:crypto';
import type { JobContext } from '../compute/fair-queue.js';
import type { PdfExportOptions } from '../documents/docx-pdf/index.js';
import { describeCertificate, type SignRequest } from '../documents/sign/index.js';
import type { SignatureLevel } from '../documents/sign/ltv.js';
import type { Warning } from '../documents/warnings.js';
import { DomainError, ErrorCode, invalidFile, validationError } from '../errors/domain-error.js';
import { detectFormat } from '../inputs/detect-format.js';
import { asBuffer, documentBytes, type DocumentInput, type OperationDeps, type SigningSetup } from './deps.js';

const SIGNABLE_FORMATS = ['pdf', 'docx'] as const;

export interface SignInput {
  document: DocumentInput;
  /** The uploaded file's name: a hint for detection, and what the audit record calls the document. */
  filename?: string;
  request: SignRequest;
  /** The caller's own PKCS#12 for this request only. */
  p12?: { data: Buffer; passphrase: string };
  /** pdf (a DOCX is rendered first) or docx (an OOXML package signature). */
  to: 'pdf' | 'docx';
  level?: SignatureLevel;
  /** PDF options for rendering a DOCX before it is signed. */
  pdf?: PdfExportOptions;
}

export interface SignedDocument {
  document: Buffer;
  warnings: Warning[];
}

/**
 * Sign: a PDF as it is, a DOCX rendered to PDF first (then signed, the received bytes' hash in the
 * audit record) or signed as a package (to=docx); the time-stamp and validation-data policy of the
 * level asked for.
 */
export async function signDocument(deps: OperationDeps, input: SignInput, job?: JobContext): Promise<SignedDocument> {
  const document = await documentBytes(input.document, deps);
  const { to, level, pdf } = input;
  const isPdf = detectFormat(document, SIGNABLE_FORMATS, { filename: input.filename, unsupportedAs: ErrorCode.INVALID_FILE_FORMAT }) === 'pdf';
  if (to === 'docx' && isPdf) throw invalidFile('to=docx signs DOCX documents; this is a PDF (use to=pdf).');
  if (to === 'docx' && input.request.certify) throw validationError('certify makes a PDF certification signature (to=pdf); a DOCX package signature cannot certify.', [{ field: 'certify', issue: 'PDF only' }]);
  if (pdf && (isPdf || to === 'docx')) throw validationError('The PDF options apply when a DOCX is rendered to PDF before signing (to=pdf); this request renders nothing.', [{ field: 'querystring', issue: 'PDF options given' }]);
  if (level && to === 'docx') throw validationError('level applies to PDF signatures (to=pdf); a DOCX package signature has no PAdES level.', [{ field: 'level', issue: 'PDF only' }]);
  const setup = await deps.signing();
  const task = {
    document,
    request: input.request,
    identity: setup.portable,
    p12: input.p12,
    tsa: tsaFor(deps, level),
    level,
    ltv: level === 'B-LT' || level === 'B-LTA' ? ltvFor(deps, setup) : undefined,
  };
  if (to === 'docx') return signed(await deps.workers.signDocx(task, job));
  if (isPdf) return signed(await deps.workers.signPdf(task, job));
  const receivedSha256 = createHash('sha256').update(document).digest('hex');
  const rendered = await deps.renderPdf(document, { trackedChanges: 'markup', pdf, job });
  return signed(await deps.workers.signPdf({ ...task, document: rendered, receivedSha256 }, job));
}

/** Raise an already signed PDF to B-LT or B-LTA without signing it again. */
export async function extendSignature(deps: OperationDeps, input: { document: DocumentInput; level: 'B-LT' | 'B-LTA' }, job?: JobContext): Promise<SignedDocument> {
  const document = await documentBytes(input.document, deps);
  detectFormat(document, ['pdf'], { unsupportedAs: ErrorCode.INVALID_FILE_FORMAT });
  const task = { document, level: input.level, ltv: ltvFor(deps, await deps.signing()), tsa: tsaFor(deps, input.level) };
  return signed(await deps.workers.extendPdf(task, job));
}

/** The service's current signing certificate, as SuperDoc publishes it. */
export async function signingCertificate(deps: OperationDeps) {
  return describeCertificate((await deps.signing()).identity);
}

const signed = (result: { document: Uint8Array; warnings: Warning[] }): SignedDocument => ({ document: asBuffer(result.document), warnings: result.warnings });

/** The TSA, required by the levels that time-stamp. */
function tsaFor(deps: OperationDeps, level: SignatureLevel | undefined) {
  const url = deps.config.signing.tsaUrl;
  if (!url && (level === 'B-T' || level === 'B-LTA')) {
    throw new DomainError(ErrorCode.SIGNING_ERROR, `${level} needs a time-stamp authority, and this service has none (TSA_URL is not set).`);
  }
  return url ? { url, allowPrivateAddresses: deps.config.outboundAllowPrivateAddresses } : undefined;
}

/** B-LT's trust anchors, and how to fetch revocation data (only with REVOCATION_FETCH on). */
function ltvFor(deps: OperationDeps, { trustRoots, anchors }: Pick<SigningSetup, 'trustRoots' | 'anchors'>) {
  const { fetch: enabled, ...fetch } = deps.config.revocation;
  return { trustRoots, anchors, fetch: enabled ? fetch : undefined };
}
