import type { MultipartFile } from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DomainError, ErrorCode } from '../errors/domain-error.js';
import { assertJsonDepth } from './json-depth.js';
import { readableSize } from './sizes.js';
import { multipartBoundary, MultipartWatch, type LimitExceeded } from './multipart-watch.js';

export interface UploadedFile {
  filename: string;
  mimetype: string;
  data: Buffer;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Uploaded file parts by field name. */
    uploadedFiles?: Record<string, UploadedFile>;
    /** Every uploaded file part by field name, in order (a repeated part such as convert's `files`). */
    uploadedFileLists?: Record<string, UploadedFile[]>;
    /** Why the multipart body was stopped while it arrived (a part or the body past its limit). */
    multipartRefusal?: DomainError;
  }
}

/** How many parts of each kind one multipart request may have (@fastify/multipart limits). */
/** Part counts per request; files leaves room for convert's document, reference DOCX and its 32 `files` (their bytes are bounded by the route's body budget). */
export const MULTIPART_COUNTS = { files: 40, fields: 20, parts: 60 } as const;

const malformed = () =>
  new DomainError(ErrorCode.VALIDATION_ERROR, 'The multipart body is malformed or ends before its closing boundary (a part was never terminated); send a complete multipart/form-data body.');

/**
 * onFile hook for @fastify/multipart (attachFieldsToBody: 'keyValues'): buffers the part under
 * the size limit and keeps it on the request, while the body gets the file NAME for that field.
 * So the body schema can declare file fields as `string, format: binary` (what OpenAPI and
 * Swagger UI need for a file picker) and still be validated by Ajv like any other field.
 */
export async function rememberUploadedFile(this: FastifyRequest, part: MultipartFile): Promise<void> {
  let data: Buffer;
  try {
    data = await part.toBuffer();
  } catch (err) {
    if (this.multipartRefusal) throw this.multipartRefusal;
    if ((err as { code?: string }).code === 'FST_REQ_FILE_TOO_LARGE') throw err;
    // busboy: "Part terminated early due to unexpected end of multipart data", and the like.
    throw malformed();
  }
  this.uploadedFiles ??= {};
  this.uploadedFileLists ??= {};
  const file = { filename: part.filename, mimetype: part.mimetype, data };
  this.uploadedFiles[part.fieldname] = file;
  (this.uploadedFileLists[part.fieldname] ??= []).push(file);
  (part as unknown as { value: string }).value = part.filename || part.fieldname;
}

export function uploadedFile(request: FastifyRequest, field: string): UploadedFile {
  const file = request.uploadedFiles?.[field];
  if (!file) throw new DomainError(ErrorCode.VALIDATION_ERROR, `The multipart field "${field}" must be a file.`, { details: [{ field: `body.${field}`, issue: 'must be a file part' }] });
  return file;
}

/** Parses a multipart text field that carries JSON (fields, signer, auditTrail, …). */
export function jsonField<T>(value: string | undefined, field: string): T | undefined {
  if (value === undefined || value === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new DomainError(ErrorCode.VALIDATION_ERROR, `The multipart field "${field}" is not valid JSON.`, { details: [{ field: `body.${field}`, issue: 'must be a JSON string' }] });
  }
  assertJsonDepth(parsed, `body.${field}`);
  return parsed as T;
}

interface MultipartShape {
  /** Every declared part. */
  declared: Set<string>;
  /** Declared parts that are files (format: binary), and which of them are required. */
  files: string[];
  requiredFiles: string[];
  /** Undeclared file parts are allowed (annotate's cid: images). */
  openToFiles: boolean;
}

/**
 * What a route's multipart body schema declares: its `multipart/form-data` content entry, or a
 * body schema the route only consumes as multipart (convert). None declared means none allowed.
 */
function multipartShape(request: FastifyRequest): MultipartShape {
  type ObjectSchema = { properties?: Record<string, { format?: string }>; required?: string[]; additionalProperties?: unknown };
  const body = (request.routeOptions.schema as { body?: ObjectSchema & { content?: Record<string, { schema?: ObjectSchema }> } } | undefined)?.body;
  const schema = (body?.content ? body.content['multipart/form-data']?.schema : body) ?? {};
  const properties = schema.properties ?? {};
  const files = Object.keys(properties).filter((name) => properties[name]?.format === 'binary');
  return {
    declared: new Set(Object.keys(properties)),
    files,
    requiredFiles: files.filter((name) => schema.required?.includes(name)),
    openToFiles: typeof schema.additionalProperties === 'object' && schema.additionalProperties !== null,
  };
}

const partError = (field: string, issue: string, message: string) =>
  new DomainError(ErrorCode.VALIDATION_ERROR, message, { details: [{ field: `body.${field}`, issue }] });

const names = (list: readonly string[]) => list.map((n) => `\`${n}\``).join(', ');

/**
 * Parts a route does not take, and file parts it needs but did not get, named with what to send
 * instead: "unexpected part `document`; send the file as `file`".
 */
function checkPartNames(request: FastifyRequest, shape: MultipartShape): void {
  const received = Object.keys(request.body as Record<string, unknown>);
  const fileParts = Object.keys(request.uploadedFiles ?? {});
  const missingFiles = shape.requiredFiles.filter((name) => !fileParts.includes(name));
  for (const name of received) {
    const isFile = fileParts.includes(name);
    if (shape.declared.has(name) || (isFile && shape.openToFiles)) continue;
    if (isFile && missingFiles.length > 0) {
      throw partError(name, 'unexpected part', `Unexpected part \`${name}\`; send the file as \`${missingFiles[0]}\`.`);
    }
    throw partError(name, 'unexpected part', `Unexpected part \`${name}\`; this operation takes the parts ${names([...shape.declared])}.`);
  }
  for (const name of missingFiles) {
    const stray = fileParts.filter((part) => !shape.declared.has(part));
    const sentAsText = received.includes(name);
    const hint = sentAsText
      ? ` It arrived as a text field: send it as a file (in curl, -F "${name}=@path").`
      : stray.length > 0
        ? ` The request has the file part${stray.length > 1 ? 's' : ''} ${names(stray)}: send the document as \`${name}\`.`
        : ` Send the document as a file part named \`${name}\`.`;
    throw partError(name, 'required file part', `The required part \`${name}\` is missing.${hint}`);
  }
}

const tooLarge = (what: LimitExceeded, maxFileBytes: number): DomainError => {
  if (what.kind === 'body') return new DomainError(ErrorCode.FILE_TOO_LARGE, `The request body is larger than this operation accepts (${readableSize(what.limit)}); it was stopped there.`);
  if (what.kind === 'file') return new DomainError(ErrorCode.FILE_TOO_LARGE, `The file part \`${what.name}\` is larger than ${readableSize(maxFileBytes)}, the most this service accepts per file (MAX_FILE_BYTES); it was stopped there.`);
  return fieldTooLarge(what.name ?? '(unnamed)', what.limit);
};

const fieldTooLarge = (name: string, limit: number) =>
  new DomainError(ErrorCode.FILE_TOO_LARGE, `The multipart text field "${name}" is larger than ${readableSize(limit)} (MULTIPART_FIELD_MAX_BYTES); send documents and images as file parts.`);

/** After a refusal the rest of the body is not read: the connection closes this long after the answer. */
const LINGER_MS = 500;

/**
 * Watches a multipart body while @fastify/multipart feeds it to busboy (see MultipartWatch): when a
 * part or the whole body passes its limit, busboy is stopped with the 413, so the route answers at
 * once, and the connection is closed after the answer instead of reading the rest of the upload.
 */
function watchMultipartBodies(app: FastifyInstance, limits: { maxFileBytes: number; maxFieldBytes: number; fallbackBodyBytes: number }): void {
  app.addHook('onRequest', async (request) => {
    const type = request.headers['content-type'];
    if (!/^multipart\//i.test(type ?? '')) return;
    const boundary = multipartBoundary(type);
    if (!boundary) throw new DomainError(ErrorCode.VALIDATION_ERROR, 'The multipart Content-Type has no boundary parameter.');
    const raw = request.raw;
    const pipe = raw.pipe;
    // @fastify/multipart pipes the request into busboy in its preValidation hook; the watch reads the
    // same chunks from then on (a 'data' listener added earlier would start the flow before busboy).
    raw.pipe = function <T extends NodeJS.WritableStream>(this: typeof raw, destination: T, options?: { end?: boolean }): T {
      raw.pipe = pipe;
      const onData = (chunk: Buffer) => watch.push(chunk);
      const watch = new MultipartWatch(boundary, { fileBytes: limits.maxFileBytes, fieldBytes: limits.maxFieldBytes, bodyBytes: request.routeOptions.config?.bodyBudget ?? limits.fallbackBodyBytes }, (what) => {
        request.multipartRefusal = tooLarge(what, limits.maxFileBytes);
        raw.off('data', onData);
        raw.unpipe(destination as unknown as NodeJS.WritableStream);
        raw.pause();
        (destination as unknown as { destroy(err: Error): void }).destroy(request.multipartRefusal);
      });
      raw.on('data', onData);
      return pipe.call(raw, destination, options) as T;
    };
  });
  app.addHook('onSend', async (request, reply, payload) => {
    if (!request.multipartRefusal) return payload;
    reply.header('connection', 'close');
    // Destroying the request ends its connection (the answer has been written by then).
    reply.raw.once('finish', () => setTimeout(() => request.raw.destroy(), LINGER_MS).unref());
    return payload;
  });
}

/**
 * After @fastify/multipart has read the body: parts the route does not declare are refused (400, naming
 * the part to send instead), a missing file part is named, and a text field that reached MULTIPART_FIELD_MAX_BYTES (busboy cuts it there silently) is 413,
 * never a silently shortened value.
 */
export function installMultipartChecks(app: FastifyInstance, limits: { maxFileBytes: number; maxFieldBytes: number; fallbackBodyBytes: number }): void {
  const { maxFieldBytes } = limits;
  watchMultipartBodies(app, limits);
  app.addHook('preValidation', async (request) => {
    if (!request.isMultipart() || !request.body || typeof request.body !== 'object') return;
    checkPartNames(request, multipartShape(request));
    for (const [name, value] of Object.entries(request.body as Record<string, unknown>)) {
      const isFile = request.uploadedFiles?.[name] !== undefined;
      if (!isFile && typeof value === 'string' && Buffer.byteLength(value) >= maxFieldBytes) {
        throw fieldTooLarge(name, maxFieldBytes);
      }
    }
  });
}
