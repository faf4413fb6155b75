import type { FastifyInstance, FastifyRequest } from 'fastify';
import { checkKeyShape, hashApiKey } from '../accounts/api-keys.js';
import { AppError, ErrorCode } from '../errors/app-error.js';
import type { Store } from '../store/store.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller's key hash, set by the bearer check on protected routes. */
    apiKeyId?: string;
  }
  interface FastifyContextConfig {
    /** Routes that need no API key (health, auth, docs). */
    public?: boolean;
  }
}

/** Routes open without a key: those marked public, Swagger UI, and unmatched paths (404s). */
export function isPublicRoute(request: FastifyRequest): boolean {
  const url = request.routeOptions.url;
  return !url || request.routeOptions.config?.public === true || url === '/docs' || url.startsWith('/docs/');
}

const unauthorized = (message: string) => new AppError(401, ErrorCode.AUTHENTICATION_ERROR, message);

function bearerToken(request: FastifyRequest): string {
  const header = request.headers.authorization;
  if (!header) throw unauthorized('Missing API key: send "Authorization: Bearer <key>" (get a key from /v1/auth/register).');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw unauthorized('Malformed Authorization header: expected "Bearer <key>".');
  return match[1];
}

/** Bearer-key check for every route not marked `config: { public: true }`. */
export function installAuth(app: FastifyInstance, store: Store, pepper: string) {
  app.addHook('onRequest', async (request) => {
    if (isPublicRoute(request)) return;
    const key = bearerToken(request);
    const shape = checkKeyShape(key);
    if (shape === 'malformed') throw unauthorized('Malformed API key: docproc keys start with "dps_".');
    if (shape === 'bad-checksum') throw unauthorized('Invalid API key: the checksum does not match (mistyped or truncated key?).');
    const keyHash = hashApiKey(key, pepper);
    const record = await store.getApiKey(keyHash);
    if (!record) throw unauthorized('Unknown API key.');
    request.apiKeyId = keyHash.slice(0, 32);
  });
}
