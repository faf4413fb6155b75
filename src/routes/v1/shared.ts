import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';

/** Query flag values as they arrive from forms and Swagger UI. */
export const BooleanString = Type.Union([Type.Boolean(), Type.Literal('true'), Type.Literal('false')]);
export const isTrue = (v: boolean | string | undefined) => v === true || v === 'true';

/** All file parts except the named ones, keyed as `cid:<part name>` values reference them. */
export function attachedParts(request: FastifyRequest, except: string[]): Record<string, Buffer> {
  const parts: Record<string, Buffer> = {};
  for (const [name, file] of Object.entries(request.uploadedFiles ?? {})) {
    if (!except.includes(name)) parts[`cid:${name}`] = file.data;
  }
  return parts;
}
