/**
 * The errors docproc throws anywhere below the HTTP layer (engines, office, inputs, compute, store,
 * accounts). Each carries a stable machine code and no HTTP status: src/http/error-status.ts maps
 * every code to its status and to the code the problem+json answer shows, in one table.
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
  // Finer codes for failures that callers see under one of the codes above, with another status
  // (the table in src/http/error-status.ts says which): the engine names what happened.
  /** A well-formed archive refused by the zip-bomb budget (answered as INVALID_FILE_FORMAT). */
  ARCHIVE_REFUSED: 'ARCHIVE_REFUSED',
  /** A table field whose content control neither wraps nor sits in a table (answered as VALIDATION_ERROR). */
  CONTROL_NOT_IN_TABLE: 'CONTROL_NOT_IN_TABLE',
  /** The time-stamp authority failed or answered something unusable (answered as SIGNING_ERROR). */
  TIMESTAMP_AUTHORITY_FAILED: 'TIMESTAMP_AUTHORITY_FAILED',
  /** The signature outgrew its reserved space; a retry succeeds (answered as SIGNING_ERROR). */
  SIGNATURE_SPACE_EXCEEDED: 'SIGNATURE_SPACE_EXCEEDED',
  /** This server lacks a font the audit page needs (answered as SIGNING_ERROR). */
  SIGNING_FONT_MISSING: 'SIGNING_FONT_MISSING',
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** The finer codes: callers never see them (src/http/error-status.ts answers each as another code). */
export const FINER_CODES = [
  ErrorCode.ARCHIVE_REFUSED,
  ErrorCode.CONTROL_NOT_IN_TABLE,
  ErrorCode.TIMESTAMP_AUTHORITY_FAILED,
  ErrorCode.SIGNATURE_SPACE_EXCEEDED,
  ErrorCode.SIGNING_FONT_MISSING,
] as const;

/** A code a problem+json answer carries (src/errors/catalog.ts describes each). */
export type AnsweredCode = Exclude<ErrorCode, (typeof FINER_CODES)[number]>;

export interface ErrorDetail {
  field: string;
  issue: string;
}

export interface DomainErrorOptions {
  details?: ErrorDetail[];
  /** Extra machine-readable members added to the problem document (e.g. template errors). */
  extensions?: Record<string, unknown>;
  /** When capacity is expected back (busy, rate-limited, a dependency down). */
  retryAfterSeconds?: number;
  cause?: unknown;
}

export class DomainError extends Error {
  readonly code: ErrorCode;
  readonly details?: ErrorDetail[];
  readonly extensions?: Record<string, unknown>;
  readonly retryAfterSeconds?: number;

  constructor(code: ErrorCode, message: string, options: DomainErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'DomainError';
    this.code = code;
    this.details = options.details;
    this.extensions = options.extensions;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** Shorthands for the errors engines throw most; each message should tell the caller what to do. */
export const invalidFile = (message: string, options?: DomainErrorOptions) =>
  new DomainError(ErrorCode.INVALID_FILE_FORMAT, message, options);

export const fileTooLarge = (message: string, options?: DomainErrorOptions) =>
  new DomainError(ErrorCode.FILE_TOO_LARGE, message, options);

export const validationError = (message: string, details: ErrorDetail[] = []) =>
  new DomainError(ErrorCode.VALIDATION_ERROR, message, { details });

export const serviceBusy = (message: string, retryAfterSeconds: number) =>
  new DomainError(ErrorCode.SERVICE_BUSY, message, { retryAfterSeconds });

/** A queued job whose client has gone is dropped with this (nobody receives it; logs and metrics do). */
export const callerGone = () => new DomainError(ErrorCode.SERVICE_BUSY, 'The client closed the request before its job started; the job was dropped.');
