import type { FastifyInstance, FastifyRequest } from 'fastify';
import { checkKeyShape, hashApiKey } from '../accounts/api-keys.js';
import { DomainError, ErrorCode } from '../errors/domain-error.js';
import type { Store } from '../store/store.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The caller's key lineage (the first 32 hex digits of its first key's hash), set by the bearer check on protected routes. */
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

export const unauthorized = (message: string) => new DomainError(ErrorCode.AUTHENTICATION_ERROR, message);

export function bearerToken(request: FastifyRequest, missing = 'Missing API key: send "Authorization: Bearer <key>" (get a key from /v1/auth/register).'): string {
  const header = request.headers.authorization;
  if (!header) throw unauthorized(missing);
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!match) throw unauthorized('Malformed Authorization header: expected "Bearer <key>".');
  return match[1];
}

async function authenticate(request: FastifyRequest, store: Store, pepper: string): Promise<string> {
  const key = bearerToken(request);
  const shape = checkKeyShape(key);
  if (shape === 'malformed') throw unauthorized('Malformed API key: docproc keys start with "dps_".');
  if (shape === 'bad-checksum') throw unauthorized('Invalid API key: the checksum does not match (mistyped or truncated key?).');
  const keyHash = hashApiKey(key, pepper);
  const record = await store.getApiKey(keyHash);
  if (!record) throw unauthorized('Unknown API key.');
  // Limits count per lineage: a key and the keys rotated from it share one budget.
  return (record.lineage ?? keyHash).slice(0, 32);
}

export interface FailureLimit {
  max: number;
  windowSeconds: number;
}

/**
 * Runs a credential check; a 401 it throws is counted per client IP (one bucket for API keys and the
 * metrics token, shared across replicas), so guessing credentials is rate-limited like any other
 * traffic: past the limit the answer is 429 instead of 401.
 */
export async function countingFailures<T>(request: FastifyRequest, store: Store, failures: FailureLimit, check: () => Promise<T>): Promise<T> {
  try {
    return await check();
  } catch (err) {
    if (!(err instanceof DomainError) || err.code !== ErrorCode.AUTHENTICATION_ERROR) throw err;
    const hit = await store.hit(`authfail:ip:${request.ip}`, failures.windowSeconds);
    if (hit.count > failures.max) {
      const retrySeconds = Math.max(1, Math.ceil(hit.resetMs / 1000));
      throw new DomainError(ErrorCode.RATE_LIMIT_ERROR, `Too many requests without valid credentials from this address; retry after ${retrySeconds} s.`, { retryAfterSeconds: retrySeconds });
    }
    throw err;
  }
}

/** Bearer-key check for every route not marked `config: { public: true }`, its failures counted per client. */
export function installAuth(app: FastifyInstance, store: Store, pepper: string, failures: FailureLimit) {
  app.addHook('onRequest', async (request) => {
    if (isPublicRoute(request)) return;
    request.apiKeyId = await countingFailures(request, store, failures, () => authenticate(request, store, pepper));
  });
}
