import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { TSchema, Static } from '@sinclair/typebox';
import { validationError } from '../errors/app-error.js';

/**
 * Validates values that arrive as JSON text inside multipart fields with the same TypeBox
 * schemas the JSON bodies use, so both request shapes obey one contract.
 */
const ajv = new Ajv({ allErrors: true, strict: false, coerceTypes: false });
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
  const details = (check.errors ?? []).map((e) => {
    const extra = (e.params as { additionalProperty?: string }).additionalProperty;
    const missing = (e.params as { missingProperty?: string }).missingProperty;
    const at = [field, e.instancePath.replace(/^\//, '').replace(/\//g, '.'), missing ?? extra].filter(Boolean).join('.');
    return { field: at, issue: extra ? `unknown property "${extra}"` : (e.message ?? 'is invalid') };
  });
  throw validationError(`The request is invalid: ${details.map((d) => `${d.field} ${d.issue}`).join('; ')}.`, details);
}
