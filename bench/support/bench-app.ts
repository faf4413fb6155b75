import type { FastifyInstance } from 'fastify';
import { generateApiKey, hashApiKey } from '../../src/accounts/api-keys.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { benchServiceEnv } from './convert-client.js';

/** The service in this process (buildApp, HTTP on 127.0.0.1, a free port) and a key for it. */
export interface BenchApp {
  app: FastifyInstance;
  url: string;
  key: string;
}

/**
 * Starts the service in this process as the DOCX→PDF benches run it (benchServiceEnv), with
 * `officePoolSize` office processes; `env` adds to or overrides process.env (e.g. BACKGROUND_NICE).
 */
export async function startBenchApp(officePoolSize: number, env: Record<string, string> = {}): Promise<BenchApp> {
  const config = loadConfig({ ...process.env, ...benchServiceEnv(officePoolSize), PORT: '0', ...env });
  const app = await buildApp(config);
  const key = generateApiKey();
  await app.services.store.putApiKey(hashApiKey(key, config.pepper), { email: 'bench@example.com', createdAt: new Date().toISOString() });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return { app, url: `http://127.0.0.1:${address.port}`, key };
}
