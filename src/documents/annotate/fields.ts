import { DomainError, ErrorCode, validationError } from '../../errors/domain-error.js';
import { isRemoteImageValue, loadImage, parseImage, resolveImageSource } from './images.js';
import type { AnnotateField, FieldOptions, FieldType } from './types.js';
import { PreparedVisual } from './visuals.js';
import { valueToText } from './xml-text.js';
import { warning, type Warning } from '../warnings.js';

/** A field after validation: its name, text or table rows, or decoded image/signature. */
export interface PreparedField {
  name: string;
  type: FieldType;
  where: string;
  options: FieldOptions;
  text: string;
  rows: string[][];
  visual: PreparedVisual | null;
}

export const TABLE_LIMITS = { maxRows: 5_000, maxCells: 100_000 };
const FIELD_TYPES: FieldType[] = ['text', 'image', 'signature', 'table'];

function fieldName(field: AnnotateField, where: string): string {
  const hasId = typeof field.id === 'string' && field.id !== '';
  const hasGroup = typeof field.group === 'string' && field.group !== '';
  if (hasId === hasGroup) {
    throw validationError(`${where}: give exactly one of "id" or "group".`, [{ field: where, issue: 'needs exactly one of id or group' }]);
  }
  return (hasId ? field.id : field.group) as string;
}

function tableRows(value: unknown, where: string): string[][] {
  if (!Array.isArray(value) || !value.every((row) => Array.isArray(row))) {
    throw validationError(`${where}.value: a table value is an array of rows, each an array of cell values.`, [
      { field: `${where}.value`, issue: 'expected an array of arrays' },
    ]);
  }
  const cells = value.reduce((sum, row) => sum + row.length, 0);
  if (value.length > TABLE_LIMITS.maxRows || cells > TABLE_LIMITS.maxCells) {
    throw new DomainError(ErrorCode.FILE_TOO_LARGE,
      `${where}.value: the table has ${value.length} rows / ${cells} cells; the limit is ${TABLE_LIMITS.maxRows} rows and ${TABLE_LIMITS.maxCells} cells.`);
  }
  return value.map((row: unknown[]) => row.map(valueToText));
}

function prepareVisual(field: AnnotateField, where: string, images: Record<string, Buffer | Uint8Array>): PreparedVisual {
  const options = field.options ?? {};
  if (typeof field.value !== 'string' || field.value.trim() === '') {
    throw validationError(`${where}.value: an ${field.type} value is a base64 image, a data: URI, a cid: part or an https URL.`, [
      { field: `${where}.value`, issue: 'expected a non-empty string' },
    ]);
  }
  if (field.type === 'image') return new PreparedVisual('image', where, options, loadImage(field.value, images, where), '');
  // A signature is a drawn image when the value decodes to one, else the typed name.
  const source = resolveImageSource(field.value, images, where);
  if (source.kind === 'missing-remote') return new PreparedVisual('signature', where, options, loadImage(field.value, images, where), '');
  const image = source.kind === 'bytes' ? parseImage(source.bytes, where) : null;
  if (image || /^data:/i.test(field.value.trim())) {
    return new PreparedVisual('signature', where, options, image ?? loadImage(field.value, images, where), '');
  }
  return new PreparedVisual('signature', where, options, null, field.value);
}

/** Validates and decodes every field; later fields with the same name replace earlier ones. */
export function prepareFields(
  fields: AnnotateField[],
  images: Record<string, Buffer | Uint8Array>,
  warnings: Warning[],
): Map<string, PreparedField> {
  if (!Array.isArray(fields)) throw validationError('"fields" must be an array.', [{ field: 'fields', issue: 'expected an array' }]);
  const prepared = new Map<string, PreparedField>();
  fields.forEach((field, index) => {
    const where = `fields[${index}]`;
    if (!field || typeof field !== 'object') throw validationError(`${where}: expected an object.`, [{ field: where, issue: 'expected an object' }]);
    const name = fieldName(field, where);
    if (!FIELD_TYPES.includes(field.type)) {
      throw validationError(`${where}.type: use one of ${FIELD_TYPES.join(', ')}.`, [{ field: `${where}.type`, issue: 'unknown field type' }]);
    }
    if (prepared.has(name)) warnings.push(warning('FIELD_REPEATED', `Field "${name}" is given more than once; the last value is used.`, name));
    const base = { name, type: field.type, where, options: field.options ?? {}, text: '', rows: [] as string[][], visual: null };
    if (field.type === 'text') prepared.set(name, { ...base, text: valueToText(field.value) });
    else if (field.type === 'table') prepared.set(name, { ...base, rows: tableRows(field.value, where) });
    else prepared.set(name, { ...base, visual: prepareVisual(field, where, images) });
  });
  return prepared;
}

/** http(s) URLs used as image or signature values: fetch them (SSRF-safe) and pass them in `images`. */
export function collectRemoteImageUrls(fields: AnnotateField[]): string[] {
  const urls = new Set<string>();
  for (const field of Array.isArray(fields) ? fields : []) {
    if ((field?.type === 'image' || field?.type === 'signature') && isRemoteImageValue(field.value)) urls.add(field.value.trim());
  }
  return [...urls];
}
