import type { FastifyInstance } from 'fastify';
import type { JobContext } from '../compute/fair-queue.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Whose work this request is, and a signal aborted when its client goes away unanswered. */
    job: JobContext;
  }
}

/**
 * Gives every request the JobContext the pools use for fair queueing and for dropping abandoned
 * work: its signal aborts when the client goes away unanswered or the request's deadline passes.
 */
export function installJobContext(app: FastifyInstance): void {
  app.decorateRequest('job', undefined as unknown as JobContext);
  app.addHook('onRequest', async (request, reply) => {
    const gone = new AbortController();
    reply.raw.once('close', () => {
      if (!reply.raw.writableFinished) gone.abort();
    });
    // The deadline aborts the same controller: a listener, not AbortSignal.any, whose weak
    // references and cleanup registration cost every request ~20 µs and the GC more.
    const { deadline } = request;
    if (deadline?.aborted) gone.abort();
    else deadline?.addEventListener('abort', () => gone.abort(), { once: true });
    request.job = { caller: request.apiKeyId ? `key:${request.apiKeyId}` : `ip:${request.ip}`, signal: gone.signal };
  });
}
