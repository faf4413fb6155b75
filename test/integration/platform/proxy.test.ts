import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config.js';
import { freePort } from '../../support/global-setup.js';
import { buildTestApp, uniqueEmail, type TestApp } from '../../support/test-app.js';
import { startNginx, type Nginx } from './nginx.js';

/**
 * Client addresses behind the shipped nginx config (deploy/nginx.conf's X-Forwarded-For line) with
 * TRUST_PROXY=1, as the compose file and the Kubernetes ConfigMap set it: a client that forges
 * X-Forwarded-For on every request still meets the per-IP registration limit.
 */
let t: TestApp;
let nginx: Nginx;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'docproc-proxy-'));
  // The in-memory store: the per-IP counters of other tests sharing the Redis must not count here.
  t = await buildTestApp({ API_KEY_PEPPER: 'proxy-pepper-0123456789abcdef', RATE_LIMIT_MAX: '1000', TRUST_PROXY: '1', REGISTER_PER_IP_PER_HOUR: '3' });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  nginx = await startNginx(dir, await freePort(), [(t.app.server.address() as AddressInfo).port]);
}, 60_000);

afterAll(async () => {
  await nginx?.stop();
  await t?.app.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('TRUST_PROXY and the shipped nginx config', () => {
  it('a fresh forged X-Forwarded-For on every request does not escape the per-IP limit', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${nginx.base}/v1/auth/register?email=${encodeURIComponent(uniqueEmail('forged'))}`, {
        headers: { 'x-forwarded-for': `203.0.113.${i + 1}, 198.51.100.${i + 1}` },
      });
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429]);
  });

  it('TRUST_PROXY takes a hop count or addresses/CIDRs, and refuses `true`', () => {
    expect(loadConfig({ TRUST_PROXY: '1' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1, ::1' }).trustProxy).toEqual(['10.0.0.0/8', '127.0.0.1', '::1']);
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrow(/forge/);
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.0/40' })).toThrow(/TRUST_PROXY/);
    expect(() => loadConfig({ TRUST_PROXY: 'proxy.internal' })).toThrow(/TRUST_PROXY/);
  });

  it('with a hop count, the client is the right-most forwarded address (what the proxy saw)', async () => {
    const register = (forwarded: string) =>
      t.app.inject({ url: `/v1/auth/register?email=${encodeURIComponent(uniqueEmail('hop'))}`, remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': forwarded } });
    const sameClient = [];
    for (let i = 0; i < 4; i++) sameClient.push((await register(`10.9.9.${i}, 192.0.2.77`)).statusCode);
    expect(sameClient).toEqual([200, 200, 200, 429]);
    expect((await register('10.9.9.1, 192.0.2.78')).statusCode).toBe(200);
  });
});
