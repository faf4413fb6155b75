import net from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RedisStore } from '../../../src/store/redis-store.js';
import { issueTestKey } from '../../support/api-key.js';
import { buildTestApp, type TestApp } from '../../support/test-app.js';

const redisUrl = inject('redisUrl');
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('concurrency slots in Redis expire unless their own holder refreshes them', () => {
  let store: RedisStore;
  beforeAll(async () => {
    store = new RedisStore(redisUrl, `slots-test:${process.pid}:${Date.now()}:`);
    expect(await store.connected(10_000)).toBe(true);
  });
  afterAll(async () => store?.close());

  it('a leaked slot frees itself within its TTL although the key keeps being used', async () => {
    expect(await store.acquireSlot('k', 'leaked', 2, 1)).toBe(true);
    expect(await store.acquireSlot('k', 'busy', 2, 1)).toBe(true);
    expect(await store.acquireSlot('k', 'third', 2, 1)).toBe(false);
    // The busy holder and other requests of the key keep coming; none of it extends "leaked".
    for (let i = 0; i < 6; i++) {
      await sleep(250);
      expect(await store.refreshSlot('k', 'busy', 1)).toBe(true);
      if (await store.acquireSlot('k', `passer-${i}`, 2, 1)) await store.releaseSlot('k', `passer-${i}`);
    }
    expect(await store.refreshSlot('k', 'leaked', 1)).toBe(false);
    expect(await store.acquireSlot('k', 'fresh', 2, 1)).toBe(true);
    expect(await store.acquireSlot('k', 'one-too-many', 2, 1)).toBe(false);
  });

  it('a release frees only the holder’s own slot', async () => {
    expect(await store.acquireSlot('r', 'a', 1, 5)).toBe(true);
    await store.releaseSlot('r', 'someone-else');
    expect(await store.acquireSlot('r', 'b', 1, 5)).toBe(false);
    await store.releaseSlot('r', 'a');
    expect(await store.acquireSlot('r', 'b', 1, 5)).toBe(true);
  });
});

describe('a request that goes wrong on the wire gives its slot back', () => {
  let t: TestApp;
  let key: string;
  let port: number;
  beforeAll(async () => {
    t = await buildTestApp({ REDIS_URL: redisUrl, CONCURRENCY_PER_KEY: '1', RATE_LIMIT_MAX: '1000', API_KEY_PEPPER: 'slots-pepper-0123456789' });
    key = await issueTestKey(t.app, 'slots@example.com');
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as net.AddressInfo).port;
  });
  afterAll(async () => t?.app.close());

  /** Writes raw bytes, then either waits for the server to close or hangs up itself. */
  function rawRequest(bytes: string, hangUpAfterMs?: number): Promise<string> {
    return new Promise((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
      let answer = '';
      socket.on('data', (d) => (answer += d.toString()));
      socket.on('close', () => resolve(answer));
      socket.on('error', () => resolve(answer));
      if (hangUpAfterMs !== undefined) setTimeout(() => socket.destroy(), hangUpAfterMs);
    });
  }

  const head = (extra: string) =>
    `POST /v1/verify HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\n${extra}\r\n`;

  async function slotIsFree(): Promise<boolean> {
    // The release runs as the socket closes: give it a moment, far less than the slot TTL.
    for (let i = 0; i < 20; i++) {
      const res = await fetch(`http://127.0.0.1:${port}/v1/verify`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{}' });
      if (res.status !== 429) return true;
      await sleep(100);
    }
    return false;
  }

  it('ten malformed chunked bodies in a row do not lock the key out', async () => {
    for (let i = 0; i < 10; i++) {
      const answer = await rawRequest(`${head('Transfer-Encoding: chunked\r\n')}zz-not-hex\r\n{}\r\n0\r\n\r\n`, 2_000);
      expect(answer.startsWith('HTTP/1.1 4') || answer === '').toBe(true);
    }
    expect(await slotIsFree()).toBe(true);
  });

  it('ten clients that hang up right after sending half a body do not lock the key out', async () => {
    for (let i = 0; i < 10; i++) await rawRequest(`${head('Content-Length: 1000\r\n')}{"document":`, 50);
    expect(await slotIsFree()).toBe(true);
  });
});
