export { convertDocxToPdf, convertOfficeToPdf } from './convert.js';
export type { DocxPreparer, DocxToPdfOptions, PdfConverter } from './convert.js';
export { prepareDocxForPdf, prepareForPdf, type PreparedDocx } from './prepare.js';
export { IMAGE_RESOLUTIONS, PAGE_RANGES_PATTERN, PDFA_LEVELS, pdfFilterData, type PdfExportOptions, type PdfaLevel } from './pdf-options.js';
