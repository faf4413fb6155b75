import type { FastifyInstance, RouteOptions } from 'fastify';
import { DomainError, ErrorCode } from '../errors/domain-error.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Also serve this operation's multipart form alone at `<url>/multipart` (see installMultipartTwins). */
    multipartTwin?: boolean;
  }
}

type Schema = Record<string, unknown> & {
  operationId?: string;
  summary?: string;
  description?: string;
  body?: { content?: Record<string, { schema?: unknown }> };
  response?: Record<string, { content?: Record<string, unknown> } & Record<string, unknown>>;
};

export const MULTIPART_TWIN_SUFFIX = '/multipart';

/** The twin's schema: the multipart body alone, and a 200 without the JSON document form (multipart answers are the file). */
function twinSchema(schema: Schema, url: string): Schema {
  const multipartBody = schema.body?.content?.['multipart/form-data']?.schema;
  if (!multipartBody) throw new Error(`${url} asks for a multipart twin but declares no multipart/form-data body`);
  const response = { ...schema.response };
  const ok = response['200'];
  if (ok?.content && Object.keys(ok.content).some((type) => type !== 'application/json')) {
    const { 'application/json': _json, ...binary } = ok.content;
    response['200'] = { ...ok, content: binary };
  }
  return {
    ...schema,
    operationId: `${schema.operationId}Multipart`,
    summary: `${schema.summary} (multipart form)`,
    description:
      `The multipart/form-data form of POST ${url}, alone, for client generators that take one request body per operation (@hey-api/openapi-ts keeps the JSON one). ` +
      `It takes and answers exactly what POST ${url} does with a multipart body.\n\n${schema.description ?? ''}`,
    consumes: ['multipart/form-data'],
    body: multipartBody,
    response,
  };
}

/**
 * Operations that take both JSON and multipart bodies (convert, annotate, sign, verify) keep both at their
 * own path (SuperDoc clients, curl, openapi-typescript) and are also registered at
 * `<path>/multipart` with only the multipart body and their own operationId, so every generator
 * reaches the multipart form (a caller's PKCS#12 file, image parts).
 */
export function installMultipartTwins(app: FastifyInstance): void {
  app.addHook('onRoute', function (this: FastifyInstance, route: RouteOptions) {
    if (route.config?.multipartTwin !== true) return;
    const { url, path: _path, prefix: _prefix, routePath, ...rest } = route as RouteOptions & { path?: string; prefix?: string; routePath?: string };
    const own = routePath ?? url;
    this.route({
      ...rest,
      url: `${own}${MULTIPART_TWIN_SUFFIX}`,
      config: { ...route.config, multipartTwin: false },
      schema: twinSchema(route.schema as Schema, url),
      preValidation: [
        async (request) => {
          if (!request.isMultipart()) {
            throw new DomainError(ErrorCode.UNSUPPORTED_MEDIA_TYPE, `This is the multipart form of POST ${url}: send multipart/form-data here, or JSON to ${url}.`);
          }
        },
        ...(Array.isArray(route.preValidation) ? route.preValidation : route.preValidation ? [route.preValidation] : []),
      ],
    } as RouteOptions);
  });
}
