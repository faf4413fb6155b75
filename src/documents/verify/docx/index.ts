export { verifyDocx, DEFAULT_MAX_DOCX_BYTES } from './verify-docx.js';
export { canonicalize, C14N_ALGORITHMS, type C14nOptions } from './c14n.js';
export type * from './types.js';
