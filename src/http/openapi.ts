import type { SwaggerOptions } from '@fastify/swagger';

export function openApiOptions(version: string): SwaggerOptions {
  return {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'docproc',
        version,
        description:
          'Stateless document processing: convert (DOCX→PDF, Markdown/HTML→DOCX/PDF), annotate DOCX templates, sign and verify. ' +
          'Nothing you send is stored. Get an API key with GET /v1/auth/register then GET /v1/auth/verify, and send it as `Authorization: Bearer <key>`. ' +
          'Every error is application/problem+json (RFC 9457) with a stable `code`, or the same body as application/json when the Accept header prefers that. ' +
          'Every operation takes exactly what it declares: an undeclared query parameter, body property or multipart field is refused with 400 VALIDATION_ERROR naming it (objects declare `additionalProperties`).',
      },
      servers: [{ url: '/' }],
      tags: [
        { name: 'Health', description: 'Liveness and readiness' },
        { name: 'Account', description: 'E-mail verification and API keys' },
        { name: 'Convert', description: 'DOCX→PDF, Markdown/HTML→DOCX or PDF' },
        { name: 'Annotate', description: 'Fill DOCX templates' },
        { name: 'Sign', description: 'Sign PDF and DOCX' },
        { name: 'Verify', description: 'Check signed documents' },
        { name: 'Operations', description: 'Metrics' },
      ],
      components: {
        securitySchemes: {
          bearerAuth: {
            type: 'http',
            scheme: 'bearer',
            description: 'For every /v1 operation: your API key (starts with `dps_`), from GET /v1/auth/register then GET /v1/auth/verify. Paste the key alone; it is sent as `Authorization: Bearer <key>`.',
          },
          metricsToken: {
            type: 'http',
            scheme: 'bearer',
            description: "Only for GET /metrics, and only for the service's operators: the METRICS_TOKEN the service was started with (not an API key). Leave it empty to call the API.",
          },
        },
      },
      security: [{ bearerAuth: [] }],
    },
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  };
}
