import { STATUS_CODES } from 'node:http';
import { Type, type Static } from '@sinclair/typebox';
import type { ErrorDetail } from '../errors/domain-error.js';

/**
 * The one error format (RFC 9457 problem+json), with `code`, `requestId` and `details`, plus
 * `error` (reason phrase) and `message` (= detail) so clients of the SuperDoc API read it too.
 */
export const ProblemSchema = Type.Object(
  {
    type: Type.String({ description: 'URI naming the kind of problem', examples: ['urn:docproc:problem:validation-error'] }),
    title: Type.String({ description: 'Short summary of the kind of problem' }),
    status: Type.Integer({ description: 'HTTP status code', examples: [400] }),
    detail: Type.String({ description: 'What went wrong for this request and what to do about it' }),
    instance: Type.String({ description: 'The request path' }),
    code: Type.String({ description: 'Stable machine-readable error code', examples: ['VALIDATION_ERROR'] }),
    requestId: Type.String({ description: 'Request id, also in the X-Request-Id header' }),
    error: Type.String({ description: 'HTTP reason phrase (SuperDoc compatibility)' }),
    message: Type.String({ description: 'Same as detail (SuperDoc compatibility)' }),
    details: Type.Optional(
      Type.Array(Type.Object({ field: Type.String(), issue: Type.String() }), { description: 'Per-field problems, for validation errors' }),
    ),
  },
  {
    $id: 'Problem',
    title: 'Problem',
    additionalProperties: true,
    description: 'RFC 9457 problem details',
    examples: [
      {
        type: 'urn:docproc:problem:validation-error',
        title: 'Bad Request',
        status: 400,
        detail: 'The request is invalid: querystring.email must match format "email".',
        instance: '/v1/auth/register',
        code: 'VALIDATION_ERROR',
        requestId: '3f0c9a52-8d1e-4f7b-9a55-0d6c2b1e7a10',
        error: 'Bad Request',
        message: 'The request is invalid: querystring.email must match format "email".',
        details: [{ field: 'querystring.email', issue: 'must match format "email"' }],
      },
    ],
  },
);

export type Problem = Static<typeof ProblemSchema> & Record<string, unknown>;

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';
export const PLAIN_JSON_CONTENT_TYPE = 'application/json';

/** q of a media type in an Accept header: the most specific range that matches it (0 when none does). */
function qualityOf(accept: string, type: string): { q: number; exact: boolean } {
  const [major] = type.split('/');
  let best = { q: 0, specificity: -1, exact: false };
  for (const item of accept.split(',').slice(0, 50)) {
    const [range = '', ...params] = item.trim().toLowerCase().split(';');
    const specificity = range === type ? 2 : range === `${major}/*` ? 1 : range === '*/*' ? 0 : -1;
    if (specificity < 0 || specificity < best.specificity) continue;
    const qParam = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    best = { q: Number.isFinite(q) ? q : 0, specificity, exact: specificity === 2 };
  }
  return { q: best.q, exact: best.exact };
}

/**
 * The error's media type: problem+json, unless the client's Accept prefers plain application/json
 * (clients generated from SuperDoc's document declare only that).
 */
export function problemContentType(accept: string | undefined): string {
  if (!accept) return PROBLEM_CONTENT_TYPE;
  const problem = qualityOf(accept, PROBLEM_CONTENT_TYPE);
  const json = qualityOf(accept, PLAIN_JSON_CONTENT_TYPE);
  const prefersJson = json.q > problem.q || (json.q === problem.q && json.q > 0 && json.exact && !problem.exact);
  return prefersJson ? PLAIN_JSON_CONTENT_TYPE : PROBLEM_CONTENT_TYPE;
}

const kebab = (code: string) => code.toLowerCase().replace(/_/g, '-');

export function buildProblem(input: {
  status: number;
  code: string;
  detail: string;
  instance: string;
  requestId: string;
  details?: ErrorDetail[];
  extensions?: Record<string, unknown>;
}): Problem {
  const reason = STATUS_CODES[input.status] ?? 'Error';
  return {
    ...input.extensions,
    type: `urn:docproc:problem:${kebab(input.code)}`,
    title: reason,
    status: input.status,
    detail: input.detail,
    instance: input.instance,
    code: input.code,
    requestId: input.requestId,
    error: reason,
    message: input.detail,
    ...(input.details && input.details.length > 0 ? { details: input.details } : {}),
  };
}

/** Response schema entries for the given error statuses, all pointing at the one Problem schema. */
export function problemResponses(...statuses: number[]) {
  const ref = Type.Ref('Problem');
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      { description: STATUS_CODES[status] ?? 'Error', content: { [PROBLEM_CONTENT_TYPE]: { schema: ref } } },
    ]),
  ) as Record<number, { description: string; content: Record<string, { schema: typeof ref }> }>;
}
