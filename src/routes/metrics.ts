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
          response: { 200: { description: 'Prometheus text exposition format', content: { 'text/plain': { schema: Type.String() } } }, ...problemResponses(401, 429, 503) },
        },
      },
      async (_request, reply) => {
        reply.type(services.metrics.registry.contentType);
        return services.metrics.registry.metrics();
      },
    );
  };
}
