import path from 'node:path';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { WARNING_CODES, type Warning } from '../documents/warnings.js';
import { warningsHeader } from './response-head.js';

/** One engine warning as answered in JSON bodies (`warnings`); the codes are stable. */
export const WarningSchema = Type.Object(
  {
    code: Type.String({ enum: Object.keys(WARNING_CODES), description: Object.entries(WARNING_CODES).map(([code, meaning]) => `\`${code}\`: ${meaning}`).join(' ') }),
    message: Type.String({ description: 'What happened, for people' }),
    field: Type.Optional(Type.String({ description: 'The field, tag, image or signature field it is about' })),
  },
  { $id: 'Warning', title: 'Warning', additionalProperties: false, description: 'A note about a result that succeeded' },
);

export const WarningsSchema = Type.Array(Type.Ref('Warning'), {
  description: 'Notes about the result (a tag left empty, an image not embedded, a signing choice). Empty when there are none; the same warnings are in the X-Docproc-Warnings header, capped.',
});

export const DocumentResultSchema = Type.Object(
  {
    document: Type.Object({
      base64: Type.String({ description: 'The resulting document, base64-encoded' }),
      contentType: Type.String({ examples: ['application/pdf'] }),
    }),
    warnings: WarningsSchema,
  },
  { $id: 'DocumentResult', title: 'DocumentResult', description: 'A document returned inside JSON (SuperDoc API shape)' },
);

export const CONTENT_TYPES = {
  pdf: 'application/pdf',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
} as const;

export type OutputFormat = keyof typeof CONTENT_TYPES;

/** 200 response entries: the binary document, and (for JSON requests) the DocumentResult. */
export function documentResponses(formats: OutputFormat[], json: boolean) {
  const content: Record<string, { schema: unknown }> = {};
  for (const f of formats) content[CONTENT_TYPES[f]] = { schema: { type: 'string', format: 'binary' } };
  if (json) content['application/json'] = { schema: Type.Ref('DocumentResult') };
  return { 200: { description: 'The resulting document', content } };
}

/** Longest file name we answer with, in UTF-8 bytes (the usual file-system limit). */
const MAX_FILENAME_BYTES = 255;

/**
 * Characters a file name we answer with never holds: controls, and bidirectional formatting
 * (U+202E and its kin: "invoice<U+202E>fdp.exe" shows as "invoiceexe.pdf").
 */
const UNSAFE_IN_FILENAME = /[\p{Cc}\p{Bidi_Control}]/gu;

/**
 * The upload's base name with the new extension, e.g. "Contract v2.docx" → "Contract v2.pdf",
 * without control or bidi characters, cut (by code point) so the whole name is at most 255 UTF-8 bytes.
 */
export function outputFilename(uploaded: string | undefined, format: OutputFormat, fallback = 'document'): string {
  let base = path.basename((uploaded ?? '').replace(UNSAFE_IN_FILENAME, '')).replace(/\.[^.]+$/, '').trim() || fallback;
  const room = MAX_FILENAME_BYTES - Buffer.byteLength(`.${format}`);
  if (Buffer.byteLength(base) > room) {
    let kept = '';
    let bytes = 0;
    for (const ch of base) {
      const size = Buffer.byteLength(ch);
      if (bytes + size > room) break;
      kept += ch;
      bytes += size;
    }
    base = kept.trim() || fallback;
  }
  return `${base}.${format}`;
}

function contentDisposition(filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_');
  return `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

/** JSON requests get JSON back unless Accept asks for the binary type; others get the file. */
export function wantsJson(request: FastifyRequest, format: OutputFormat): boolean {
  const isJsonRequest = (request.headers['content-type'] ?? '').startsWith('application/json');
  if (!isJsonRequest) return false;
  const accept = request.headers.accept ?? '';
  return !(accept.includes(CONTENT_TYPES[format]) || accept.includes('application/octet-stream'));
}

/** The engine warnings in the X-Docproc-Warnings header (bounded: see warningsHeader), for binary and JSON replies alike. */
export function sendWarningsHeader(reply: FastifyReply, warnings: readonly Warning[]) {
  const header = warningsHeader(warnings.map((w) => w.message));
  if (header) reply.header('x-docproc-warnings', header);
}

/** The document as the request asked for it: JSON `{document, warnings}` or the file; warnings in the header either way. */
export function sendDocument(request: FastifyRequest, reply: FastifyReply, data: Buffer, format: OutputFormat, filename: string, warnings: readonly Warning[] = []) {
  sendWarningsHeader(reply, warnings);
  if (wantsJson(request, format)) {
    return reply.type('application/json').send({ document: { base64: data.toString('base64'), contentType: CONTENT_TYPES[format] }, warnings });
  }
  return reply.type(CONTENT_TYPES[format]).header('content-disposition', contentDisposition(filename)).send(data);
}
