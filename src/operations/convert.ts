import type { JobContext } from '../compute/fair-queue.js';
import type { PdfExportOptions } from '../documents/docx-pdf/index.js';
import type { Warning } from '../documents/warnings.js';
import { DomainError, ErrorCode } from '../errors/domain-error.js';
import { attachedFileMap, type AttachedFile } from '../documents/model/attached-files.js';
import { detectFormat } from '../inputs/detect-format.js';
import { OFFICE_FORMATS, type DocumentFormat } from '../inputs/formats.js';
import type { TrackedChangesMode } from '../office/index.js';
import type { RemoteImageSource } from '../documents/model/types.js';
import { asBuffer, documentBytes, remoteInputsOf, type DocumentInput, type OperationDeps } from './deps.js';

/** What POST /v1/convert takes: every office format LibreOffice renders, and Markdown/HTML it builds DOCX from. */
export const CONVERTIBLE_FORMATS: readonly DocumentFormat[] = [...OFFICE_FORMATS, 'md', 'html'];

/** Lists, quotes and HTML elements nested deeper than this are refused (422) rather than risk the stack. */
const MAX_NESTING_DEPTH = 100;

const MARKUP_TASKS = { md: 'markdownToDocx', html: 'htmlToDocx' } as const;
const markupTaskOf = (format: DocumentFormat) => (format === 'md' || format === 'html' ? MARKUP_TASKS[format] : undefined);

export interface ConvertInput {
  /** The document: uploaded bytes, or the JSON body's base64 / url (fetched here under the remote-input policy). */
  file: DocumentInput;
  filename?: string;
  /** The format the caller says the file is (checked against its content). */
  from?: DocumentFormat;
  to: 'pdf' | 'docx';
  trackedChanges?: TrackedChangesMode;
  pdf?: PdfExportOptions;
  /** md/html → docx: a DOCX whose styles replace the built-in ones. */
  reference?: Buffer;
  /** md/html: the files (images) the document refers to by relative name. */
  files?: AttachedFile[];
  /** Milliseconds from the start of the request until now (upload, parsing, auth): the conversion's receive stage. */
  receivedMs?: number;
}

export interface ConvertedDocument {
  document: Buffer;
  warnings: Warning[];
}

/**
 * Fetch images then render markup, its image step: the engine (on a worker) asks for the document's
 * http(s) images once it has read them, and they are fetched here, under the one remote-input policy
 * (src/inputs/remote-inputs.ts) shared with annotate. A refused or failed image is the engine's
 * IMAGE_NOT_EMBEDDED warning, naming the policy's reason; the alt text stands in.
 */
function markupImageFetcher(deps: OperationDeps): RemoteImageSource {
  const policy = remoteInputsOf(deps.config);
  // No image host allowed (the default): every URL gets the policy's one refusal, and the worker needs no port back.
  const disabled = policy.imagesDisabled();
  if (disabled) return { refusedAll: disabled.message, fetch: async (urls) => urls.map(() => ({ refused: disabled.message })) };
  const request = policy.imageRequest();
  return {
    async fetch(urls) {
      const byUrl = new Map((await request.fetch(urls)).map((result) => [result.url, result]));
      return urls.map((url) => {
        const result = byUrl.get(url)!;
        return 'error' in result ? { refused: result.error.message } : { bytes: new Uint8Array(result.bytes.buffer, result.bytes.byteOffset, result.bytes.byteLength) };
      });
    },
  };
}

/** Convert: an office document rendered to PDF, or markup (md/html) to DOCX (fetch images then render markup) and then, for to=pdf, rendered. */
export async function convertDocument(deps: OperationDeps, input: ConvertInput, job?: JobContext): Promise<ConvertedDocument> {
  const { to, pdf } = input;
  const file = await documentBytes(input.file, deps);
  const from = detectFormat(file, CONVERTIBLE_FORMATS, { declared: input.from, filename: input.filename });
  const markupTask = markupTaskOf(from);
  if (to === 'docx' && !markupTask) throw new DomainError(ErrorCode.VALIDATION_ERROR, `${from.toUpperCase()} to DOCX is not a conversion docproc makes; use to=pdf (docx comes from md or html).`, { details: [{ field: 'querystring.to', issue: 'must be pdf for this source' }] });
  if (to === 'docx' && pdf) throw new DomainError(ErrorCode.VALIDATION_ERROR, 'The PDF options apply to PDF output; this request asks for docx.', { details: [{ field: 'querystring.to', issue: 'PDF options given' }] });
  const sent = input.files ?? [];
  if (sent.length > 0 && !markupTask) throw new DomainError(ErrorCode.VALIDATION_ERROR, 'files are the images a Markdown or HTML document refers to; this document is not Markdown or HTML.', { details: [{ field: 'body.files', issue: 'only with md or html' }] });
  const files = sent.length > 0 ? [...attachedFileMap(sent)] : undefined;
  if (to === 'pdf') deps.assertCanRenderPdf();

  if (!markupTask) {
    const stages = input.receivedMs === undefined ? undefined : { receive: input.receivedMs };
    const document = await deps.renderPdf(file, { format: from, trackedChanges: input.trackedChanges ?? 'markup', pdf, stages, job });
    return { document, warnings: [] };
  }
  const result = await deps.workers[markupTask]({
    source: file,
    reference: input.reference,
    limits: { maxBytes: deps.config.limits.maxFileBytes, maxNestingDepth: MAX_NESTING_DEPTH },
    remoteImages: markupImageFetcher(deps),
    files,
  }, job);
  const docx = asBuffer(result.docx);
  const document = to === 'docx' ? docx : await deps.renderPdf(docx, { trackedChanges: 'markup', pdf, job });
  return { document, warnings: result.warnings };
}
