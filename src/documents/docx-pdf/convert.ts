import type { ConvertToPdfOptions } from '../../office/office-pool.js';
import type { TrackedChangesMode } from '../../office/index.js';
import type { ConversionStages } from '../../office/stages.js';
import type { JobContext } from '../../compute/fair-queue.js';
import { prepareDocxForPdf, type PreparedDocx } from './prepare.js';

/** The part of OfficePool this engine needs (lets tests and other callers pass a stand-in). */
export interface PdfConverter {
  convertToPdf(input: Buffer, options?: ConvertToPdfOptions): Promise<Buffer>;
}

/** Runs prepareDocxForPdf; the service runs it on a worker thread, tests may run it in place. */
export type DocxPreparer = (input: Buffer, mode: TrackedChangesMode, job?: JobContext) => Promise<PreparedDocx>;

export interface DocxToPdfOptions {
  trackedChanges?: TrackedChangesMode;
  /** Filled in with the time of each stage (see office/stages.ts). */
  stages?: ConversionStages;
  /** Where the package is read and rewritten; default: in this thread. */
  prepare?: DocxPreparer;
  /** Whose conversion this is, for fair queueing; its signal drops the job when the caller has gone. */
  job?: JobContext;
}

const WORD_2007_FILTER = 'MS Word 2007 XML';
const prepareInPlace: DocxPreparer = async (input, mode) => prepareDocxForPdf(input, mode);

/**
 * Converts a DOCX to PDF in a warm LibreOffice. The package is read once (prepare.ts): guards,
 * scrub, tracked changes resolved in the OOXML for `accept`/`reject` (`markup` shows them), and
 * what LibreOffice must refresh; a document needing nothing is loaded read-only.
 * Throws AppError: 400 INVALID_FILE_FORMAT (not a DOCX), 422 for zip bombs / encrypted /
 * unopenable documents, and the pool's 503/504/502.
 */
export async function convertDocxToPdf(pool: PdfConverter, input: Buffer, options: DocxToPdfOptions = {}): Promise<Buffer> {
  const { stages } = options;
  const prepared = await (options.prepare ?? prepareInPlace)(input, options.trackedChanges ?? 'markup', options.job);
  if (stages) {
    stages.guards = (stages.guards ?? 0) + prepared.timings.guards;
    if (prepared.timings.changes !== undefined) stages.changes = (stages.changes ?? 0) + prepared.timings.changes;
  }
  const docx = prepared.rewritten ? Buffer.from(prepared.rewritten.buffer, prepared.rewritten.byteOffset, prepared.rewritten.byteLength) : input;
  return pool.convertToPdf(docx, { trackedChanges: 'markup', loadFilter: WORD_2007_FILTER, inputExtension: 'docx', work: prepared.work, stages, job: options.job });
}
