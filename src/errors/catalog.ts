import type { AnsweredCode } from './domain-error.js';

export interface ErrorEntry {
  /** The HTTP statuses this code is answered with (most codes have one). */
  statuses: number[];
  /** What it means and what to do about it, as the README table and the OpenAPI examples say it. */
  meaning: string;
}

/**
 * Every error `code` docproc answers, with its statuses and meaning (src/http/error-status.ts gives the
 * status of each error; a test checks that the two agree). The README's error table and
 * the OpenAPI examples (one per status and operation, listing the codes) are checked against it.
 */
export const ERROR_CATALOG: Record<AnsweredCode, ErrorEntry> = {
  VALIDATION_ERROR: { statuses: [400, 422], meaning: 'The request does not match the operation: a missing or unexpected part or property, a wrong value (the message lists the allowed ones). `details` names each field. 422 when a well-formed request asks for something the document cannot take.' },
  AUTHENTICATION_ERROR: { statuses: [401], meaning: 'No API key, an unknown or revoked key (or, on /metrics, not the METRICS_TOKEN). Send `Authorization: Bearer <key>`.' },
  KEY_NOT_ACTIVE: { statuses: [409], meaning: 'The key was already rotated; rotate its successor.' },
  INVALID_CODE: { statuses: [400], meaning: 'The e-mail code is wrong, used or expired (one answer for all, as SuperDoc). Ask for a new one.' },
  RATE_LIMIT_ERROR: { statuses: [429], meaning: 'Too many requests for this key or client; wait `Retry-After` seconds.' },
  CONCURRENCY_LIMIT_ERROR: { statuses: [429], meaning: 'Too many requests running at once for this key; retry when one has finished.' },
  NOT_FOUND: { statuses: [404], meaning: 'No operation at this method and path (see /docs).' },
  METHOD_NOT_ALLOWED: { statuses: [405], meaning: 'Reserved, not answered today: a path called with another method gets 404 NOT_FOUND.' },
  UNSUPPORTED_MEDIA_TYPE: { statuses: [415], meaning: 'The body is not a media type this operation takes (JSON or multipart/form-data, as it declares), or convert’s document is a format it does not take (`acceptedFormats` lists those it does).' },
  NOT_ACCEPTABLE: { statuses: [406], meaning: 'Reserved, not answered today: an Accept the operation cannot satisfy gets its default type.' },
  INVALID_FILE_FORMAT: { statuses: [400, 422], meaning: 'The file is not the format the operation needs (PDF, DOCX, Markdown, HTML), or is malformed (422: an archive refused as a possible zip bomb).' },
  FILE_TOO_LARGE: { statuses: [413], meaning: 'A file, text field or the whole body is past its limit; the message gives the limit in MB.' },
  ENCRYPTED_DOCUMENT: { statuses: [422], meaning: 'The document is password-protected or encrypted; send it without the protection.' },
  UNPROCESSABLE_DOCUMENT: { statuses: [422], meaning: 'The document is well-formed but cannot be processed as asked (the message says why).' },
  DOCUMENT_TOO_COMPLEX: { statuses: [422], meaning: 'The document is past a per-request budget (pages, nesting, elements, memory); `limit` names it. Split or simplify it.' },
  TEMPLATE_INVALID: { statuses: [422], meaning: 'The DOCX template has broken or foreign tags (Jinja, Mustache, docx-templates) or an unknown filter.' },
  FIELD_NOT_FOUND: { statuses: [422], meaning: 'A field id matches no tag or content control (send ignoreUnknownFields=true to get a warning instead).' },
  TABLE_SHAPE_MISMATCH: { statuses: [422], meaning: 'A table value does not fit the table row it fills.' },
  MISSING_VALUES: { statuses: [422], meaning: 'With strict=true, tags were left without a value (without strict they are warnings).' },
  RAW_XML_INVALID: { statuses: [422], meaning: 'A {@raw} value is not allow-listed WordprocessingML.' },
  URL_NOT_ALLOWED: { statuses: [400], meaning: 'Documents or images by URL are disabled (ALLOW_URL_INPUTS) or the host is not allowed; send the bytes.' },
  URL_FETCH_FAILED: { statuses: [422], meaning: 'A document or image URL could not be fetched within the limits.' },
  SIGNING_ERROR: { statuses: [422, 500, 502, 503], meaning: 'Signing failed: 422 a level the service cannot make (no TSA), 502 the time-stamp authority failed, 503 retry, 500 a fault of the service.' },
  INVALID_CERTIFICATE: { statuses: [422], meaning: 'The PKCS#12 cannot be opened with the passphrase, or holds no usable signing key.' },
  CERTIFICATE_EXPIRED: { statuses: [422], meaning: 'The signing certificate is outside its validity period.' },
  SERVICE_BUSY: { statuses: [503], meaning: 'The service is at capacity, or the work waited past QUEUE_WAIT_MS; retry after `Retry-After`.' },
  STORE_UNAVAILABLE: { statuses: [503], meaning: 'The key store (Redis) cannot be reached; retry shortly.' },
  MAIL_UNAVAILABLE: { statuses: [503], meaning: 'The verification mail could not be sent; retry after `Retry-After`.' },
  CONVERSION_TIMEOUT: { statuses: [504], meaning: 'LibreOffice took longer than CONVERT_TIMEOUT_MS; simplify or split the document.' },
  PROCESSING_TIMEOUT: { statuses: [504], meaning: 'The request passed REQUEST_TIMEOUT_MS while being processed; its work was dropped.' },
  REQUEST_TIMEOUT: { statuses: [408], meaning: 'The request body did not arrive within REQUEST_TIMEOUT_MS.' },
  CONVERSION_FAILED: { statuses: [502], meaning: 'The renderer failed on this document; the request id finds the cause in the log.' },
  INTERNAL_ERROR: { statuses: [500], meaning: 'A fault of the service (never a stack in the answer); the request id finds it in the log.' },
};
