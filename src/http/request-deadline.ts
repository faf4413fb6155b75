import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, ErrorCode } from '../errors/domain-error.js';
import { sendProblem } from './error-handler.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Aborted when the request's whole deadline (REQUEST_TIMEOUT_MS) has passed. */
    deadline: AbortSignal;
  }
}

/**
 * REQUEST_TIMEOUT_MS is the deadline of the whole request, from its first byte to its answer: a
 * request still being received then gets 408 and its connection is closed; one being processed
 * gets 504 PROCESSING_TIMEOUT, and its queued work is dropped (request.deadline feeds the job's
 * signal). Node's own requestTimeout bounds only receiving and is checked every 30 s, so a stalled
 * upload with 10 s set was answered after 71–87 s; this timer fires on time.
 */
export function installRequestDeadline(app: FastifyInstance, timeoutMs: number): void {
  app.decorateRequest('deadline', undefined as unknown as AbortSignal);
  app.addHook('onRequest', async (request, reply) => {
    const expiry = new AbortController();
    request.deadline = expiry.signal;
    const timer = setTimeout(() => {
      expiry.abort();
      expire(request, reply, timeoutMs);
    }, timeoutMs);
    reply.raw.once('close', () => clearTimeout(timer));
  });
}

function expire(request: FastifyRequest, reply: FastifyReply, timeoutMs: number): void {
  if (reply.sent || reply.raw.headersSent) return;
  const seconds = Math.round(timeoutMs / 1000);
  if (!request.raw.complete) {
    reply.header('connection', 'close');
    void sendProblem(request, reply, new DomainError(ErrorCode.REQUEST_TIMEOUT, `The request was not received within its ${seconds} s deadline (REQUEST_TIMEOUT_MS); send it again on a faster connection.`));
    // The rest of the upload is not read: the connection ends once the answer is out.
    reply.raw.once('finish', () => request.raw.destroy());
    return;
  }
  void sendProblem(request, reply, new DomainError(ErrorCode.PROCESSING_TIMEOUT, `The request took longer than its ${seconds} s deadline (REQUEST_TIMEOUT_MS) and was stopped; send a smaller or simpler document.`));
}
