import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, inject } from 'vitest';
import { issueTestKey } from './api-key.js';
import { buildTestApp, type TestApp } from './test-app.js';

/**
 * The real app with one warm office process and the shared test Redis, built before a test file's
 * tests and closed after them, with an API key issued to `email`. Read `app` and `key` inside tests.
 */
export function useOfficeTestApp(email: string): { readonly app: FastifyInstance; readonly key: string } {
  let t: TestApp | undefined;
  let key: string | undefined;
  beforeAll(async () => {
    t = await buildTestApp({ REDIS_URL: inject('redisUrl'), OFFICE_ENABLED: 'true', OFFICE_POOL_SIZE: '1', RATE_LIMIT_MAX: '1000' });
    key = await issueTestKey(t.app, email);
  });
  afterAll(async () => {
    await t?.app.close();
  });
  const ready = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('useOfficeTestApp: read app and key inside tests, after beforeAll');
    return value;
  };
  return {
    get app() {
      return ready(t).app;
    },
    get key() {
      return ready(key);
    },
  };
}
