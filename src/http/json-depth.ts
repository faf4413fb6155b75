import type { FastifyInstance } from 'fastify';
import { DomainError, ErrorCode } from '../errors/domain-error.js';

/**
 * Deepest nesting of arrays/objects a JSON body (or a JSON multipart field) may have. Templates
 * need a few levels for loops in loops; thousands would overflow the recursion of the structured
 * clone that carries the data to a worker thread, and of every walker after it.
 */
export const MAX_JSON_DEPTH = 64;

/** Measures depth without recursion, so the check itself cannot overflow the stack. */
export function jsonDepthExceeds(value: unknown, maxDepth: number): boolean {
  const pending: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (pending.length > 0) {
    const { value: current, depth } = pending.pop()!;
    if (current === null || typeof current !== 'object') continue;
    if (depth + 1 > maxDepth) return true;
    for (const child of Array.isArray(current) ? current : Object.values(current)) {
      if (child !== null && typeof child === 'object') pending.push({ value: child, depth: depth + 1 });
    }
  }
  return false;
}

export function assertJsonDepth(value: unknown, where: string): void {
  if (jsonDepthExceeds(value, MAX_JSON_DEPTH)) {
    throw new DomainError(ErrorCode.VALIDATION_ERROR, `${where} is nested deeper than ${MAX_JSON_DEPTH} levels of arrays and objects.`, {
      details: [{ field: where, issue: `nesting deeper than ${MAX_JSON_DEPTH}` }],
    });
  }
}

/** Every parsed JSON body is measured before validation and before it can reach a worker. */
export function installJsonDepthCheck(app: FastifyInstance): void {
  app.addHook('preValidation', async (request) => {
    if (request.body !== null && typeof request.body === 'object' && !request.isMultipart()) assertJsonDepth(request.body, 'body');
  });
}
