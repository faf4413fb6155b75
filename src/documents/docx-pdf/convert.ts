import { assertDocx } from '../../inputs/zip.js';
import type { ConvertToPdfOptions } from '../../office/office-pool.js';
import type { TrackedChangesMode } from '../../office/index.js';

/** The part of OfficePool this engine needs (lets tests and other callers pass a stand-in). */
export interface PdfConverter {
  convertToPdf(input: Buffer, options?: ConvertToPdfOptions): Promise<Buffer>;
}

export interface DocxToPdfOptions {
  trackedChanges?: TrackedChangesMode;
}

const WORD_2007_FILTER = 'MS Word 2007 XML';

/**
 * Converts a DOCX to PDF in a warm LibreOffice: tracked changes shown, accepted or rejected;
 * TOCs, indexes and fields updated before export. Throws AppError: 400 INVALID_FILE_FORMAT
 * (not a DOCX), 422 for zip bombs / encrypted / unopenable documents, and the pool's 503/504/502.
 */
export async function convertDocxToPdf(pool: PdfConverter, input: Buffer, options: DocxToPdfOptions = {}): Promise<Buffer> {
  assertDocx(input);
  return pool.convertToPdf(input, {
    trackedChanges: options.trackedChanges ?? 'markup',
    loadFilter: WORD_2007_FILTER,
    inputExtension: 'docx',
  });
}
