import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { NO_BODY } from '../../http/body-budget.js';
import type { Services } from '../../services.js';

const HealthSchema = Type.Object(
  {
    status: Type.Literal('healthy'),
    timestamp: Type.String({ format: 'date-time' }),
    version: Type.String(),
    instance: Type.Object({
      startTime: Type.String({ format: 'date-time' }),
      uptime: Type.Number({ description: 'Seconds since the process started' }),
    }),
  },
  {
    $id: 'Health',
    title: 'Health',
    examples: [{ status: 'healthy', timestamp: '2025-05-01T10:00:00.000Z', version: '0.1.0', instance: { startTime: '2025-05-01T08:00:00.000Z', uptime: 7200.5 } }],
  },
);

const CheckSchema = Type.Object({
  status: Type.Union([Type.Literal('up'), Type.Literal('down')]),
  detail: Type.Optional(Type.String()),
  stats: Type.Optional(Type.Record(Type.String(), Type.Union([Type.Number(), Type.String(), Type.Boolean()]))),
});

const ReadinessSchema = Type.Object(
  {
    status: Type.Union([Type.Literal('ready'), Type.Literal('not_ready')]),
    timestamp: Type.String({ format: 'date-time' }),
    checks: Type.Record(Type.String(), CheckSchema),
  },
  {
    $id: 'Readiness',
    title: 'Readiness',
    examples: [
      {
        status: 'ready',
        timestamp: '2025-05-01T10:00:00.000Z',
        checks: {
          store: { status: 'up', stats: { kind: 'redis', latencyMs: 1 } },
          workers: { status: 'up', stats: { threads: 2, queued: 0 } },
          office: { status: 'up', stats: { size: 2, up: 2, busy: 0, queued: 0, restarts: 0, jobs: 118 } },
        },
      },
    ],
  },
);

export type DependencyCheck = { status: 'up' | 'down'; detail?: string; stats?: Record<string, number | string | boolean> };

export default function healthRoutes(services: Services): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      '/health',
      {
        bodyLimit: NO_BODY,
        config: { public: true, bodyBudget: NO_BODY },
        schema: {
          operationId: 'getHealth',
          tags: ['Health'],
          summary: 'Liveness: the process is up',
          description: 'No authentication; touches no dependency.',
          security: [],
          response: { 200: HealthSchema },
        },
      },
      async () => ({
        status: 'healthy' as const,
        timestamp: new Date().toISOString(),
        version: services.version,
        instance: { startTime: services.startTime.toISOString(), uptime: Math.round(process.uptime() * 1000) / 1000 },
      }),
    );

    app.get(
      '/health/ready',
      {
        bodyLimit: NO_BODY,
        config: { public: true, bodyBudget: NO_BODY },
        schema: {
          operationId: 'getReadiness',
          tags: ['Health'],
          summary: 'Readiness: every dependency answers',
          description: 'Reports the key store, the worker pool and the office pool; 503 when one is down.',
          security: [],
          response: { 200: ReadinessSchema, 503: ReadinessSchema },
        },
      },
      async (_request, reply) => {
        const checks = await services.readiness();
        const ready = Object.values(checks).every((c) => c.status === 'up');
        return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', timestamp: new Date().toISOString(), checks });
      },
    );
  };
}
