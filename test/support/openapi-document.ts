import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';

/** The OpenAPI document exactly as the routes produce it, independent of the environment. */
export async function generateOpenApiDocument(): Promise<string> {
  const app = await buildApp(loadConfig({ OFFICE_ENABLED: 'false', WORKER_THREADS: '1' }), { logger: false });
  try {
    await app.ready();
    return `${JSON.stringify(app.swagger(), null, 2)}\n`;
  } finally {
    await app.close();
  }
}
