export { verifyPdf, DEFAULT_MAX_PDF_BYTES } from './verify-pdf.js';
export type * from './types.js';
