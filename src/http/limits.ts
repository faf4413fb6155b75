import type { FastifyInstance } from 'fastify';
import { AppError, ErrorCode } from '../errors/app-error.js';
import type { Store } from '../store/store.js';
import { isPublicRoute } from './auth.js';

export interface LimitSettings {
  rateLimitPerWindow: number;
  rateLimitWindowSeconds: number;
  concurrencyPerKey: number;
  requestTimeoutMs: number;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The per-key concurrency slot this request holds, until it is released. */
    concurrencyBucket?: string;
  }
}

/**
 * Per-key (or per-IP without a key) request rate limit and per-key concurrency limit, counted
 * in the store so they hold across replicas sharing one Redis. Runs after authentication.
 */
export function installLimits(app: FastifyInstance, store: Store, settings: LimitSettings) {
  app.addHook('onRequest', async (request, reply) => {
    if (isPublicRoute(request)) return;
    const who = request.apiKeyId ? `key:${request.apiKeyId}` : `ip:${request.ip}`;
    const windowHit = await store.hit(`req:${who}`, settings.rateLimitWindowSeconds);
    const remaining = Math.max(0, settings.rateLimitPerWindow - windowHit.count);
    const resetSeconds = Math.max(1, Math.ceil(windowHit.resetMs / 1000));
    reply.headers({
      'x-ratelimit-limit': String(settings.rateLimitPerWindow),
      'x-ratelimit-remaining': String(remaining),
      'x-ratelimit-reset': String(resetSeconds),
    });
    if (windowHit.count > settings.rateLimitPerWindow) {
      throw new AppError(429, ErrorCode.RATE_LIMIT_ERROR, `Rate limit of ${settings.rateLimitPerWindow} requests per ${settings.rateLimitWindowSeconds} s exceeded; retry after ${resetSeconds} s.`, {
        headers: { 'retry-after': String(resetSeconds) },
      });
    }
    if (!request.apiKeyId) return;
    const bucket = `conc:${request.apiKeyId}`;
    const ttl = Math.ceil(settings.requestTimeoutMs / 1000) + 30;
    if (!(await store.acquireSlot(bucket, settings.concurrencyPerKey, ttl))) {
      throw new AppError(429, ErrorCode.CONCURRENCY_LIMIT_ERROR, `At most ${settings.concurrencyPerKey} requests may run at once per API key; retry when one has finished.`, {
        headers: { 'retry-after': '1' },
      });
    }
    request.concurrencyBucket = bucket;
  });

  const release = async (request: import('fastify').FastifyRequest) => {
    const bucket = request.concurrencyBucket;
    if (!bucket) return;
    request.concurrencyBucket = undefined;
    await store.releaseSlot(bucket).catch((err) => request.log.warn({ err }, 'could not release concurrency slot'));
  };
  // Released as the answer goes out (onSend), so a client sending one request after another never
  // meets its own previous slot; onResponse and onRequestAbort catch the paths that skip onSend.
  app.addHook('onSend', async (request, _reply, payload) => {
    await release(request);
    return payload;
  });
  app.addHook('onResponse', release);
  app.addHook('onRequestAbort', release);
}
