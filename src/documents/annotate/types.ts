import type { Warning } from '../warnings.js';
/** Field descriptions accepted by the annotate engine (the SuperDoc "annotate" request shape). */
export type FieldType = 'text' | 'image' | 'signature' | 'table';

export type Dimension = number | string;

export interface FieldOptions {
  /** text: the filled text takes the formatting of the placeholder (default true). */
  keepTextNodeStyles?: boolean;
  /** image / signature: size in CSS pixels; one given, the other follows the aspect ratio. */
  dimensions?: { width?: Dimension; height?: Dimension };
  /** signature: colour of the line drawn under the signature. */
  arcElement?: { color?: string };
  /** signature: label above the signature (text defaults to "Signed by"). */
  topLabel?: { color?: string; text?: string };
  /** signature: label below the signature, e.g. a date or an IP address. */
  bottomLabel?: { color?: string; text?: string };
  /** table: new rows copy the template row's formatting (default true). */
  copyRowStyle?: boolean;
  [other: string]: unknown;
}

export type CellValue = string | number | boolean | null;

export interface AnnotateField {
  id?: string;
  group?: string;
  type: FieldType;
  value?: string | number | boolean | null | CellValue[][];
  options?: FieldOptions;
}

export interface AnnotateOptions {
  /** A tag left without a value fails the call instead of rendering empty. */
  strict?: boolean;
  /** A field that matches nothing in the template is a warning instead of an error. */
  ignoreUnknownFields?: boolean;
}

export interface AnnotateInput {
  template: Buffer | Uint8Array;
  fields: AnnotateField[];
  /** Free-form docxtemplater data (loops, conditions, nested objects). */
  data?: Record<string, unknown>;
  /** Image bytes keyed by the exact value string that references them (`cid:part`, or a URL). */
  images?: Record<string, Buffer | Uint8Array>;
  options?: AnnotateOptions;
}

export interface AnnotateResult {
  docx: Buffer;
  warnings: Warning[];
}

export const DOCX_CONTENT_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
