export { annotateDocx } from './annotate.js';
export { collectRemoteImageUrls } from './fields.js';
export { IMAGE_LIMITS } from './images.js';
export { loadSvgRenderer, SVG_LIMITS } from './svg.js';
export { TABLE_LIMITS } from './fields.js';
export { DOCX_CONTENT_TYPE } from './types.js';
export type { AnnotateField, AnnotateInput, AnnotateOptions, AnnotateResult, FieldOptions, FieldType } from './types.js';
export type { TemplateProblem } from './template-errors.js';
