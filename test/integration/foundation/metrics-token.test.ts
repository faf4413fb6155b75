import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildTestApp, type TestApp } from '../../support/test-app.js';
import { issueTestKey } from '../../support/api-key.js';

/** /metrics answers only to the operators' METRICS_TOKEN, never to a self-registered API key. */
const TOKEN = 'metrics-token-0123456789abcdef';
let withToken: TestApp;
let without: TestApp;

beforeAll(async () => {
  withToken = await buildTestApp({ METRICS_TOKEN: TOKEN, API_KEY_PEPPER: 'metrics-pepper-0123456789' });
  without = await buildTestApp({ API_KEY_PEPPER: 'metrics-pepper-0123456789' });
});
afterAll(async () => {
  await withToken?.app.close();
  await without?.app.close();
});

describe('/metrics', () => {
  it('answers the token, and refuses an API key, a wrong token and no token with 401', async () => {
    const ok = await withToken.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('# HELP');
    const key = await issueTestKey(withToken.app, 'metrics@example.com');
    for (const authorization of [`Bearer ${key}`, `Bearer ${TOKEN}x`, undefined]) {
      const res = await withToken.app.inject({ url: '/metrics', headers: authorization ? { authorization } : {} });
      expect(res.statusCode, String(authorization)).toBe(401);
      expect(res.json()).toMatchObject({ code: 'AUTHENTICATION_ERROR' });
    }
  });

  it('without a token, says the metrics token is wanted (not an API key); wrong tokens are throttled per client (429)', async () => {
    const missing = await withToken.app.inject({ url: '/metrics' });
    expect(missing.statusCode).toBe(401);
    expect(missing.json().detail).toMatch(/metrics token/i);
    expect(missing.json().detail).not.toMatch(/register|API key from/i);
    const limited = await buildTestApp({ METRICS_TOKEN: TOKEN, API_KEY_PEPPER: 'metrics-pepper-0123456789', RATE_LIMIT_MAX: '5' });
    try {
      const statuses = [];
      for (let i = 0; i < 7; i++) statuses.push((await limited.app.inject({ url: '/metrics', headers: { authorization: `Bearer guess-${i}-0123456789abcdef` }, remoteAddress: '198.51.100.7' })).statusCode);
      expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
      const res = await limited.app.inject({ url: '/metrics', headers: { authorization: `Bearer wrong-0123456789abcdef` }, remoteAddress: '198.51.100.7' });
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      // Another client is not affected.
      expect((await limited.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` }, remoteAddress: '198.51.100.8' })).statusCode).toBe(200);
    } finally {
      await limited.app.close();
    }
  });

  it('is switched off (404) when the service has no METRICS_TOKEN', async () => {
    const res = await without.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toMatch(/problem\+json/);
  });
});
