export { verifyDocx, DEFAULT_MAX_DOCX_BYTES } from './verify-docx.js';
export type * from './types.js';
