import { expect } from 'vitest';
import { DomainError } from '../../src/errors/domain-error.js';
import { toHttpFailure } from '../../src/http/error-status.js';

/** The DomainError `fn` throws (any other error is rethrown; no error fails the test). */
export function rejection(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (error) {
    if (error instanceof DomainError) return error;
    throw error;
  }
  throw new Error('expected a DomainError');
}

/** The status and code a DomainError is answered with (src/http/error-status.ts), for assertions. */
export function answerOf(error: unknown): { status: number; code: string; retryAfter?: string } | string {
  if (!(error instanceof DomainError)) return `not a DomainError: ${String(error)}`;
  const failure = toHttpFailure(error);
  return { status: failure.status, code: failure.code, ...(failure.headers ? { retryAfter: failure.headers['retry-after'] } : {}) };
}

/**
 * Asymmetric matcher: a DomainError answered with `status` and `code` (any code when undefined; and the other members given,
 * e.g. message), for `rejects.toMatchObject(...)` and `toThrow(...)`.
 */
export function answering(status: number, code: string | undefined, members: Record<string, unknown> = {}) {
  return {
    asymmetricMatch(actual: unknown): boolean {
      if (!(actual instanceof DomainError)) return false;
      const failure = toHttpFailure(actual);
      if (failure.status !== status || (code !== undefined && failure.code !== code)) return false;
      try {
        expect(actual).toMatchObject(members);
        return true;
      } catch {
        return false;
      }
    },
    toString: () => `DomainError answered ${status} ${code}`,
    toAsymmetricMatcher: () => `DomainError answered ${status} ${code}`,
  };
}
