import type { JobContext } from '../compute/fair-queue.js';
import { collectRemoteImageUrls, type AnnotateField, type AnnotateOptions } from '../documents/annotate/index.js';
import type { PdfExportOptions } from '../documents/docx-pdf/index.js';
import type { Warning } from '../documents/warnings.js';
import { DomainError, ErrorCode, validationError } from '../errors/domain-error.js';
import { detectFormat } from '../inputs/detect-format.js';
import { safeFetch } from '../inputs/safe-fetch.js';
import { asBuffer, documentBytes, type DocumentInput, type OperationDeps } from './deps.js';

const TEMPLATE_FORMATS = ['docx'] as const;

export interface AnnotateInput {
  template: DocumentInput;
  filename?: string;
  fields: AnnotateField[];
  data?: Record<string, unknown>;
  /** Image parts sent with the request, keyed `cid:<part name>`. */
  images: Record<string, Buffer>;
  options: AnnotateOptions;
  to: 'docx' | 'pdf';
  pdf?: PdfExportOptions;
}

export interface AnnotatedDocument {
  document: Buffer;
  warnings: Warning[];
}

/** Annotate: fetch the fields' remote images, fill the template on a worker, and render it for to=pdf. */
export async function annotateDocument(deps: OperationDeps, input: AnnotateInput, job?: JobContext): Promise<AnnotatedDocument> {
  if (input.pdf && input.to !== 'pdf') throw validationError('The PDF options apply to PDF output (to=pdf).', [{ field: 'querystring.to', issue: 'PDF options given' }]);
  // Before any work whose result would only be rendered.
  if (input.to === 'pdf') deps.assertCanRenderPdf();
  const template = await documentBytes(input.template, deps);
  detectFormat(template, TEMPLATE_FORMATS, { filename: input.filename, unsupportedAs: ErrorCode.INVALID_FILE_FORMAT });
  const images = { ...input.images, ...(await fetchRemoteImages(deps, collectRemoteImageUrls(input.fields))) };
  const result = await deps.workers.annotate({ template, fields: input.fields, data: input.data, images, options: input.options }, job);
  const docx = asBuffer(result.docx);
  const document = input.to === 'pdf' ? await deps.renderPdf(docx, { trackedChanges: 'markup', pdf: input.pdf, job }) : docx;
  return { document, warnings: result.warnings };
}

/** Fetches caller-given image URLs under the same SSRF rules as documents, when URLs are allowed. */
async function fetchRemoteImages(deps: OperationDeps, urls: string[]): Promise<Record<string, Buffer>> {
  if (urls.length === 0) return {};
  const policy = deps.config.urlInputs;
  if (!policy.allowed) {
    throw new DomainError(ErrorCode.URL_NOT_ALLOWED, 'Images by URL are disabled on this service (ALLOW_URL_INPUTS); send them as base64, data: URIs or multipart parts (cid:).');
  }
  const entries = await Promise.all(urls.map(async (url) => [url, await safeFetch(url, policy)] as const));
  return Object.fromEntries(entries);
}
