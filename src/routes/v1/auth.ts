import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { NO_BODY } from '../../http/body-budget.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { bearerToken } from '../../http/auth.js';
import { errorResponses, KEYED_ERRORS } from '../../http/response-docs.js';
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
        bodyLimit: NO_BODY,
        config: { public: true, bodyBudget: NO_BODY },
        schema: {
          operationId: 'register',
          tags: ['Account'],
          summary: 'E-mail a verification code',
          description: 'Sends a 6-digit code, valid 15 minutes and usable once, to the address. The answer is the same whether or not the address is known.',
          security: [],
          querystring: Type.Object({ email: Email }, { additionalProperties: false }),
          response: {
            200: Type.String({ examples: [REGISTER_REPLY] }),
            ...errorResponses(['VALIDATION_ERROR', 400], 'RATE_LIMIT_ERROR', 'MAIL_UNAVAILABLE', 'STORE_UNAVAILABLE', 'INTERNAL_ERROR'),
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
        bodyLimit: NO_BODY,
        config: { public: true, bodyBudget: NO_BODY },
        schema: {
          operationId: 'verifyEmail',
          tags: ['Account'],
          summary: 'Exchange the code for an API key',
          description: 'Returns a new API key once; it cannot be shown again (only its hash is kept). Use it as `Authorization: Bearer <key>`. Every failure gets the same 400 INVALID_CODE (as SuperDoc answers). Each client has five wrong tries at an address; after fifty from all clients together only the clients that asked for a code for the address may still try, so nobody else can burn your code. A new code does not replace one still pending. Verification is rate-limited per client (429).',
          security: [],
          querystring: Type.Object(
            { email: Email, code: Type.String({ pattern: '^[0-9]{6}$', description: 'The 6-digit code from the mail', examples: ['123456'] }) },
            { additionalProperties: false },
          ),
          response: {
            200: Type.String({ description: 'The API key', examples: ['dps_4Vq0bX3kT9mW2sR7yL1pN8cH5jD6fG0aZ2x9Q1'] }),
            ...errorResponses(['VALIDATION_ERROR', 400], 'INVALID_CODE', 'RATE_LIMIT_ERROR', 'STORE_UNAVAILABLE', 'INTERNAL_ERROR'),
          },
        },
      },
      async (request, reply) => {
        reply.header('cache-control', 'no-store');
        return sendJsonString(reply, await services.accounts.verifyCode(request.query.email, request.query.code, request.ip));
      },
    );

    app.delete(
      '/auth/key',
      {
        bodyLimit: NO_BODY,
        config: { bodyBudget: NO_BODY },
        schema: {
          operationId: 'revokeKey',
          tags: ['Account'],
          summary: 'Revoke the API key this request presents',
          description: 'The key stops working at once on every replica (they all read keys from the shared store), together with every key rotated from it and every key it was rotated from that is still in its grace period. Get a new one with /v1/auth/register and /v1/auth/verify.',
          response: { 204: Type.Null({ description: 'Revoked' }), ...errorResponses(...KEYED_ERRORS) },
        },
      },
      async (request, reply) => {
        await services.accounts.revokeKey(bearerToken(request));
        return reply.code(204).send(null);
      },
    );

    app.post(
      '/auth/key/rotate',
      {
        bodyLimit: NO_BODY,
        config: { bodyBudget: NO_BODY },
        schema: {
          operationId: 'rotateKey',
          tags: ['Account'],
          summary: 'Replace the API key this request presents',
          description: `Returns a new key for the same account, shown once. The presented key keeps working for KEY_ROTATION_GRACE_SECONDS (default ${services.config.auth.keyRotationGraceSeconds} s) so running deployments can switch over, then stops. Only an active key rotates: a key already rotated gets 409 KEY_NOT_ACTIVE (rotate its successor). An account rotates at most ${services.config.auth.keyRotationsPerHour} times an hour (429). The new key shares the old one's rate and concurrency limits. A leaked key should be revoked (DELETE /v1/auth/key) instead: that ends its whole lineage.`,
          response: {
            200: Type.Object({
              key: Type.String({ description: 'The new API key', examples: ['dps_4Vq0bX3kT9mW2sR7yL1pN8cH5jD6fG0aZ2x9Q1'] }),
              previousKeyExpiresAt: Type.String({ format: 'date-time', description: 'When the presented key stops working, at the latest.' }),
            }),
            ...errorResponses(...KEYED_ERRORS, 'KEY_NOT_ACTIVE'),
          },
        },
      },
      async (request, reply) => {
        reply.header('cache-control', 'no-store');
        return services.accounts.rotateKey(bearerToken(request));
      },
    );
  };
}
