import type { MultipartFile } from '@fastify/multipart';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError, ErrorCode } from '../errors/app-error.js';
import { assertJsonDepth } from './json-depth.js';

export interface UploadedFile {
  filename: string;
  mimetype: string;
  data: Buffer;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Uploaded file parts by field name. */
    uploadedFiles?: Record<string, UploadedFile>;
  }
}

/**
 * onFile hook for @fastify/multipart (attachFieldsToBody: 'keyValues'): buffers the part under
 * the size limit and keeps it on the request, while the body gets the file NAME for that field.
 * So the body schema can declare file fields as `string, format: binary` (what OpenAPI and
 * Swagger UI need for a file picker) and still be validated by Ajv like any other field.
 */
export async function rememberUploadedFile(this: FastifyRequest, part: MultipartFile): Promise<void> {
  const data = await part.toBuffer();
  this.uploadedFiles ??= {};
  this.uploadedFiles[part.fieldname] = { filename: part.filename, mimetype: part.mimetype, data };
  (part as unknown as { value: string }).value = part.filename || part.fieldname;
}

export function uploadedFile(request: FastifyRequest, field: string): UploadedFile {
  const file = request.uploadedFiles?.[field];
  if (!file) throw new AppError(400, ErrorCode.VALIDATION_ERROR, `The multipart field "${field}" must be a file.`, { details: [{ field: `body.${field}`, issue: 'must be a file part' }] });
  return file;
}

/** Parses a multipart text field that carries JSON (fields, signer, auditTrail, …). */
export function jsonField<T>(value: string | undefined, field: string): T | undefined {
  if (value === undefined || value === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new AppError(400, ErrorCode.VALIDATION_ERROR, `The multipart field "${field}" is not valid JSON.`, { details: [{ field: `body.${field}`, issue: 'must be a JSON string' }] });
  }
  assertJsonDepth(parsed, `body.${field}`);
  return parsed as T;
}

/** The fields a route's multipart body schema declares, when it declares them. */
function declaredFields(request: FastifyRequest): Set<string> | undefined {
  const schema = request.routeOptions.schema as { body?: { content?: Record<string, { schema?: { properties?: object } }> } } | undefined;
  const properties = schema?.body?.content?.['multipart/form-data']?.schema?.properties;
  return properties ? new Set(Object.keys(properties)) : undefined;
}

/**
 * After @fastify/multipart has read the body: text fields the route does not declare are refused (400),
 * and a text field that reached MULTIPART_FIELD_MAX_BYTES (busboy cuts it there silently) is 413,
 * never a silently shortened value.
 */
export function installMultipartChecks(app: FastifyInstance, maxFieldBytes: number): void {
  app.addHook('preValidation', async (request) => {
    if (!request.isMultipart() || !request.body || typeof request.body !== 'object') return;
    const declared = declaredFields(request);
    for (const [name, value] of Object.entries(request.body as Record<string, unknown>)) {
      // File parts may be named freely (annotate's cid: images); the file limits bound them.
      const isFile = request.uploadedFiles?.[name] !== undefined;
      if (!isFile && declared && !declared.has(name)) {
        throw new AppError(400, ErrorCode.VALIDATION_ERROR, `The multipart field "${name}" is not part of this operation.`, { details: [{ field: `body.${name}`, issue: 'unknown field' }] });
      }
      if (!isFile && typeof value === 'string' && Buffer.byteLength(value) >= maxFieldBytes) {
        throw new AppError(413, ErrorCode.FILE_TOO_LARGE, `The multipart field "${name}" is larger than ${maxFieldBytes} bytes (MULTIPART_FIELD_MAX_BYTES); send documents and images as file parts.`);
      }
    }
  });
}
