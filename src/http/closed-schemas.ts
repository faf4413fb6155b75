import type { FastifyInstance, RouteOptions } from 'fastify';
import { DomainError, ErrorCode } from '../errors/domain-error.js';

/**
 * One rule for every operation: what a request may carry is what its schema declares. A query
 * parameter or a body property no schema names is refused with 400 VALIDATION_ERROR naming it,
 * rather than ignored (a mistyped option silently doing nothing). Applied once here, to every
 * route as it is registered, so the validators and the OpenAPI document (`additionalProperties:
 * false`) say the same: every object in a query or body schema that does not say otherwise is
 * closed; objects that are free-form by design (annotate `data`, signer details, audit events)
 * say `additionalProperties` themselves. A route without a query schema takes no query parameters;
 * one without a body schema takes no body properties.
 */
type Schema = Record<string, unknown>;

const isObject = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Closes every object schema reachable from `schema` that leaves additionalProperties unsaid (in place: shared schemas are closed everywhere they are used). */
export function closeObjectSchemas(schema: unknown, seen = new Set<unknown>()): void {
  if (!isObject(schema) || seen.has(schema)) return;
  seen.add(schema);
  if (schema.type === 'object' && isObject(schema.properties) && schema.additionalProperties === undefined && schema.patternProperties === undefined) {
    schema.additionalProperties = false;
  }
  for (const [keyword, value] of Object.entries(schema)) {
    if (keyword === 'examples' || keyword === 'default' || keyword === 'const' || keyword === 'enum') continue;
    if (Array.isArray(value)) value.forEach((item) => closeObjectSchemas(item, seen));
    else if (isObject(value)) closeObjectSchemas(value, seen);
  }
}

/** Swagger UI's own routes serve static files; they are not operations. */
const isDocumentationRoute = (url: string) => url === '/docs' || url.startsWith('/docs/');

export function installClosedSchemas(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    if (isDocumentationRoute(route.url)) return;
    route.schema ??= {};
    route.schema.querystring ??= { type: 'object', properties: {} };
    closeObjectSchemas(route.schema.querystring);
    closeObjectSchemas(route.schema.body);
  });
  app.addHook('preValidation', async (request) => {
    const url = request.routeOptions.url;
    if (!url || isDocumentationRoute(url) || request.routeOptions.schema?.body) return;
    const body = request.body;
    if (isObject(body) && !Buffer.isBuffer(body)) {
      const [first] = Object.keys(body);
      if (first !== undefined) {
        throw new DomainError(ErrorCode.VALIDATION_ERROR, `The request is invalid: this operation takes no body, and body.${first} is not part of it.`, {
          details: [{ field: `body.${first}`, issue: `unknown property "${first}"` }],
        });
      }
    }
  });
}
