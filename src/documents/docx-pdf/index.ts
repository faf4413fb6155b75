export { convertDocxToPdf, convertOfficeToPdf } from './convert.js';
export type { DocxPreparer, DocxToPdfOptions, MarginDrawer, PdfConverter } from './convert.js';
export { drawCommentsInMargin, MARGIN_LIMITS, marginWidth } from './comments-in-margin.js';
export { prepareDocxForPdf, prepareForPdf, type PreparedDocx } from './prepare.js';
export { IMAGE_RESOLUTIONS, PAGE_RANGES_PATTERN, PDFA_LEVELS, pdfFilterData, type PdfExportOptions, type PdfaLevel } from './pdf-options.js';
