import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { NO_BODY } from '../http/body-budget.js';
import type { Services } from '../services.js';

/** GET / (what this API is, JSON or plain text for curl) and GET /documentation, as SuperDoc has them. */
const ApiInformationSchema = Type.Object({
  name: Type.String(),
  version: Type.String(),
  message: Type.String(),
  endpoints: Type.Object({ convert: Type.String(), health: Type.String(), docs: Type.String() }, { additionalProperties: Type.String() }),
  authentication: Type.String(),
  example: Type.String(),
  links: Type.Object({ documentation: Type.String(), github: Type.String(), support: Type.String() }),
});

const TERMINAL_CLIENTS = /^(curl|wget|httpie|xh)\//i;

export default function rootRoutes(services: Services): FastifyPluginAsyncTypebox {
  return async (app) => {
    const information = (base: string) => ({
      name: 'docproc',
      version: 'v1',
      message: 'Document processing API: convert, annotate, sign and verify office documents',
      endpoints: {
        convert: 'POST /v1/convert',
        annotate: 'POST /v1/annotate',
        sign: 'POST /v1/sign',
        verify: 'POST /v1/verify',
        health: 'GET /v1/health',
        docs: 'GET /docs',
      },
      authentication: 'Include your API key in the Authorization header: Bearer dps_… (get one with GET /v1/auth/register and /v1/auth/verify)',
      example: `curl -H "Authorization: Bearer YOUR_API_KEY" ${base}/v1/health`,
      // No public repository: `github` stays empty rather than pointing somewhere made up.
      links: { documentation: `${base}/documentation`, github: '', support: `${base}/docs` },
    });

    app.get(
      '/',
      {
        bodyLimit: NO_BODY,
        config: { public: true, bodyBudget: NO_BODY },
        schema: {
          operationId: 'apiInformation',
          tags: ['Health'],
          summary: 'API information',
          description: 'What this API offers and how to start: JSON, or plain text when called from curl or wget (or with `Accept: text/plain`).',
          response: { 200: { content: { 'application/json': { schema: ApiInformationSchema }, 'text/plain': { schema: Type.String() } } } },
        },
      },
      async (request, reply) => {
        const base = services.config.publicUrl ?? `${request.protocol}://${request.host}`;
        const info = information(base.replace(/\/$/, ''));
        const accept = request.headers.accept ?? '';
        const wantsText = TERMINAL_CLIENTS.test(request.headers['user-agent'] ?? '') ? !/application\/json/.test(accept) : /^text\/plain/.test(accept);
        if (!wantsText) return reply.type('application/json').send(info);
        const endpoints = Object.entries(info.endpoints).map(([name, route]) => `  ${name.padEnd(9)} ${route}`);
        return reply.type('text/plain; charset=utf-8').send([`${info.name} ${info.version}: ${info.message}`, '', 'Endpoints:', ...endpoints, '', `Authentication: ${info.authentication}`, `Example: ${info.example}`, `Documentation: ${info.links.documentation}`, ''].join('\n'));
      },
    );

    app.get(
      '/documentation',
      { bodyLimit: NO_BODY, config: { public: true, bodyBudget: NO_BODY }, schema: { hide: true } },
      async (_request, reply) => reply.redirect('/docs', 302),
    );
  };
}
