import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { TSchema, Static } from '@sinclair/typebox';
import { validationError } from '../errors/domain-error.js';
import { summarize, validationDetails } from './validation-messages.js';

/**
 * Validates values that arrive as JSON text inside multipart fields with the same TypeBox
 * schemas the JSON bodies use, so both request shapes obey one contract.
 */
const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false, verbose: true });
const addFormats = addFormatsModule as unknown as (a: Ajv) => void;
addFormats(ajv);
const compiled = new WeakMap<object, ValidateFunction>();

export function validateValue<S extends TSchema>(schema: S, value: unknown, field: string): Static<S> {
  let check = compiled.get(schema);
  if (!check) {
    check = ajv.compile(schema);
    compiled.set(schema, check);
  }
  if (check(value)) return value as Static<S>;
  const details = validationDetails(check.errors ?? [], field);
  throw validationError(summarize(details), details);
}
