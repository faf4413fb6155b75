import type { PdfFilterData } from '../../office/bridge-protocol.js';

/**
 * What a caller may ask of a PDF that LibreOffice renders (Gotenberg's names where it has one), and
 * how each maps to LibreOffice's PDF export FilterData. An option not given adds nothing: the export
 * runs with LibreOffice's defaults, exactly as without options.
 */
export interface PdfExportOptions {
  /** Pages to export, e.g. "1-3,5" (LibreOffice PageRange). */
  pageRanges?: string;
  /** Every page style turned to landscape before the export (Writer and Calc; slides keep their size). */
  landscape?: boolean;
  /** Comments as PDF text annotations (ExportNotes). */
  exportComments?: boolean;
  /**
   * Comments drawn in a margin beside each page (comments-in-margin.ts; LibreOffice 7.4 has no
   * ExportNotesInMargin). LibreOffice is asked for the annotations, which are drawn and then
   * removed unless exportComments is true as well.
   */
  commentsInMargin?: boolean;
  /** Headings and bookmarks as PDF outline entries (ExportBookmarks; LibreOffice's default is true). */
  exportBookmarks?: boolean;
  /** Form controls as PDF form fields (ExportFormFields; default true). */
  exportFormFields?: boolean;
  /** Images compressed losslessly (Flate) instead of JPEG (UseLosslessCompression). */
  losslessImageCompression?: boolean;
  /** JPEG quality 1–100 (Quality; default 90). */
  quality?: number;
  /** Images downsampled to maxImageResolution (ReduceImageResolution). */
  reduceImageResolution?: boolean;
  /** DPI images are reduced to: 75, 150, 300, 600 or 1200 (MaxImageResolution; default 300). */
  maxImageResolution?: number;
  /** PDF/A conformance (SelectPdfVersion 1, 2, 3: PDF/A-1b, -2b, -3b). */
  pdfa?: PdfaLevel;
  /** Tagged PDF with the PDF/UA identification (PDFUACompliance). */
  pdfua?: boolean;
  /** Each spreadsheet sheet on one page (SinglePageSheets; Calc). */
  singlePageSheets?: boolean;
}

export const PDFA_LEVELS = ['PDF/A-1b', 'PDF/A-2b', 'PDF/A-3b'] as const;
export type PdfaLevel = (typeof PDFA_LEVELS)[number];
export const IMAGE_RESOLUTIONS = [75, 150, 300, 600, 1200] as const;

const PDFA_VERSION: Record<PdfaLevel, number> = { 'PDF/A-1b': 1, 'PDF/A-2b': 2, 'PDF/A-3b': 3 };

/** A page range as LibreOffice reads it: numbers and from-to spans, comma-separated ("1-3,5", "2-"). */
export const PAGE_RANGES_PATTERN = '^\\s*\\d+(\\s*-\\s*\\d*)?(\\s*[,;]\\s*\\d+(\\s*-\\s*\\d*)?)*\\s*$';

/** FilterData for the options given; undefined when none changes the export. */
export function pdfFilterData(options: PdfExportOptions = {}): PdfFilterData | undefined {
  const data: PdfFilterData = {};
  if (options.pageRanges !== undefined) data.PageRange = options.pageRanges.replace(/\s+/g, '').replace(/;/g, ',');
  if (options.exportComments !== undefined) data.ExportNotes = options.exportComments;
  // The margin is drawn from the annotations LibreOffice exports (comments-in-margin.ts).
  if (options.commentsInMargin) data.ExportNotes = true;
  if (options.exportBookmarks !== undefined) data.ExportBookmarks = options.exportBookmarks;
  if (options.exportFormFields !== undefined) data.ExportFormFields = options.exportFormFields;
  if (options.losslessImageCompression !== undefined) data.UseLosslessCompression = options.losslessImageCompression;
  if (options.quality !== undefined) data.Quality = options.quality;
  if (options.reduceImageResolution !== undefined) data.ReduceImageResolution = options.reduceImageResolution;
  if (options.maxImageResolution !== undefined) {
    data.MaxImageResolution = options.maxImageResolution;
    // Gotenberg: the resolution only matters when reducing; giving one means "reduce to it".
    data.ReduceImageResolution ??= true;
  }
  if (options.pdfa !== undefined) data.SelectPdfVersion = PDFA_VERSION[options.pdfa];
  if (options.pdfua) {
    data.PDFUACompliance = true;
    data.UseTaggedPDF = true;
  }
  if (options.singlePageSheets !== undefined) data.SinglePageSheets = options.singlePageSheets;
  return Object.keys(data).length > 0 ? data : undefined;
}
