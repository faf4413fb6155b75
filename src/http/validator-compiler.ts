import { Ajv, type AnySchema } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { FastifyServerOptions } from 'fastify';

/** Fastify's type for this factory is the Ajv pool's; at run time it is called with the route's schema and part. */
type ValidatorFactory = NonNullable<NonNullable<FastifyServerOptions['schemaController']>['compilersFactory']>['buildValidator'];

type ExternalSchemas = Record<string, AnySchema>;
// ajv-formats is CommonJS with a default export the ESM types do not see.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => void;

/**
 * Fastify's validators, with one rule Fastify's default lacks: request bodies are never coerced.
 * Query strings, path parameters and headers arrive as text and are coerced as usual; a JSON body
 * is taken as sent, so a one-row table `[["a","b"]]` stays an array of arrays, a number stays a
 * number where a string is expected (400 naming the field), and `null` is never turned into "".
 * Errors are verbose (they carry their schema and value) so the messages can list what is allowed.
 */
export function validatorCompilerFactory(): ValidatorFactory {
  const factory = (externalSchemas: ExternalSchemas) => {
    const make = (coerceTypes: boolean | 'array') => {
      const ajv = new Ajv({ coerceTypes, useDefaults: true, removeAdditional: false, allErrors: true, verbose: true, strict: false, addUsedSchema: false });
      addFormats(ajv);
      for (const schema of Object.values(externalSchemas)) ajv.addSchema(schema);
      return ajv;
    };
    const bodies = make(false);
    const textParts = make('array');
    return ({ schema, httpPart }: { schema: AnySchema; httpPart?: string }) => {
      const ajv = httpPart === 'body' ? bodies : textParts;
      const id = typeof schema === 'object' && schema !== null ? (schema as { $id?: string }).$id : undefined;
      return (id && ajv.getSchema(id)) || ajv.compile(schema);
    };
  };
  return factory as unknown as ValidatorFactory;
}
