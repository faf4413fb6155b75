import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { MemoryStore, RedisStore, type Store } from '../../../src/store/index.js';

/**
 * The two stores keep the same promises (the in-memory one serves the embedded default, Redis every
 * replica): codes strangers cannot burn, and key lineages whose rotation and revocation are atomic.
 */
const stores: [string, () => Store][] = [
  ['memory', () => new MemoryStore()],
  ['redis', () => new RedisStore(inject('redisUrl'), `docproc-contract-${randomUUID()}:`)],
];
const opened: Store[] = [];
afterAll(async () => {
  await Promise.all(opened.map((s) => s.close()));
});
const open = async (make: () => Store) => {
  const store = make();
  opened.push(store);
  expect(await store.connected(10_000)).toBe(true);
  return store;
};

const limits = { perClient: 5, perAddress: 50 };
const record = (email = 'lineage@example.com') => ({ email, createdAt: new Date().toISOString() });
const rotationLimit = (bucket: string, max = 100) => ({ bucket, max, windowSeconds: 3600 });

describe.each(stores)('%s store', (_name, make) => {
  it('codes: a new code keeps the pending one; strangers past the cap are locked, the requester never; the right code consumes all', async () => {
    const store = await open(make);
    await store.putCode('addr', 'owner-code', 60, 'owner');
    await store.putCode('addr', 'stranger-code', 60, 'stranger-who-registered');
    for (let client = 0; client < 11; client++) {
      for (let i = 0; i < 5; i++) expect(await store.checkCode('addr', 'wrong', `s${client}`, limits)).toBe(client * 5 + i < 50 ? 'wrong' : 'locked');
      expect(await store.checkCode('addr', 'wrong', `s${client}`, limits)).toBe('locked');
    }
    expect(await store.checkCode('addr', 'owner-code', 'late-stranger', limits)).toBe('locked');
    for (let i = 0; i < 4; i++) expect(await store.checkCode('addr', 'wrong', 'owner', limits)).toBe('wrong');
    expect(await store.checkCode('addr', 'owner-code', 'owner', limits)).toBe('ok');
    expect(await store.checkCode('addr', 'stranger-code', 'stranger-who-registered', limits)).toBe('missing');
  });

  it('codes: a client out of its own tries is locked even with the right code', async () => {
    const store = await open(make);
    await store.putCode('addr2', 'code', 60, 'owner');
    for (let i = 0; i < 5; i++) expect(await store.checkCode('addr2', 'wrong', 'owner', limits)).toBe('wrong');
    expect(await store.checkCode('addr2', 'code', 'owner', limits)).toBe('locked');
  });

  it('keys: only the active key rotates, successors share the lineage, revocation ends the whole lineage', async () => {
    const store = await open(make);
    await store.putApiKey('k1', record());
    expect(await store.rotateApiKey('k1', 'k2', record(), 60, rotationLimit('r1'))).toEqual({ status: 'rotated' });
    expect(await store.rotateApiKey('k1', 'k2b', record(), 60, rotationLimit('r1'))).toEqual({ status: 'not-active' });
    expect(await store.rotateApiKey('k2', 'k3', record(), 60, rotationLimit('r1'))).toEqual({ status: 'rotated' });
    expect(await store.getApiKey('k2b')).toBeUndefined();
    for (const key of ['k1', 'k2', 'k3']) expect((await store.getApiKey(key))?.lineage).toBe('k1');
    expect(await store.revokeApiKey('k2')).toBe(true);
    for (const key of ['k1', 'k2', 'k3']) expect(await store.getApiKey(key)).toBeUndefined();
    expect(await store.revokeApiKey('k2')).toBe(false);
    expect(await store.rotateApiKey('k3', 'k4', record(), 60, rotationLimit('r1'))).toEqual({ status: 'missing' });
  });

  it('keys: rotations per account are limited; with no grace the old key ends at once', async () => {
    const store = await open(make);
    await store.putApiKey('a1', record());
    expect((await store.rotateApiKey('a1', 'a2', record(), 0, rotationLimit('r2', 2))).status).toBe('rotated');
    expect(await store.getApiKey('a1')).toBeUndefined();
    expect((await store.rotateApiKey('a2', 'a3', record(), 0, rotationLimit('r2', 2))).status).toBe('rotated');
    const limited = await store.rotateApiKey('a3', 'a4', record(), 0, rotationLimit('r2', 2));
    expect(limited).toMatchObject({ status: 'rate-limited' });
    expect(limited.status === 'rate-limited' && limited.resetMs).toBeGreaterThan(3_500_000);
    expect(await store.getApiKey('a3')).toBeDefined();
  });

  it('keys: racing rotations of one key mint one successor; a revocation racing them leaves nothing alive', async () => {
    const store = await open(make);
    await store.putApiKey('r', record());
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => store.rotateApiKey('r', `r-${i}`, record(), 60, rotationLimit('r3'))));
    expect(outcomes.filter((o) => o.status === 'rotated')).toHaveLength(1);
    const successor = `r-${outcomes.findIndex((o) => o.status === 'rotated')}`;
    const [, revoked] = await Promise.all([store.rotateApiKey(successor, 'r-next', record(), 60, rotationLimit('r3')), store.revokeApiKey('r')]);
    expect(revoked).toBe(true);
    for (const key of ['r', successor, 'r-next']) expect(await store.getApiKey(key)).toBeUndefined();
  });

  it('admit: counts the hit, takes a slot only within the rate limit, and agrees with hit and acquireSlot', async () => {
    const store = await open(make);
    const rate = { bucket: 'adm-rate', windowSeconds: 60, max: 3 };
    const slot = (holder: string) => ({ bucket: 'adm-slots', holder, limit: 2, ttlSeconds: 15 });
    const first = await store.admit(rate, slot('a'));
    expect(first).toEqual({ hit: { count: 1, resetMs: expect.any(Number) }, acquired: true });
    expect(first.hit.resetMs).toBeGreaterThan(55_000);
    expect(first.hit.resetMs).toBeLessThanOrEqual(60_000);
    expect(await store.admit(rate, slot('b'))).toMatchObject({ hit: { count: 2 }, acquired: true });
    // Slots full: the hit still counts, the slot is refused.
    expect(await store.admit(rate, slot('c'))).toMatchObject({ hit: { count: 3 }, acquired: false });
    await store.releaseSlot('adm-slots', 'a');
    // Over the rate limit: no slot is tried, so the freed one stays free.
    const over = await store.admit(rate, slot('d'));
    expect(over.hit.count).toBe(4);
    expect(over.acquired).toBeUndefined();
    expect(await store.acquireSlot('adm-slots', 'e', 2, 15)).toBe(true);
    expect(await store.acquireSlot('adm-slots', 'f', 2, 15)).toBe(false);
    // The same window as hit(): one counter.
    expect((await store.hit('adm-rate', 60)).count).toBe(5);
    // Without a slot request (a caller without a key), only the hit.
    const ipOnly = await store.admit({ bucket: 'adm-ip', windowSeconds: 60, max: 1 });
    expect(ipOnly.hit.count).toBe(1);
    expect(ipOnly.acquired).toBeUndefined();
    // A slot taken by admit is released and refreshed like any other.
    expect(await store.refreshSlot('adm-slots', 'b', 15)).toBe(true);
    await store.releaseSlot('adm-slots', 'b');
    expect(await store.refreshSlot('adm-slots', 'b', 15)).toBe(false);
  });

  it('admit: racing requests of one key never hold more slots than the limit', async () => {
    const store = await open(make);
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => store.admit({ bucket: 'race-rate', windowSeconds: 60, max: 1000 }, { bucket: 'race-slots', holder: `h${i}`, limit: 4, ttlSeconds: 15 })));
    expect(results.filter((r) => r.acquired === true)).toHaveLength(4);
    expect(results.map((r) => r.hit.count).sort((a, b) => a - b)).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
  });
});

describe('redis store scripts', () => {
  it('runs its scripts by SHA-1 from Redis’s cache, and sends them again when the cache was flushed', async () => {
    const store = await open(() => new RedisStore(inject('redisUrl'), `docproc-contract-${randomUUID()}:`));
    const { Redis } = await import('ioredis');
    const admin = new Redis(inject('redisUrl'));
    try {
      // An empty cache (as after a Redis restart): EVALSHA answers NOSCRIPT and the store sends the text.
      await admin.script('FLUSH');
      expect(await store.hit('flushed', 60)).toMatchObject({ count: 1 });
      expect(await store.acquireSlot('flushed', 'a', 1, 15)).toBe(true);
      expect(await store.acquireSlot('flushed', 'b', 1, 15)).toBe(false);
      await store.releaseSlot('flushed', 'a');
      expect(await store.acquireSlot('flushed', 'b', 1, 15)).toBe(true);
      expect(await store.admit({ bucket: 'flushed', windowSeconds: 60, max: 10 }, { bucket: 'flushed', holder: 'c', limit: 2, ttlSeconds: 15 })).toMatchObject({ hit: { count: 2 }, acquired: true });
      // Now cached: the store's connection runs EVALSHA (Redis's CLIENT LIST shows each connection's last command).
      const name = `contract-${randomUUID()}`;
      await (store as unknown as { redis: InstanceType<typeof Redis> }).redis.client('SETNAME', name);
      expect(await store.hit('flushed', 60)).toMatchObject({ count: 3 });
      const line = String(await admin.client('LIST')).split('\n').find((l) => l.includes(` name=${name} `));
      expect(line).toMatch(/ cmd=evalsha /);
    } finally {
      admin.disconnect();
    }
  });
});
