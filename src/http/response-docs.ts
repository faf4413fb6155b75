import { STATUS_CODES } from 'node:http';
import type { FastifyInstance, RouteOptions } from 'fastify';
import type { AnsweredCode } from '../errors/domain-error.js';
import { ERROR_CATALOG } from '../errors/catalog.js';
import { PROBLEM_CONTENT_TYPE } from './problem.js';

/**
 * What the OpenAPI document says about answers beyond their bodies, so generated clients and
 * Swagger UI show it: the error codes each operation can answer (one example per status, the code
 * typed as an enum), and every response header docproc writes.
 */

/** A code an operation can answer, with all its statuses, or with one of them only ([code, status]). */
export type ErrorSpec = AnsweredCode | readonly [AnsweredCode, number];

/** Codes every operation behind an API key can answer. */
export const KEYED_ERRORS: readonly ErrorSpec[] = ['AUTHENTICATION_ERROR', 'RATE_LIMIT_ERROR', 'CONCURRENCY_LIMIT_ERROR', 'STORE_UNAVAILABLE', 'INTERNAL_ERROR'];

/** Codes every document operation (a body to read and work to run) can answer, besides its own. */
export const DOCUMENT_ERRORS: readonly ErrorSpec[] = [
  ...KEYED_ERRORS,
  ['VALIDATION_ERROR', 400], 'UNSUPPORTED_MEDIA_TYPE', 'FILE_TOO_LARGE', 'INVALID_FILE_FORMAT', 'ENCRYPTED_DOCUMENT', 'UNPROCESSABLE_DOCUMENT',
  'DOCUMENT_TOO_COMPLEX', 'SERVICE_BUSY', 'REQUEST_TIMEOUT', 'PROCESSING_TIMEOUT',
];

/** The JSON forms also take `{url}` documents. */
export const URL_INPUT_ERRORS: readonly ErrorSpec[] = ['URL_NOT_ALLOWED', 'URL_FETCH_FAILED'];

/** Operations that render through LibreOffice (convert, annotate to=pdf, sign of a DOCX). */
export const RENDER_ERRORS: readonly ErrorSpec[] = ['CONVERSION_TIMEOUT', 'CONVERSION_FAILED'];

/** Status → codes, in the order given. */
function codesByStatus(specs: readonly ErrorSpec[]): Map<number, AnsweredCode[]> {
  const byStatus = new Map<number, AnsweredCode[]>();
  for (const spec of specs) {
    const [code, only] = typeof spec === 'string' ? [spec, undefined] : spec;
    for (const status of only === undefined ? ERROR_CATALOG[code].statuses : [only]) {
      if (!ERROR_CATALOG[code].statuses.includes(status)) throw new Error(`${code} is never answered with ${status} (src/errors/catalog.ts)`);
      const codes = byStatus.get(status) ?? [];
      if (!codes.includes(code)) codes.push(code);
      byStatus.set(status, codes);
    }
  }
  return new Map([...byStatus].sort(([a], [b]) => a - b));
}

const kebab = (code: string) => code.toLowerCase().replace(/_/g, '-');

/**
 * Response entries for the codes an operation can answer: per status one Problem whose `code` is
 * narrowed to those codes (generated clients type it as a union), one example, and a description
 * listing the codes with their meaning.
 */
export function errorResponses(...specs: ErrorSpec[]) {
  const entries = [...codesByStatus(specs)].map(([status, codes]) => {
    const reason = STATUS_CODES[status] ?? 'Error';
    const first = codes[0]!;
    const example = {
      type: `urn:docproc:problem:${kebab(first)}`,
      title: reason,
      status,
      detail: ERROR_CATALOG[first].meaning,
      instance: '/v1/…',
      code: first,
      requestId: '3f0c9a52-8d1e-4f7b-9a55-0d6c2b1e7a10',
      error: reason,
      message: ERROR_CATALOG[first].meaning,
    };
    const schema = { allOf: [{ $ref: 'Problem' }, { type: 'object', required: ['code'], properties: { code: { type: 'string', enum: codes } } }] };
    return [status, {
      description: `${reason}: ${codes.map((code) => `\`${code}\``).join(', ')}. ${codes.map((code) => `${code} — ${ERROR_CATALOG[code].meaning}`).join(' ')}`,
      content: { [PROBLEM_CONTENT_TYPE]: { schema, example } },
    }] as const;
  });
  return Object.fromEntries(entries) as Record<number, { description: string; content: Record<string, { schema: object; example: object }> }>;
}

type Header = { type: string; description: string };

const REQUEST_ID: Record<string, Header> = {
  'X-Request-Id': { type: 'string', description: "The request's id (the caller's own when TRUST_REQUEST_ID allows it, else generated); also `requestId` in errors and every log line." },
};
const RATE_LIMIT: Record<string, Header> = {
  'X-RateLimit-Limit': { type: 'integer', description: 'Requests allowed per window for this API key (or client).' },
  'X-RateLimit-Remaining': { type: 'integer', description: 'Requests left in the current window.' },
  'X-RateLimit-Reset': { type: 'integer', description: 'Seconds until the window resets.' },
};
const RETRY_AFTER: Record<string, Header> = {
  'Retry-After': { type: 'integer', description: 'Seconds to wait before retrying (429 and 503 answers).' },
};
const CONTENT_DISPOSITION: Record<string, Header> = {
  'Content-Disposition': { type: 'string', description: 'attachment; filename="…"; filename*=UTF-8\'\'… (binary answers): the upload\'s name with the new extension.' },
};
const WARNINGS: Record<string, Header> = {
  'X-Docproc-Warnings': {
    type: 'string',
    description: 'Engine warnings, each URI-encoded, joined by ", " (at most 8 entries, the last "and N more"; absent when there are none). JSON answers carry them whole as `warnings`.',
  },
};

type ResponseEntry = Record<string, unknown> & { headers?: Record<string, Header>; content?: Record<string, { schema?: { format?: string } }> };

const isBinary = (entry: ResponseEntry) => Object.values(entry.content ?? {}).some((media) => media.schema?.format === 'binary');
const hasDocumentReply = (route: RouteOptions) => ['/v1/convert', '/v1/annotate', '/v1/sign', '/v1/verify'].some((path) => route.url === path || route.url.startsWith(`${path}/multipart`));

/** The headers a route's answer with this status carries. */
function headersFor(route: RouteOptions, status: string, entry: ResponseEntry): Record<string, Header> {
  const keyed = (route.config as { public?: boolean } | undefined)?.public !== true;
  const code = Number(status);
  return {
    ...REQUEST_ID,
    ...(keyed ? RATE_LIMIT : {}),
    ...(code === 429 || code === 503 ? RETRY_AFTER : {}),
    ...(code === 200 && isBinary(entry) ? CONTENT_DISPOSITION : {}),
    ...(code === 200 && hasDocumentReply(route) ? WARNINGS : {}),
  };
}

/**
 * Declares every response header on every documented route as it is registered. A status given
 * as a bare schema (e.g. verify's report) is copied with its headers (and a description when it has
 * none), so the shared schema object is not changed.
 */
export function installResponseDocs(app: FastifyInstance): void {
  app.addHook('onRoute', (route: RouteOptions) => {
    const schema = route.schema as { hide?: boolean; response?: Record<string, ResponseEntry> } | undefined;
    if (!schema?.response || schema.hide) return;
    for (const [status, entry] of Object.entries(schema.response)) {
      const headers = { ...headersFor(route, status, entry), ...entry.headers };
      // A bare schema without a description would be "Default Response": name it by its title or status.
      const description = entry.description ?? (typeof entry.title === 'string' ? entry.title : STATUS_CODES[Number(status)]);
      schema.response[status] = { ...entry, description, headers };
    }
  });
}
