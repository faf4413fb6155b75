import { DomainError, type ErrorCode, type ErrorDetail } from '../errors/domain-error.js';

/**
 * Errors do not survive the structured clone between a Piscina worker and the main thread
 * (only name/message/stack do), so worker tasks reply with an envelope that carries a
 * DomainError's fields, and the pool turns it back into a DomainError on this side.
 */
export interface SerializedDomainError {
  code: string;
  message: string;
  details?: ErrorDetail[];
  extensions?: Record<string, unknown>;
  retryAfterSeconds?: number;
}

export type TaskEnvelope<T> = { ok: true; value: T } | { ok: false; error: SerializedDomainError };

/** Wraps a worker task so typed errors cross the thread boundary intact. */
export function envelopeTask<I, O>(task: (input: I) => O | Promise<O>): (input: I) => Promise<TaskEnvelope<O>> {
  return async (input: I) => {
    try {
      return { ok: true, value: await task(input) };
    } catch (err) {
      if (err instanceof DomainError) {
        const { code, message, details, extensions, retryAfterSeconds } = err;
        return { ok: false, error: { code, message, details, extensions, retryAfterSeconds } };
      }
      throw err;
    }
  };
}

export function unwrapEnvelope<T>(envelope: TaskEnvelope<T>): T {
  if (envelope.ok) return envelope.value;
  const { code, message, ...options } = envelope.error;
  throw new DomainError(code as ErrorCode, message, options);
}
