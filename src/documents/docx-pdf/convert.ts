import { OpcPackage } from '../ooxml/package.js';
import { scrubPackage } from '../ooxml/scrub.js';
import { resolveTrackedChanges } from '../ooxml/tracked-changes.js';
import { documentWork } from './document-work.js';
import type { ConvertToPdfOptions } from '../../office/office-pool.js';
import type { TrackedChangesMode } from '../../office/index.js';
import { timed, type ConversionStages } from '../../office/stages.js';

/** The part of OfficePool this engine needs (lets tests and other callers pass a stand-in). */
export interface PdfConverter {
  convertToPdf(input: Buffer, options?: ConvertToPdfOptions): Promise<Buffer>;
}

export interface DocxToPdfOptions {
  trackedChanges?: TrackedChangesMode;
  /** Filled in with the time of each stage (see office/stages.ts). */
  stages?: ConversionStages;
}

const WORD_2007_FILTER = 'MS Word 2007 XML';

/**
 * Converts a DOCX to PDF in a warm LibreOffice. The package is read once, here: references to
 * outside content are removed (ooxml/scrub.ts); with `accept` or `reject`, tracked changes are
 * resolved in the OOXML (ooxml/tracked-changes.ts) so LibreOffice never sees them; `markup` shows
 * them. LibreOffice is told what else the document needs (document-work.ts): fields and indexes
 * are refreshed only when present, and a document needing nothing is loaded read-only.
 * Throws AppError: 400 INVALID_FILE_FORMAT (not a DOCX), 422 for zip bombs / encrypted /
 * unopenable documents, and the pool's 503/504/502.
 */
export async function convertDocxToPdf(pool: PdfConverter, input: Buffer, options: DocxToPdfOptions = {}): Promise<Buffer> {
  const { stages } = options;
  const mode = options.trackedChanges ?? 'markup';
  // OpcPackage.open refuses what is not a DOCX, zip bombs and encrypted packages first.
  const { pkg, scrubbed } = await timed(stages, 'guards', () => {
    const opened = OpcPackage.open(input, { tolerant: true });
    return { pkg: opened, scrubbed: scrubPackage(opened) };
  });
  const resolved = mode === 'markup' ? 0 : await timed(stages, 'changes', () => resolveTrackedChanges(pkg, mode).changes);
  const work = documentWork(pkg);
  const docx = scrubbed || resolved ? pkg.write() : input;
  return pool.convertToPdf(docx, { trackedChanges: 'markup', loadFilter: WORD_2007_FILTER, inputExtension: 'docx', work, stages });
}
