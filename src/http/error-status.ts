import { ErrorCode, type AnsweredCode, type DomainError, type ErrorDetail } from '../errors/domain-error.js';

/**
 * The one place an error code becomes an HTTP answer: its status, and the code the problem+json
 * shows (`answerAs`, for the finer codes engines use where callers see a wider one).
 */
export const HTTP_ERRORS: Readonly<Record<ErrorCode, { status: number; answerAs?: AnsweredCode }>> = {
  VALIDATION_ERROR: { status: 400 },
  AUTHENTICATION_ERROR: { status: 401 },
  KEY_NOT_ACTIVE: { status: 409 },
  INVALID_CODE: { status: 400 },
  RATE_LIMIT_ERROR: { status: 429 },
  CONCURRENCY_LIMIT_ERROR: { status: 429 },
  NOT_FOUND: { status: 404 },
  METHOD_NOT_ALLOWED: { status: 405 },
  UNSUPPORTED_MEDIA_TYPE: { status: 415 },
  NOT_ACCEPTABLE: { status: 406 },
  INVALID_FILE_FORMAT: { status: 400 },
  FILE_TOO_LARGE: { status: 413 },
  ENCRYPTED_DOCUMENT: { status: 422 },
  UNPROCESSABLE_DOCUMENT: { status: 422 },
  DOCUMENT_TOO_COMPLEX: { status: 422 },
  TEMPLATE_INVALID: { status: 422 },
  FIELD_NOT_FOUND: { status: 422 },
  TABLE_SHAPE_MISMATCH: { status: 422 },
  MISSING_VALUES: { status: 422 },
  RAW_XML_INVALID: { status: 422 },
  URL_NOT_ALLOWED: { status: 400 },
  URL_FETCH_FAILED: { status: 422 },
  SIGNING_ERROR: { status: 422 },
  INVALID_CERTIFICATE: { status: 422 },
  CERTIFICATE_EXPIRED: { status: 422 },
  SERVICE_BUSY: { status: 503 },
  STORE_UNAVAILABLE: { status: 503 },
  MAIL_UNAVAILABLE: { status: 503 },
  CONVERSION_TIMEOUT: { status: 504 },
  PROCESSING_TIMEOUT: { status: 504 },
  REQUEST_TIMEOUT: { status: 408 },
  CONVERSION_FAILED: { status: 502 },
  INTERNAL_ERROR: { status: 500 },
  ARCHIVE_REFUSED: { status: 422, answerAs: ErrorCode.INVALID_FILE_FORMAT },
  CONTROL_NOT_IN_TABLE: { status: 422, answerAs: ErrorCode.VALIDATION_ERROR },
  TIMESTAMP_AUTHORITY_FAILED: { status: 502, answerAs: ErrorCode.SIGNING_ERROR },
  SIGNATURE_SPACE_EXCEEDED: { status: 503, answerAs: ErrorCode.SIGNING_ERROR },
  SIGNING_FONT_MISSING: { status: 500, answerAs: ErrorCode.SIGNING_ERROR },
};

/** What the error handler sends: status, answered code, message and the problem's extra members. */
export interface HttpFailure {
  status: number;
  code: ErrorCode;
  message: string;
  details?: ErrorDetail[];
  headers?: Record<string, string>;
  extensions?: Record<string, unknown>;
}

export const httpStatusOf = (error: DomainError): number => HTTP_ERRORS[error.code].status;

export function toHttpFailure(error: DomainError): HttpFailure {
  const { status, answerAs } = HTTP_ERRORS[error.code];
  const retryAfter = error.retryAfterSeconds;
  return {
    status,
    code: answerAs ?? error.code,
    message: error.message,
    details: error.details,
    extensions: error.extensions,
    headers: retryAfter === undefined ? undefined : { 'retry-after': String(Math.max(1, Math.ceil(retryAfter))) },
  };
}
