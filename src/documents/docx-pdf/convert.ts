import { scrubExternalReferences } from '../ooxml/scrub.js';
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
 * Converts a DOCX to PDF in a warm LibreOffice, after removing every reference to outside content
 * (ooxml/scrub.ts): tracked changes shown, accepted or rejected;
 * TOCs, indexes and fields updated before export. Throws AppError: 400 INVALID_FILE_FORMAT
 * (not a DOCX), 422 for zip bombs / encrypted / unopenable documents, and the pool's 503/504/502.
 */
export async function convertDocxToPdf(pool: PdfConverter, input: Buffer, options: DocxToPdfOptions = {}): Promise<Buffer> {
  // OpcPackage.open (inside) refuses what is not a DOCX, zip bombs and encrypted packages first.
  const { docx } = scrubExternalReferences(input);
  return pool.convertToPdf(docx, {
    trackedChanges: options.trackedChanges ?? 'markup',
    loadFilter: WORD_2007_FILTER,
    inputExtension: 'docx',
  });
}
