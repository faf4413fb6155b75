import { envelopeTask } from '../src/compute/task-envelope.js';
import { prepareDocxForPdf, type PreparedDocx } from '../src/documents/docx-pdf/index.js';
import type { TrackedChangesMode } from '../src/office/index.js';

/** Structured-clonable input of the `prepareDocx` task: the DOCX before LibreOffice sees it. */
export interface PrepareDocxTaskInput {
  docx: Uint8Array;
  mode: TrackedChangesMode;
}

/** Zip guard, scrub and tracked changes off the event loop (a zip bomb inflates up to the limit). */
export const prepareDocx = envelopeTask<PrepareDocxTaskInput, PreparedDocx>((input) => prepareDocxForPdf(input.docx, input.mode));
