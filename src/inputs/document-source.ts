import { AppError, ErrorCode, fileTooLarge, validationError } from '../errors/app-error.js';
import { safeFetch } from './safe-fetch.js';

/** `{ base64 }` or `{ url }`, the SuperDoc API's way to pass a document in JSON. */
export type DocumentSource = { base64: string; url?: undefined } | { url: string; base64?: undefined };

export interface UrlInputPolicy {
  allowed: boolean;
  allowHttp: boolean;
  maxBytes: number;
  timeoutMs: number;
}

const BASE64 = /^[A-Za-z0-9+/\r\n]*={0,2}\s*$/;

/** Decodes base64 (plain or a data: URI) strictly: a typo is a 400, not silently dropped bytes. */
export function decodeBase64(value: string, field: string, maxBytes: number): Buffer {
  const payload = value.startsWith('data:') ? value.slice(value.indexOf(',') + 1) : value;
  if (payload.length > Math.ceil(maxBytes / 3) * 4 + 4) throw fileTooLarge(`The document in ${field} is larger than ${maxBytes} bytes.`);
  const compact = payload.replace(/\s+/g, '');
  const normalized = compact.replace(/-/g, '+').replace(/_/g, '/');
  if (!BASE64.test(normalized) || normalized.length % 4 === 1) throw validationError(`${field} is not valid base64.`, [{ field, issue: 'must be base64' }]);
  const data = Buffer.from(normalized, 'base64');
  if (data.length === 0) throw validationError(`${field} is empty.`, [{ field, issue: 'must not be empty' }]);
  return data;
}

/** Turns a document source into bytes, fetching URLs only when the operator allows it. */
export async function loadDocumentSource(source: DocumentSource, policy: UrlInputPolicy, field = 'document'): Promise<Buffer> {
  if (typeof source.base64 === 'string') return decodeBase64(source.base64, `${field}.base64`, policy.maxBytes);
  if (typeof source.url === 'string') {
    if (!policy.allowed) {
      throw new AppError(400, ErrorCode.URL_NOT_ALLOWED, 'Documents by URL are disabled on this service (ALLOW_URL_INPUTS); send the document as base64 or as a multipart file.');
    }
    return safeFetch(source.url, policy);
  }
  throw validationError(`${field} needs either base64 or url.`, [{ field, issue: 'must have base64 or url' }]);
}
