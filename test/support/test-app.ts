import type { FastifyInstance } from 'fastify';
import { Writable } from 'node:stream';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';

export interface TestApp {
  app: FastifyInstance;
  /** Every log line the app wrote, for checks that secrets never reach the log. */
  logs: string[];
}

/** Builds the real app from environment-style settings; logs are captured, not printed. */
export async function buildTestApp(env: Record<string, string> = {}): Promise<TestApp> {
  const logs: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      logs.push(chunk.toString());
      cb();
    },
  });
  const config = loadConfig({ OFFICE_ENABLED: 'false', WORKER_THREADS: '1', LOG_LEVEL: 'info', ...env });
  const { loggerOptions } = await import('../../src/http/logging.js');
  const app = await buildApp(config, { logger: { ...(loggerOptions('info') as object), stream } });
  await app.ready();
  return { app, logs };
}

let counter = 0;
export const uniqueEmail = (tag = 'user') => `${tag}.${process.pid}.${Date.now()}.${counter++}@example.com`;
