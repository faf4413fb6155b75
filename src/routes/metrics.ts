import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { bearerToken, countingFailures, unauthorized } from '../http/auth.js';
import { errorResponses } from '../http/response-docs.js';
import { DomainError, ErrorCode } from '../errors/domain-error.js';
import type { Services } from '../services.js';

const digest = (text: string) => createHash('sha256').update(text).digest();

/**
 * /metrics has its own secret (METRICS_TOKEN), not an API key: anyone can register a key, and the
 * metrics describe the whole service. Without a token the route is switched off (404). Wrong or
 * missing tokens are counted per client with the API-key failures (429 past the limit).
 */
function requireMetricsToken(services: Services) {
  const token = services.config.metricsToken;
  const expected = token ? digest(token) : undefined;
  const failures = { max: services.config.limits.rateLimitPerWindow, windowSeconds: services.config.limits.rateLimitWindowSeconds };
  return async (request: FastifyRequest) => {
    if (!expected) throw new DomainError(ErrorCode.NOT_FOUND, 'Metrics are switched off on this instance (set METRICS_TOKEN).');
    await countingFailures(request, services.store, failures, async () => {
      const given = bearerToken(request, 'Missing metrics token: send "Authorization: Bearer <METRICS_TOKEN>" (the operators\' token, not an API key).');
      if (!timingSafeEqual(digest(given), expected)) throw unauthorized('Wrong metrics token.');
    });
  };
}

export default function metricsRoutes(services: Services): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/metrics',
      {
        config: { public: true },
        onRequest: requireMetricsToken(services),
        schema: {
          security: [{ metricsToken: [] }],
          operationId: 'getMetrics',
          tags: ['Operations'],
          summary: 'Prometheus metrics',
          description: 'Prometheus text exposition format (request counts and durations, worker and office pool state, process metrics). Needs the METRICS_TOKEN (not an API key); switched off (404) when the service has none.',
          response: { 200: { description: 'Prometheus text exposition format', content: { 'text/plain': { schema: Type.String({ examples: ['# HELP docproc_http_requests_total HTTP requests by route and status\n# TYPE docproc_http_requests_total counter\ndocproc_http_requests_total{method="POST",route="/v1/convert",status="200"} 42\n'] }) } } }, ...errorResponses('AUTHENTICATION_ERROR', 'NOT_FOUND', 'RATE_LIMIT_ERROR', 'STORE_UNAVAILABLE') },
        },
      },
      async (_request, reply) => {
        reply.type(services.metrics.registry.contentType);
        return services.metrics.registry.metrics();
      },
    );
  };
}
