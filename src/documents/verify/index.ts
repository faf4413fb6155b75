export { verifyPdf, verifyPdfOnline, signatureMaterial, DEFAULT_MAX_PDF_BYTES, type SignatureMaterial } from './verify-pdf.js';
export type * from './types.js';
export { verifyDocx, DEFAULT_MAX_DOCX_BYTES } from './docx/index.js';
export type * from './docx/types.js';
