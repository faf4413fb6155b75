import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { problemResponses } from '../../http/problem.js';
import type { Services } from '../../services.js';

const Email = Type.String({ format: 'email', maxLength: 254, description: 'Your e-mail address', examples: ['ada@example.com'] });
/** SuperDoc answers these routes with a bare JSON string; Fastify would send a string as text/plain. */
const sendJsonString = (reply: FastifyReply, value: string) => reply.type('application/json; charset=utf-8').send(JSON.stringify(value));

export const REGISTER_REPLY = 'Check your email for verification code.';

export default function authRoutes(services: Services): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/auth/register',
      {
        config: { public: true },
        schema: {
          operationId: 'register',
          tags: ['Account'],
          summary: 'E-mail a verification code',
          description: 'Sends a 6-digit code, valid 15 minutes and usable once, to the address. The answer is the same whether or not the address is known.',
          security: [],
          querystring: Type.Object({ email: Email }, { additionalProperties: false }),
          response: {
            200: Type.String({ examples: [REGISTER_REPLY] }),
            ...problemResponses(400, 429, 503),
          },
        },
      },
      async (request, reply) => {
        await services.accounts.requestCode(request.query.email, request.ip);
        return sendJsonString(reply, REGISTER_REPLY);
      },
    );

    app.get(
      '/auth/verify',
      {
        config: { public: true },
        schema: {
          operationId: 'verifyEmail',
          tags: ['Account'],
          summary: 'Exchange the code for an API key',
          description: 'Returns a new API key once; it cannot be shown again (only its hash is kept). Use it as `Authorization: Bearer <key>`. Every failure gets the same 401; each client has five tries at a code (fifty from all clients together burn it), and verification is rate-limited per client (429).',
          security: [],
          querystring: Type.Object(
            { email: Email, code: Type.String({ pattern: '^[0-9]{6}$', description: 'The 6-digit code from the mail', examples: ['123456'] }) },
            { additionalProperties: false },
          ),
          response: {
            200: Type.String({ description: 'The API key', examples: ['dps_4Vq0bX3kT9mW2sR7yL1pN8cH5jD6fG0aZ2x9Q1'] }),
            ...problemResponses(400, 401, 429, 503),
          },
        },
      },
      async (request, reply) => {
        reply.header('cache-control', 'no-store');
        return sendJsonString(reply, await services.accounts.verifyCode(request.query.email, request.query.code, request.ip));
      },
    );
  };
}
