import { envelopeTask } from '../src/compute/task-envelope.js';
import { drawCommentsInMargin, prepareForPdf, type PreparedDocx } from '../src/documents/docx-pdf/index.js';
import type { DocumentFormat } from '../src/inputs/formats.js';
import type { TrackedChangesMode } from '../src/office/index.js';

/** Structured-clonable input of the `prepareDocx` task: the document before LibreOffice sees it. */
export interface PrepareDocxTaskInput {
  docx: Uint8Array;
  mode: TrackedChangesMode;
  /** Default docx. */
  format?: DocumentFormat;
}

/** Zip guard, scrub and tracked changes off the event loop (a zip bomb inflates up to the limit). */
export const prepareDocx = envelopeTask<PrepareDocxTaskInput, PreparedDocx>((input) => prepareForPdf(input.docx, input.format ?? 'docx', input.mode));

/** Structured-clonable input of the `drawCommentsInMargin` task: the PDF LibreOffice wrote with ExportNotes. */
export interface CommentsInMarginTaskInput {
  pdf: Uint8Array;
  keepAnnotations: boolean;
}

/** commentsInMargin: the PDF read, laid out and extended off the event loop (bounded by MARGIN_LIMITS). */
export const commentsInMargin = envelopeTask<CommentsInMarginTaskInput, Uint8Array>((input) => drawCommentsInMargin(input.pdf, { keepAnnotations: input.keepAnnotations }));
