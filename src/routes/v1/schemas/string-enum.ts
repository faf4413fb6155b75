import { Type, type SchemaOptions, type TUnsafe } from '@sinclair/typebox';

/**
 * A string from a fixed list as one `{ type: 'string', enum }` schema. A TypeBox union of
 * literals becomes anyOf of one-value enums, which Swagger UI labels
 * "string | (string | string)"; query parameters read better as a plain string with choices.
 */
export function StringEnum<const T extends readonly string[]>(values: T, options: SchemaOptions = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });
}
