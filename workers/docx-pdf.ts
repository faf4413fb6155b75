import { envelopeTask } from '../src/compute/task-envelope.js';
import { prepareForPdf, type PreparedDocx } from '../src/documents/docx-pdf/index.js';
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
