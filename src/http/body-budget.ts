import type { FastifyContextConfig, FastifyInstance } from 'fastify';
import { DomainError, ErrorCode } from '../errors/domain-error.js';
import { readableSize } from './sizes.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The most bytes a request to this route may send, whatever its content type (see bodyBudget). */
    bodyBudget?: number;
  }
}

/**
 * Every route declares its body budget: `bodyLimit` for what Fastify parses (JSON) and
 * `config.bodyBudget` for the whole request, multipart included. A declared Content-Length past the
 * budget is refused before a byte of the body is read; a chunked multipart body is bounded by the
 * part limits (files × MAX_FILE_BYTES, fields × MULTIPART_FIELD_MAX_BYTES).
 */
export function bodyBudget(bytes: number, config: FastifyContextConfig = {}) {
  return { bodyLimit: bytes, config: { ...config, bodyBudget: bytes } };
}

/** Requests without a body need none: a small budget for GET routes. */
export const NO_BODY = 16 * 1024;

export function installBodyBudget(app: FastifyInstance, fallback: number): void {
  app.addHook('onRequest', async (request) => {
    const budget = request.routeOptions.config?.bodyBudget ?? fallback;
    const declared = Number(request.headers['content-length'] ?? 0);
    if (declared > budget) {
      throw new DomainError(ErrorCode.FILE_TOO_LARGE, `The request body (${readableSize(declared)}) is larger than this operation accepts (${readableSize(budget)}); send a smaller document.`);
    }
  });
}
