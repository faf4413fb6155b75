export { convertDocxToPdf } from './convert.js';
export type { DocxPreparer, DocxToPdfOptions, PdfConverter } from './convert.js';
export { prepareDocxForPdf, type PreparedDocx } from './prepare.js';
