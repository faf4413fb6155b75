import type { JobContext } from '../compute/fair-queue.js';
import { collectRemoteImageUrls, type AnnotateField, type AnnotateOptions } from '../documents/annotate/index.js';
import type { PdfExportOptions } from '../documents/docx-pdf/index.js';
import type { Warning } from '../documents/warnings.js';
import { ErrorCode, validationError } from '../errors/domain-error.js';
import { detectFormat } from '../inputs/detect-format.js';
import { asBuffer, documentBytes, remoteInputsOf, type DocumentInput, type OperationDeps } from './deps.js';

const TEMPLATE_FORMATS = ['docx'] as const;

export interface AnnotateInput {
  template: DocumentInput;
  filename?: string;
  fields: AnnotateField[];
  data?: Record<string, unknown>;
  /** `data` as JSON text instead (a large JSON body's, json-body.ts): handed to the worker as it is, parsed there. */
  dataJson?: Uint8Array;
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

/** Annotate: fetch images then fill (the template on a worker), and render it for to=pdf. */
export async function annotateDocument(deps: OperationDeps, input: AnnotateInput, job?: JobContext): Promise<AnnotatedDocument> {
  if (input.pdf && input.to !== 'pdf') throw validationError('The PDF options apply to PDF output (to=pdf).', [{ field: 'querystring.to', issue: 'PDF options given' }]);
  // Before any work whose result would only be rendered.
  if (input.to === 'pdf') deps.assertCanRenderPdf();
  const template = await documentBytes(input.template, deps);
  detectFormat(template, TEMPLATE_FORMATS, { filename: input.filename, unsupportedAs: ErrorCode.INVALID_FILE_FORMAT });
  const images = { ...input.images, ...(await fetchRemoteImages(deps, collectRemoteImageUrls(input.fields))) };
  // The data's JSON text is moved to the worker, not copied: its size costs the event loop nothing.
  const moved = input.dataJson && input.dataJson.byteOffset === 0 && input.dataJson.byteLength === input.dataJson.buffer.byteLength ? [input.dataJson.buffer as ArrayBuffer] : [];
  const result = await deps.workers.annotate({ template, fields: input.fields, data: input.data, dataJson: input.dataJson, images, options: input.options }, job, moved);
  const docx = asBuffer(result.docx);
  const document = input.to === 'pdf' ? await deps.renderPdf(docx, { trackedChanges: 'markup', pdf: input.pdf, job }) : docx;
  return { document, warnings: result.warnings };
}

/**
 * Fetch images then fill, its first step: the fields' image URLs, fetched under the one remote-input
 * policy (src/inputs/remote-inputs.ts: hosts, schemes, count, bytes, deadline) before the worker fills
 * the template. Annotate cannot leave an image out, so the first refusal is the answer: refusals by
 * rule or count before anything is fetched, then the first URL (in order) that could not be had.
 */
async function fetchRemoteImages(deps: OperationDeps, urls: string[]): Promise<Record<string, Buffer>> {
  if (urls.length === 0) return {};
  const request = remoteInputsOf(deps.config).imageRequest();
  const refusal = request.firstRefusal(urls);
  if (refusal) throw refusal;
  const images: Record<string, Buffer> = {};
  for (const result of await request.fetch(urls)) {
    if ('error' in result) throw result.error;
    images[result.url] = result.bytes;
  }
  return images;
}
