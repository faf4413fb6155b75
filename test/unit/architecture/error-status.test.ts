import { describe, expect, it } from 'vitest';
import { DomainError, ErrorCode, serviceBusy } from '../../../src/errors/domain-error.js';
import { HTTP_ERRORS, toHttpFailure } from '../../../src/http/error-status.js';

describe('error code → HTTP mapping (src/http/error-status.ts)', () => {
  it('has one row for every code, each a 4xx or 5xx status', () => {
    expect(Object.keys(HTTP_ERRORS).sort()).toEqual(Object.values(ErrorCode).sort());
    for (const [code, { status }] of Object.entries(HTTP_ERRORS)) {
      expect(status >= 400 && status < 600, `${code}: ${status}`).toBe(true);
    }
  });

  it('answers finer codes under a code that is itself answered as it is', () => {
    for (const [code, { answerAs }] of Object.entries(HTTP_ERRORS)) {
      if (!answerAs) continue;
      expect(HTTP_ERRORS[answerAs].answerAs, `${code} → ${answerAs}`).toBeUndefined();
    }
  });

  it('keeps the statuses callers have always seen', () => {
    const answer = (code: ErrorCode) => {
      const { status, code: answered } = toHttpFailure(new DomainError(code, 'x'));
      return `${status} ${answered}`;
    };
    expect(answer(ErrorCode.INVALID_FILE_FORMAT)).toBe('400 INVALID_FILE_FORMAT');
    expect(answer(ErrorCode.ARCHIVE_REFUSED)).toBe('422 INVALID_FILE_FORMAT');
    expect(answer(ErrorCode.CONTROL_NOT_IN_TABLE)).toBe('422 VALIDATION_ERROR');
    expect(answer(ErrorCode.SIGNING_ERROR)).toBe('422 SIGNING_ERROR');
    expect(answer(ErrorCode.TIMESTAMP_AUTHORITY_FAILED)).toBe('502 SIGNING_ERROR');
    expect(answer(ErrorCode.SIGNATURE_SPACE_EXCEEDED)).toBe('503 SIGNING_ERROR');
    expect(answer(ErrorCode.SIGNING_FONT_MISSING)).toBe('500 SIGNING_ERROR');
    expect(answer(ErrorCode.CONVERSION_FAILED)).toBe('502 CONVERSION_FAILED');
    expect(answer(ErrorCode.KEY_NOT_ACTIVE)).toBe('409 KEY_NOT_ACTIVE');
  });

  it('turns retryAfterSeconds into a Retry-After of at least one whole second', () => {
    expect(toHttpFailure(serviceBusy('busy', 0.2)).headers).toEqual({ 'retry-after': '1' });
    expect(toHttpFailure(serviceBusy('busy', 4.1)).headers).toEqual({ 'retry-after': '5' });
    expect(toHttpFailure(new DomainError(ErrorCode.NOT_FOUND, 'x')).headers).toBeUndefined();
  });

  it('keeps details, extensions and the message', () => {
    const failure = toHttpFailure(new DomainError(ErrorCode.TEMPLATE_INVALID, 'bad tag', { details: [{ field: 'a', issue: 'b' }], extensions: { errors: [1] } }));
    expect(failure).toMatchObject({ status: 422, code: 'TEMPLATE_INVALID', message: 'bad tag', details: [{ field: 'a', issue: 'b' }], extensions: { errors: [1] } });
  });
});
