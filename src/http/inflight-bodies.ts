import type { FastifyInstance, FastifyRequest } from 'fastify';
import { serviceBusy } from '../errors/domain-error.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Bytes this request holds of the replica's in-flight body budget (released when its answer is done). */
    inflightBodyBytes?: number;
  }
}

/**
 * The request bodies one replica holds at once are bounded (MAX_INFLIGHT_BODY_MB): a body is counted
 * from its Content-Length before a byte of it is read — a chunked one at its route's whole body
 * budget, the most it may send — and released when its answer has been sent or its connection closed,
 * whatever happened. Past the budget a request gets 503 SERVICE_BUSY + Retry-After without its body
 * being held (what still arrives is thrown away). One key may hold at most half of the budget, so one caller's uploads cannot turn
 * everyone else's away. A request is always admitted when nothing (of its key) is in flight, so a body
 * larger than the budget is possible, never stuck.
 */
export class InflightBodyBudget {
  private used = 0;
  private readonly byKey = new Map<string, number>();

  constructor(readonly limitBytes: number) {}

  get bytesInFlight(): number {
    return this.used;
  }

  /** Takes `bytes` for `key`, or returns false when the replica or the key has no room for them. */
  tryReserve(key: string, bytes: number): boolean {
    const ofKey = this.byKey.get(key) ?? 0;
    if (this.used > 0 && this.used + bytes > this.limitBytes) return false;
    if (ofKey > 0 && ofKey + bytes > this.limitBytes / 2) return false;
    this.used += bytes;
    this.byKey.set(key, ofKey + bytes);
    return true;
  }

  release(key: string, bytes: number): void {
    this.used -= bytes;
    const left = (this.byKey.get(key) ?? 0) - bytes;
    if (left > 0) this.byKey.set(key, left);
    else this.byKey.delete(key);
  }
}

/** What a request will send: its Content-Length, or for a chunked body the most its route accepts. */
function announcedBodyBytes(request: FastifyRequest, fallbackBudget: number): number {
  const length = request.headers['content-length'];
  if (length !== undefined) return Number(length) || 0;
  if (request.headers['transfer-encoding'] !== undefined) return request.routeOptions.config?.bodyBudget ?? fallbackBudget;
  return 0;
}

/**
 * After the 503 the rest of the body is read and thrown away (no memory; Node does it for a
 * keep-alive connection), so a client that sends its whole body before reading the answer gets the
 * 503 and its Retry-After rather than a broken connection (closing it made such clients fail with
 * EPIPE); a body still not in after this long has its connection closed.
 */
const DRAIN_MS = 10_000;

export function installInflightBodyBudget(app: FastifyInstance, budget: InflightBodyBudget, fallbackRouteBudget: number): void {
  app.addHook('onRequest', async (request, reply) => {
    const bytes = announcedBodyBytes(request, fallbackRouteBudget);
    if (bytes === 0) return;
    const key = request.apiKeyId ?? `ip:${request.ip}`;
    if (!budget.tryReserve(key, bytes)) {
      reply.raw.once('finish', () => {
        if (!request.raw.complete) setTimeout(() => request.raw.complete || request.raw.destroy(), DRAIN_MS).unref();
      });
      throw serviceBusy('This instance is receiving as many documents as it holds at once (MAX_INFLIGHT_BODY_MB); retry in a moment.', 1);
    }
    request.inflightBodyBytes = bytes;
    reply.raw.once('close', () => budget.release(key, bytes));
  });
}
