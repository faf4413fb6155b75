import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { DomainError, ErrorCode } from '../../errors/domain-error.js';
import { safeFetch } from '../../inputs/safe-fetch.js';
import type { Services } from '../../services.js';

/** Query flag values as they arrive from forms and Swagger UI. */
export const BooleanString = Type.Union([Type.Boolean(), Type.Literal('true'), Type.Literal('false')]);
export const isTrue = (v: boolean | string | undefined) => v === true || v === 'true';

/** Fetches caller-given image URLs under the same SSRF rules as documents, when URLs are allowed. */
export async function fetchRemoteImages(services: Services, urls: string[]): Promise<Record<string, Buffer>> {
  if (urls.length === 0) return {};
  const policy = services.config.urlInputs;
  if (!policy.allowed) {
    throw new DomainError(ErrorCode.URL_NOT_ALLOWED, 'Images by URL are disabled on this service (ALLOW_URL_INPUTS); send them as base64, data: URIs or multipart parts (cid:).');
  }
  const entries = await Promise.all(urls.map(async (url) => [url, await safeFetch(url, policy)] as const));
  return Object.fromEntries(entries);
}

/** All file parts except the named ones, keyed as `cid:<part name>` values reference them. */
export function attachedParts(request: FastifyRequest, except: string[]): Record<string, Buffer> {
  const parts: Record<string, Buffer> = {};
  for (const [name, file] of Object.entries(request.uploadedFiles ?? {})) {
    if (!except.includes(name)) parts[`cid:${name}`] = file.data;
  }
  return parts;
}

export const toBuffer = (u: Uint8Array) => Buffer.from(u.buffer, u.byteOffset, u.byteLength);
