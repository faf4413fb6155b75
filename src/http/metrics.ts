import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { OfficePool } from '../office/index.js';
import type { ConversionStages } from '../office/stages.js';

/** Prometheus metrics; one registry per app so several apps in one process (tests) stay apart. */
export class Metrics {
  readonly registry = new Registry();
  readonly requests = new Counter({
    name: 'docproc_http_requests_total',
    help: 'HTTP requests by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly latency = new Histogram({
    name: 'docproc_http_request_duration_seconds',
    help: 'HTTP request latency by method, route and status',
    labelNames: ['method', 'route', 'status'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });

  readonly conversionStages = new Histogram({
    name: 'docproc_convert_stage_duration_seconds',
    help: 'Time of each stage of a successful DOCX→PDF conversion: receive (upload and multipart), guards (ZIP checks, scrub), changes (accept/reject), queue, write, load, refresh, export, read',
    labelNames: ['stage'] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [this.registry],
  });

  constructor() {
    collectDefaultMetrics({ register: this.registry, prefix: 'docproc_' });
  }

  observeConversion(stages: ConversionStages) {
    for (const [stage, ms] of Object.entries(stages)) if (ms !== undefined) this.conversionStages.observe({ stage }, ms / 1000);
  }

  /** Office pool gauges (read at scrape time), conversion latency by outcome, restarts by reason. */
  observeOffice(pool: OfficePool) {
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({ name, help, registers: [this.registry], collect() { this.set(read()); } });
    gauge('docproc_office_processes_up', 'LibreOffice processes answering', () => pool.stats().up);
    gauge('docproc_office_processes_busy', 'LibreOffice processes converting', () => pool.stats().busy);
    gauge('docproc_office_queue_length', 'Conversions waiting for a LibreOffice process', () => pool.stats().queued);
    const latency = new Histogram({
      name: 'docproc_office_conversion_duration_seconds',
      help: 'Time spent in LibreOffice per conversion, by outcome',
      labelNames: ['outcome'] as const,
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
      registers: [this.registry],
    });
    const restarts = new Counter({ name: 'docproc_office_restarts_total', help: 'LibreOffice process restarts by reason', labelNames: ['reason'] as const, registers: [this.registry] });
    pool.on('job', (job) => latency.observe({ outcome: job.outcome }, job.durationMs / 1000));
    pool.on('restart', (event) => restarts.inc({ reason: event.reason }));
  }
}

export function installMetrics(app: FastifyInstance, metrics: Metrics) {
  app.addHook('onResponse', async (request, reply) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status: String(reply.statusCode) };
    metrics.requests.inc(labels);
    metrics.latency.observe(labels, reply.elapsedTime / 1000);
  });
}
