/**
 * Typed errors thrown anywhere in docproc (engines, store, routes). They carry a stable
 * machine code and an HTTP status hint; the single error handler in src/http turns them
 * into application/problem+json. Engines never see HTTP, but the status hint keeps the
 * mapping in one place instead of a switch in every route.
 */
export const ErrorCode = {
  VALIDATION_ERROR: 'VALIDATION_ERROR',
  AUTHENTICATION_ERROR: 'AUTHENTICATION_ERROR',
  KEY_NOT_ACTIVE: 'KEY_NOT_ACTIVE',
  INVALID_CODE: 'INVALID_CODE',
  RATE_LIMIT_ERROR: 'RATE_LIMIT_ERROR',
  CONCURRENCY_LIMIT_ERROR: 'CONCURRENCY_LIMIT_ERROR',
  NOT_FOUND: 'NOT_FOUND',
  METHOD_NOT_ALLOWED: 'METHOD_NOT_ALLOWED',
  UNSUPPORTED_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  NOT_ACCEPTABLE: 'NOT_ACCEPTABLE',
  INVALID_FILE_FORMAT: 'INVALID_FILE_FORMAT',
  FILE_TOO_LARGE: 'FILE_TOO_LARGE',
  ENCRYPTED_DOCUMENT: 'ENCRYPTED_DOCUMENT',
  UNPROCESSABLE_DOCUMENT: 'UNPROCESSABLE_DOCUMENT',
  DOCUMENT_TOO_COMPLEX: 'DOCUMENT_TOO_COMPLEX',
  TEMPLATE_INVALID: 'TEMPLATE_INVALID',
  FIELD_NOT_FOUND: 'FIELD_NOT_FOUND',
  TABLE_SHAPE_MISMATCH: 'TABLE_SHAPE_MISMATCH',
  MISSING_VALUES: 'MISSING_VALUES',
  RAW_XML_INVALID: 'RAW_XML_INVALID',
  URL_NOT_ALLOWED: 'URL_NOT_ALLOWED',
  URL_FETCH_FAILED: 'URL_FETCH_FAILED',
  SIGNING_ERROR: 'SIGNING_ERROR',
  INVALID_CERTIFICATE: 'INVALID_CERTIFICATE',
  CERTIFICATE_EXPIRED: 'CERTIFICATE_EXPIRED',
  SERVICE_BUSY: 'SERVICE_BUSY',
  STORE_UNAVAILABLE: 'STORE_UNAVAILABLE',
  MAIL_UNAVAILABLE: 'MAIL_UNAVAILABLE',
  CONVERSION_TIMEOUT: 'CONVERSION_TIMEOUT',
  PROCESSING_TIMEOUT: 'PROCESSING_TIMEOUT',
  REQUEST_TIMEOUT: 'REQUEST_TIMEOUT',
  CONVERSION_FAILED: 'CONVERSION_FAILED',
  INTERNAL_ERROR: 'INTERNAL_ERROR',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export interface ErrorDetail {
  field: string;
  issue: string;
}

export interface AppErrorOptions {
  details?: ErrorDetail[];
  /** Extra response headers, e.g. Retry-After or WWW-Authenticate. */
  headers?: Record<string, string>;
  /** Extra machine-readable members added to the problem document (e.g. template errors). */
  extensions?: Record<string, unknown>;
  cause?: unknown;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details?: ErrorDetail[];
  readonly headers?: Record<string, string>;
  readonly extensions?: Record<string, unknown>;

  constructor(status: number, code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'AppError';
    this.status = status;
    this.code = code;
    this.details = options.details;
    this.headers = options.headers;
    this.extensions = options.extensions;
  }
}

/** Shorthands for the errors engines throw most; each message should tell the caller what to do. */
export const invalidFile = (message: string, options?: AppErrorOptions) =>
  new AppError(400, ErrorCode.INVALID_FILE_FORMAT, message, options);

export const fileTooLarge = (message: string, options?: AppErrorOptions) =>
  new AppError(413, ErrorCode.FILE_TOO_LARGE, message, options);

export const unprocessable = (code: ErrorCode, message: string, options?: AppErrorOptions) =>
  new AppError(422, code, message, options);

export const validationError = (message: string, details: ErrorDetail[] = []) =>
  new AppError(400, ErrorCode.VALIDATION_ERROR, message, { details });

export const serviceBusy = (message: string, retryAfterSeconds: number) =>
  new AppError(503, ErrorCode.SERVICE_BUSY, message, {
    headers: { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) },
  });

/** A queued job whose client has gone is dropped with this (nobody receives it; logs and metrics do). */
export const callerGone = () => new AppError(503, ErrorCode.SERVICE_BUSY, 'The client closed the request before its job started; the job was dropped.');
