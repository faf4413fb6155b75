import type { ConvertToPdfOptions } from '../../office/office-pool.js';
import type { TrackedChangesMode } from '../../office/index.js';
import type { ConversionStages } from '../../office/stages.js';
import type { JobContext } from '../../compute/fair-queue.js';
import { csvSeparator } from '../../inputs/detect-format.js';
import { csvFilterOptions, OFFICE_IMPORTS, type DocumentFormat } from '../../inputs/formats.js';
import { drawCommentsInMargin } from './comments-in-margin.js';
import { prepareForPdf, type PreparedDocx } from './prepare.js';
import { pdfFilterData, type PdfExportOptions } from './pdf-options.js';

/** The part of OfficePool this engine needs (lets tests and other callers pass a stand-in). */
export interface PdfConverter {
  convertToPdf(input: Buffer, options?: ConvertToPdfOptions): Promise<Buffer>;
}

/** Runs drawCommentsInMargin; the service runs it on a worker thread, tests may run it in place. */
export type MarginDrawer = (pdf: Buffer, keepAnnotations: boolean, job?: JobContext) => Promise<Buffer>;

/** Runs prepareForPdf; the service runs it on a worker thread, tests may run it in place. */
export type DocxPreparer = (input: Buffer, mode: TrackedChangesMode, job?: JobContext, format?: DocumentFormat) => Promise<PreparedDocx>;

export interface DocxToPdfOptions {
  trackedChanges?: TrackedChangesMode;
  /** Filled in with the time of each stage (see office/stages.ts). */
  stages?: ConversionStages;
  /** Where the package is read and rewritten; default: in this thread. */
  prepare?: DocxPreparer;
  /** Whose conversion this is, for fair queueing; its signal drops the job when the caller has gone. */
  job?: JobContext;
  /** What the caller asks of the PDF (page ranges, PDF/A, …); absent: LibreOffice's defaults. */
  pdf?: PdfExportOptions;
  /** Where comments are drawn in the margin (pdf.commentsInMargin); default: in this thread. */
  drawMargin?: MarginDrawer;
}

const drawInPlace: MarginDrawer = async (pdf, keepAnnotations) => drawCommentsInMargin(pdf, { keepAnnotations });

const prepareInPlace: DocxPreparer = async (input, mode, _job, format = 'docx') => prepareForPdf(input, format, mode);

/** The import filter options of a document: CSV gets the separator its lines use (comma when unsure). */
function filterOptionsFor(format: DocumentFormat, input: Buffer): string | undefined {
  if (format === 'csv') return csvFilterOptions(csvSeparator(input.subarray(0, 64 * 1024).toString('utf8')) ?? 44);
  return OFFICE_IMPORTS[format]?.filterOptions;
}

/**
 * Converts an office document (any format of OFFICE_IMPORTS) to PDF in a warm LibreOffice, with the
 * import filter of its format (never LibreOffice's own type detection) and the PDF export filter of
 * its application. OOXML packages are read once first (prepare.ts): guards, scrub, tracked changes
 * for `accept`/`reject` (`markup` shows them), and what LibreOffice must refresh.
 * Throws DomainError: 400 INVALID_FILE_FORMAT (not the format), 422 for zip bombs / encrypted /
 * unopenable documents, and the pool's 503/504/502.
 */
export async function convertOfficeToPdf(pool: PdfConverter, input: Buffer, format: DocumentFormat, options: DocxToPdfOptions = {}): Promise<Buffer> {
  const office = OFFICE_IMPORTS[format];
  if (!office) throw new Error(`${format} is not rendered by LibreOffice`);
  const { stages } = options;
  const prepared = await (options.prepare ?? prepareInPlace)(input, options.trackedChanges ?? 'markup', options.job, format);
  if (stages) {
    stages.guards = (stages.guards ?? 0) + prepared.timings.guards;
    if (prepared.timings.changes !== undefined) stages.changes = (stages.changes ?? 0) + prepared.timings.changes;
  }
  const document = prepared.rewritten ? Buffer.from(prepared.rewritten.buffer, prepared.rewritten.byteOffset, prepared.rewritten.byteLength) : input;
  const pdf = await pool.convertToPdf(document, {
    trackedChanges: 'markup',
    loadFilter: office.filter,
    filterOptions: filterOptionsFor(format, input),
    application: office.application,
    inputExtension: format,
    work: prepared.work,
    filterData: pdfFilterData(options.pdf),
    landscape: options.pdf?.landscape,
    fitColumns: format === 'csv' || undefined,
    stages,
    job: options.job,
  });
  if (!options.pdf?.commentsInMargin) return pdf;
  return (options.drawMargin ?? drawInPlace)(pdf, options.pdf.exportComments === true, options.job);
}

/** DOCX → PDF (convertOfficeToPdf for the format most callers have). */
export const convertDocxToPdf = (pool: PdfConverter, input: Buffer, options: DocxToPdfOptions = {}): Promise<Buffer> => convertOfficeToPdf(pool, input, 'docx', options);
