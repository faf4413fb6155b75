import { AppError, type ErrorCode, type ErrorDetail } from '../errors/app-error.js';

/**
 * Errors do not survive the structured clone between a Piscina worker and the main thread
 * (only name/message/stack do), so worker tasks reply with an envelope that carries an
 * AppError's fields, and the pool turns it back into an AppError on this side.
 */
export interface SerializedAppError {
  status: number;
  code: string;
  message: string;
  details?: ErrorDetail[];
  headers?: Record<string, string>;
  extensions?: Record<string, unknown>;
}

export type TaskEnvelope<T> = { ok: true; value: T } | { ok: false; error: SerializedAppError };

/** Wraps a worker task so typed errors cross the thread boundary intact. */
export function envelopeTask<I, O>(task: (input: I) => O | Promise<O>): (input: I) => Promise<TaskEnvelope<O>> {
  return async (input: I) => {
    try {
      return { ok: true, value: await task(input) };
    } catch (err) {
      if (err instanceof AppError) {
        const { status, code, message, details, headers, extensions } = err;
        return { ok: false, error: { status, code, message, details, headers, extensions } };
      }
      throw err;
    }
  };
}

export function unwrapEnvelope<T>(envelope: TaskEnvelope<T>): T {
  if (envelope.ok) return envelope.value;
  const { status, code, message, ...options } = envelope.error;
  throw new AppError(status, code as ErrorCode, message, options);
}

