export { convertDocxToPdf } from './convert.js';
export type { DocxToPdfOptions, PdfConverter } from './convert.js';
export { DocxToPdfQuerySchema, TrackedChangesSchema } from './schema.js';
export type { DocxToPdfQuery, TrackedChanges } from './schema.js';
