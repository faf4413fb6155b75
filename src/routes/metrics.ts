import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { problemResponses } from '../http/problem.js';
import type { Services } from '../services.js';

export default function metricsRoutes(services: Services): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/metrics',
      {
        schema: {
          operationId: 'getMetrics',
          tags: ['Operations'],
          summary: 'Prometheus metrics',
          description: 'Prometheus text exposition format (request counts and durations, worker and office pool state, process metrics). Needs an API key like every non-public route.',
          response: { 200: { description: 'Prometheus text exposition format', content: { 'text/plain': { schema: Type.String({ examples: ['# HELP docproc_http_requests_total HTTP requests by route and status\n# TYPE docproc_http_requests_total counter\ndocproc_http_requests_total{method="POST",route="/v1/convert",status="200"} 42\n'] }) } } }, ...problemResponses(401, 429, 503) },
        },
      },
      async (_request, reply) => {
        reply.type(services.metrics.registry.contentType);
        return services.metrics.registry.metrics();
      },
    );
  };
}
