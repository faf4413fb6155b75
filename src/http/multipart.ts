import type { MultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';

export interface UploadedFileInfo {
  filename: string;
  mimetype: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Names and types of uploaded file parts, by field name (the bytes are in request.body). */
    uploadedFiles?: Record<string, UploadedFileInfo>;
  }
}

/** onFile hook for @fastify/multipart: buffer the part (limits apply) and keep its file name. */
export async function rememberUploadedFile(this: FastifyRequest, part: MultipartFile): Promise<void> {
  await part.toBuffer();
  this.uploadedFiles ??= {};
  this.uploadedFiles[part.fieldname] = { filename: part.filename, mimetype: part.mimetype };
}
