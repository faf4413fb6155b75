import { DomainError, ErrorCode, serviceBusy } from '../errors/domain-error.js';
import type { FailureKind } from './bridge-protocol.js';

/** Every error a conversion can end with, in one place (their HTTP statuses are http/error-status.ts's). */

export function converterStopped(): DomainError {
  return new DomainError(ErrorCode.SERVICE_BUSY, 'The document converter is not running.');
}

export function stoppedForShutdown(): DomainError {
  return serviceBusy('The document converter was stopped because this instance is shutting down; retry on another instance.', 1);
}

export function conversionTimeout(timeoutMs: number): DomainError {
  return new DomainError(ErrorCode.CONVERSION_TIMEOUT, `The conversion took longer than ${Math.ceil(timeoutMs / 1000)} s and was stopped; simplify or split the document and try again.`);
}

export function conversionFailed(): DomainError {
  return new DomainError(ErrorCode.CONVERSION_FAILED, 'The document converter failed on this document; try again, and if it keeps failing, check the document in Word.');
}

export function tooMuchMemory(maxRssBytes: number): DomainError {
  const mb = Math.round(maxRssBytes / 2 ** 20);
  return new DomainError(ErrorCode.DOCUMENT_TOO_COMPLEX, `Converting this document needed more than the ${mb} MB one conversion may use and was stopped; use smaller images or split the document.`, {
    extensions: { limit: { name: 'convert.officeMemoryMb', max: mb } },
  });
}

export function unprocessableFor(kind: FailureKind): DomainError {
  return kind === 'load'
    ? new DomainError(ErrorCode.UNPROCESSABLE_DOCUMENT, 'The document could not be opened; check that it opens in its office application and is not password-protected.')
    : new DomainError(ErrorCode.UNPROCESSABLE_DOCUMENT, 'The document was opened but could not be exported to PDF.');
}

export type JobOutcome = 'ok' | 'timeout' | 'crash' | 'unprocessable' | 'failed' | 'busy';

export function outcomeOf(err: unknown): JobOutcome {
  if (!(err instanceof DomainError)) return 'failed';
  if (err.code === ErrorCode.CONVERSION_TIMEOUT) return 'timeout';
  if (err.code === ErrorCode.UNPROCESSABLE_DOCUMENT || err.code === ErrorCode.DOCUMENT_TOO_COMPLEX) return 'unprocessable';
  if (err.code === ErrorCode.CONVERSION_FAILED) return 'crash';
  return 'failed';
}
