import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError, ErrorCode } from '../errors/domain-error.js';
import type { Store } from '../store/store.js';
import { isPublicRoute } from './auth.js';

export interface LimitSettings {
  rateLimitPerWindow: number;
  rateLimitWindowSeconds: number;
  concurrencyPerKey: number;
  requestTimeoutMs: number;
}

interface HeldSlot {
  bucket: string;
  holder: string;
  heartbeat: NodeJS.Timeout;
  onClose: () => void;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The per-key concurrency slot this request holds, until it is released. */
    concurrencySlot?: HeldSlot;
  }
}

/**
 * A slot lives SLOT_TTL_SECONDS unless its own request refreshes it (every third of that while
 * it runs). A request that dies without releasing (crashed replica, lost release) frees its slot
 * within one TTL, and other requests of the same key never extend it.
 */
export const SLOT_TTL_SECONDS = 15;

/**
 * Per-key (or per-IP without a key) request rate limit and per-key concurrency limit, counted
 * in the store so they hold across replicas sharing one Redis. Runs after authentication.
 */
export function installLimits(app: FastifyInstance, store: Store, settings: LimitSettings) {
  app.addHook('onRequest', async (request, reply) => {
    if (isPublicRoute(request)) return;
    const who = request.apiKeyId ? `key:${request.apiKeyId}` : `ip:${request.ip}`;
    const slot = request.apiKeyId ? { bucket: `conc:${request.apiKeyId}`, holder: randomUUID(), limit: settings.concurrencyPerKey, ttlSeconds: SLOT_TTL_SECONDS } : undefined;
    // The rate-limit hit and, within the limit, the key's concurrency slot: one store round trip.
    const admitted = await store.admit({ bucket: `req:${who}`, windowSeconds: settings.rateLimitWindowSeconds, max: settings.rateLimitPerWindow }, slot);
    const windowHit = admitted.hit;
    const remaining = Math.max(0, settings.rateLimitPerWindow - windowHit.count);
    const resetSeconds = Math.max(1, Math.ceil(windowHit.resetMs / 1000));
    reply.headers({
      'x-ratelimit-limit': String(settings.rateLimitPerWindow),
      'x-ratelimit-remaining': String(remaining),
      'x-ratelimit-reset': String(resetSeconds),
    });
    if (windowHit.count > settings.rateLimitPerWindow) {
      throw new DomainError(ErrorCode.RATE_LIMIT_ERROR, `Rate limit of ${settings.rateLimitPerWindow} requests per ${settings.rateLimitWindowSeconds} s exceeded; retry after ${resetSeconds} s.`, {
        retryAfterSeconds: resetSeconds,
      });
    }
    if (!slot) return;
    if (!admitted.acquired) {
      throw new DomainError(ErrorCode.CONCURRENCY_LIMIT_ERROR, `At most ${settings.concurrencyPerKey} requests may run at once per API key; retry when one has finished.`, {
        retryAfterSeconds: 1,
      });
    }
    const { bucket, holder } = slot;
    const lastBeat = Date.now() + settings.requestTimeoutMs + SLOT_TTL_SECONDS * 1000;
    const heartbeat = setInterval(() => {
      if (Date.now() > lastBeat) return clearInterval(heartbeat);
      store.refreshSlot(bucket, holder, SLOT_TTL_SECONDS).catch((err) => request.log.warn({ err }, 'could not refresh concurrency slot'));
    }, (SLOT_TTL_SECONDS * 1000) / 3).unref();
    const onClose = () => void release(request);
    request.concurrencySlot = { bucket, holder, heartbeat, onClose };
    // Whatever happens to the request (answer, malformed body, client gone), its response or its
    // connection closes; either may have closed already while the slot was being taken.
    const socket = request.raw.socket;
    if (reply.raw.closed || !socket || socket.destroyed) return release(request);
    reply.raw.once('close', onClose);
    socket.once('close', onClose);
  });

  const release = async (request: FastifyRequest) => {
    const slot = request.concurrencySlot;
    if (!slot) return;
    request.concurrencySlot = undefined;
    clearInterval(slot.heartbeat);
    request.raw.socket?.removeListener('close', slot.onClose);
    await store.releaseSlot(slot.bucket, slot.holder).catch((err) => request.log.warn({ err }, 'could not release concurrency slot'));
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
