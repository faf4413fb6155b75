export { convertDocxToPdf } from './convert.js';
export type { DocxToPdfOptions, PdfConverter } from './convert.js';
