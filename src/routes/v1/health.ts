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
  shared: Type.Optional(Type.Boolean({ description: 'A dependency every replica shares (the key store): reported, but its outage does not make this replica unready' })),
  detail: Type.Optional(Type.String()),
  stats: Type.Optional(Type.Record(Type.String(), Type.Union([Type.Number(), Type.String(), Type.Boolean()]))),
});

const ReadinessSchema = Type.Object(
  {
    status: Type.Union([Type.Literal('ready'), Type.Literal('degraded'), Type.Literal('not_ready')], {
      description: 'ready: everything answers; degraded: this replica is up but a shared dependency is down (protected routes answer 503 + Retry-After meanwhile); not_ready: a part of this replica is down',
    }),
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
          summary: 'Readiness: this replica can serve',
          description:
            'Reports the key store, the worker pool and the office pool; 503 when a part of this replica (workers, office pool) is down. ' +
            'A key-store outage is reported (status degraded) but answered 200: it hits every replica alike, and taking them all off the load balancer would only turn the 503 + Retry-After callers get meanwhile into refused connections.',
          security: [],
          response: { 200: ReadinessSchema, 503: ReadinessSchema },
        },
      },
      async (_request, reply) => {
        const checks = await services.readiness();
        const down = Object.values(checks).filter((c) => c.status === 'down');
        const ownDown = down.some((c) => !c.shared);
        const status = ownDown ? 'not_ready' : down.length > 0 ? 'degraded' : 'ready';
        return reply.code(ownDown ? 503 : 200).send({ status, timestamp: new Date().toISOString(), checks });
      },
    );
  };
}
