/**
 * Starts the service in-process for the benchmarks and prints its URL and an API key:
 *   npx tsx bench/serve.ts [PORT]     (other settings from the environment, e.g. OFFICE_POOL_SIZE)
 * The key is issued straight into the in-memory store (the mail flow is tested elsewhere).
 */
import { buildApp } from '../src/app.js';
import { generateApiKey, hashApiKey } from '../src/accounts/api-keys.js';
import { loadConfig } from '../src/config.js';

const config = loadConfig({ LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '1000000', CONCURRENCY_PER_KEY: '1000', ...process.env, PORT: process.argv[2] ?? process.env.PORT ?? '3100' });
const app = await buildApp(config);
const key = generateApiKey();
await app.services.store.putApiKey(hashApiKey(key, config.pepper), { email: 'bench@example.com', createdAt: new Date().toISOString() });
await app.listen({ port: config.port, host: '127.0.0.1' });
console.log(`url=http://127.0.0.1:${config.port} key=${key}`);
const stop = () => app.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
