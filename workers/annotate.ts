import type { Warning } from '../src/documents/warnings.js';
import { envelopeTask } from '../src/compute/task-envelope.js';
import { annotateDocx, loadSvgRenderer, type AnnotateField, type AnnotateOptions } from '../src/documents/annotate/index.js';

/** Structured-clonable input of the `annotate` worker task. */
export interface AnnotateTaskInput {
  template: Uint8Array;
  fields: AnnotateField[];
  data?: Record<string, unknown>;
  /** `data` as JSON text (a large JSON request body's), parsed here rather than on the event loop. */
  dataJson?: Uint8Array;
  images?: Record<string, Uint8Array>;
  options?: AnnotateOptions;
}

export interface AnnotateTaskOutput {
  docx: Uint8Array;
  warnings: Warning[];
}

export const annotate = envelopeTask<AnnotateTaskInput, AnnotateTaskOutput>(async (input) => {
  // Once per worker thread: SVG images need the resvg WebAssembly module for their PNG fallback.
  await loadSvgRenderer();
  const { dataJson, ...rest } = input;
  const data = dataJson ? (JSON.parse(Buffer.from(dataJson.buffer, dataJson.byteOffset, dataJson.byteLength).toString('utf8')) as Record<string, unknown>) : input.data;
  const result = annotateDocx({ ...rest, data });
  return { docx: new Uint8Array(result.docx.buffer, result.docx.byteOffset, result.docx.byteLength), warnings: result.warnings };
});
