import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { DomainError, ErrorCode } from '../errors/domain-error.js';
import { StoreUnavailableError } from '../store/store.js';
import { toHttpFailure, type HttpFailure } from './error-status.js';
import { buildProblem, problemContentType } from './problem.js';
import { MULTIPART_COUNTS } from './multipart.js';
import { readableSize } from './sizes.js';
import { summarize, validationDetails } from './validation-messages.js';

/** Fastify's own errors that are the caller's fault, mapped to our codes and messages. */
const FRAMEWORK_ERRORS: Record<string, { status: number; code: ErrorCode; message?: string }> = {
  FST_ERR_CTP_INVALID_MEDIA_TYPE: { status: 415, code: ErrorCode.UNSUPPORTED_MEDIA_TYPE, message: 'This content type is not accepted here; see the operation in /docs for the accepted ones.' },
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: { status: 400, code: ErrorCode.VALIDATION_ERROR },
  FST_ERR_CTP_EMPTY_JSON_BODY: { status: 400, code: ErrorCode.VALIDATION_ERROR, message: 'The JSON body is empty.' },
  FST_FILES_LIMIT: { status: 413, code: ErrorCode.FILE_TOO_LARGE, message: `Too many files in the multipart request: at most ${MULTIPART_COUNTS.files} file parts.` },
  FST_FIELDS_LIMIT: { status: 413, code: ErrorCode.FILE_TOO_LARGE, message: `Too many text fields in the multipart request: at most ${MULTIPART_COUNTS.fields}.` },
  FST_PARTS_LIMIT: { status: 413, code: ErrorCode.FILE_TOO_LARGE, message: `Too many parts in the multipart request: at most ${MULTIPART_COUNTS.parts}.` },
  FST_INVALID_MULTIPART_CONTENT_TYPE: { status: 415, code: ErrorCode.UNSUPPORTED_MEDIA_TYPE, message: 'Send the request as multipart/form-data.' },
  FST_MULTIPART_INVALID_CONTENT_TYPE: { status: 415, code: ErrorCode.UNSUPPORTED_MEDIA_TYPE },
  FST_PROTO_VIOLATION: { status: 400, code: ErrorCode.VALIDATION_ERROR, message: 'The body contains a forbidden property name.' },
  FST_ERR_VALIDATION: { status: 400, code: ErrorCode.VALIDATION_ERROR },
};

/** Size-limit errors Fastify raises itself, told in MB with the limit that applies to this route. */
function sizeLimitError(fe: FastifyError, request: FastifyRequest, maxFileBytes: number): DomainError | undefined {
  if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    const limit = request.routeOptions.bodyLimit;
    return new DomainError(ErrorCode.FILE_TOO_LARGE, `The request body is larger than this operation accepts${limit ? ` (${readableSize(limit)})` : ''}; send a smaller document, or a large file as a multipart part where the operation takes one.`);
  }
  if (fe.code === 'FST_REQ_FILE_TOO_LARGE') {
    return new DomainError(ErrorCode.FILE_TOO_LARGE, `The uploaded file is larger than ${readableSize(maxFileBytes)}, the most this service accepts per file (MAX_FILE_BYTES).`);
  }
  return undefined;
}

function failureOf(err: FastifyError | Error, request: FastifyRequest, maxFileBytes: number): HttpFailure {
  if (err instanceof DomainError) return toHttpFailure(err);
  if (err instanceof StoreUnavailableError) {
    return toHttpFailure(new DomainError(ErrorCode.STORE_UNAVAILABLE, 'The service cannot reach its key store right now; try again shortly.', { retryAfterSeconds: 5 }));
  }
  const fe = err as FastifyError;
  if (fe.validation) {
    const details = validationDetails(fe.validation as never, fe.validationContext ?? 'request');
    return { status: 400, code: ErrorCode.VALIDATION_ERROR, message: summarize(details), details };
  }
  if (err instanceof SyntaxError && fe.statusCode === 400) {
    return { status: 400, code: ErrorCode.VALIDATION_ERROR, message: 'The body is not valid JSON.' };
  }
  const sized = sizeLimitError(fe, request, maxFileBytes);
  if (sized) return toHttpFailure(sized);
  const known = fe.code ? FRAMEWORK_ERRORS[fe.code] : undefined;
  if (known) return { status: known.status, code: known.code, message: known.message ?? fe.message };
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    return { status: fe.statusCode, code: ErrorCode.VALIDATION_ERROR, message: fe.message };
  }
  return { status: 500, code: ErrorCode.INTERNAL_ERROR, message: 'An unexpected error occurred; it has been logged with the request id.' };
}

/** Sends a failure (a DomainError is mapped through http/error-status.ts) in the one problem+json format. */
export function sendProblem(request: FastifyRequest, reply: FastifyReply, failure: DomainError | HttpFailure) {
  const error = failure instanceof DomainError ? toHttpFailure(failure) : failure;
  if (error.headers) reply.headers(error.headers);
  if (error.status === 401) reply.header('www-authenticate', 'Bearer realm="docproc"');
  return reply
    .code(error.status)
    .type(problemContentType(request.headers.accept))
    .send(
      buildProblem({
        status: error.status,
        code: error.code,
        detail: error.message,
        instance: request.url.split('?')[0],
        requestId: String(request.id),
        details: error.details,
        extensions: error.extensions,
      }),
    );
}

/** The one error handler: every failure, ours or Fastify's, leaves as one problem+json. */
export function installErrorHandling(app: FastifyInstance, limits: { maxFileBytes: number }) {
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const failure = failureOf(err, request, limits.maxFileBytes);
    if (failure.status >= 500) request.log.error({ err }, 'request failed');
    else request.log.info({ code: failure.code, status: failure.status }, failure.message);
    return sendProblem(request, reply, failure);
  });

  app.setNotFoundHandler((request, reply) =>
    sendProblem(request, reply, new DomainError(ErrorCode.NOT_FOUND, `No operation at ${request.method} ${request.url.split('?')[0]}; see /docs.`)),
  );
}
