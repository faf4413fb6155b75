import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { startRedisServer } from '../../support/global-setup.js';
import { SmtpPeer } from '../../support/smtp-peer.js';
import { buildTestApp, uniqueEmail, type TestApp } from '../../support/test-app.js';

const redisUrl = inject('redisUrl');
let smtp: SmtpPeer;
let smtpUrl: string;
let a: TestApp;
let b: TestApp;

async function register(app: FastifyInstance, email: string, ip = '127.0.0.1') {
  return app.inject({ url: `/v1/auth/register?email=${encodeURIComponent(email)}`, remoteAddress: ip });
}

async function verify(app: FastifyInstance, email: string, code: string, ip = '127.0.0.1') {
  return app.inject({ url: `/v1/auth/verify?email=${encodeURIComponent(email)}&code=${code}`, remoteAddress: ip });
}

let mintedFrom = 0;
/** A key through the mail flow, each from its own client address (the per-address limits stay out of the way). */
async function mintKey(app: FastifyInstance, email = uniqueEmail()): Promise<string> {
  const ip = `10.77.${Math.floor(mintedFrom / 250)}.${(mintedFrom++ % 250) + 1}`;
  expect((await register(app, email, ip)).statusCode).toBe(200);
  const res = await verify(app, email, await smtp.codeFor(email), ip);
  expect(res.statusCode).toBe(200);
  return res.json() as string;
}

const authed = (key: string) => ({ authorization: `Bearer ${key}` });

beforeAll(async () => {
  smtp = new SmtpPeer();
  smtpUrl = await smtp.start();
  const env = { REDIS_URL: redisUrl, SMTP_URL: smtpUrl, API_KEY_PEPPER: 'test-pepper-0123456789', RATE_LIMIT_MAX: '1000' };
  a = await buildTestApp(env);
  b = await buildTestApp(env);
});

afterAll(async () => {
  await a?.app.close();
  await b?.app.close();
  await smtp?.stop();
});

describe('registration and keys over real Redis and SMTP', () => {
  it('mails a code, trades it for a key once, and the key opens protected routes', async () => {
    const email = uniqueEmail('flow');
    const reg = await register(a.app, email);
    expect(reg.statusCode).toBe(200);
    expect(reg.headers['content-type']).toMatch(/^application\/json/);
    expect(reg.json()).toBe('Check your email for verification code.');

    const code = await smtp.codeFor(email);
    expect(code).toMatch(/^\d{6}$/);
    const res = await verify(a.app, email, code);
    expect(res.statusCode).toBe(200);
    const key = res.json() as string;
    expect(key).toMatch(/^dps_[0-9A-Za-z]{38}$/);

    const protectedRoute = await a.app.inject({ url: '/v1/verify/key', headers: authed(key) });
    expect(protectedRoute.statusCode).toBe(200);
    expect(protectedRoute.json().chain.length).toBeGreaterThan(0);

    // Single use: the same code again is refused.
    const again = await verify(a.app, email, code);
    expect(again.statusCode).toBe(400);
    expect(again.json()).toMatchObject({ code: 'INVALID_CODE', status: 400 });

    // Neither the code nor the key ever reaches the log.
    const log = a.logs.join('');
    expect(log).not.toContain(code);
    expect(log).not.toContain(key);
    expect(log).toContain('/v1/auth/verify?[redacted]');
  });

  it('gives a key minted on one instance to every instance sharing the Redis', async () => {
    const key = await mintKey(a.app);
    expect((await b.app.inject({ url: '/v1/verify/key', headers: authed(key) })).statusCode).toBe(200);
  });

  it('gives one client five tries at a code: its sixth fails even with the right code', async () => {
    const email = uniqueEmail('burn');
    await register(a.app, email);
    const code = await smtp.codeFor(email);
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 5; i++) expect((await verify(a.app, email, wrong, '198.51.100.20')).statusCode).toBe(400);
    const sixth = await verify(a.app, email, code, '198.51.100.20');
    expect(sixth.statusCode).toBe(400);
    expect(sixth.json().code).toBe('INVALID_CODE');
  });

  it("a stranger's wrong tries do not lock the owner out", async () => {
    const email = uniqueEmail('owner');
    await register(a.app, email, '198.51.100.30');
    const code = await smtp.codeFor(email);
    const wrong = code === '000000' ? '111111' : '000000';
    for (let i = 0; i < 8; i++) expect((await verify(a.app, email, wrong, '203.0.113.66')).statusCode).toBe(400);
    expect((await verify(a.app, email, code, '198.51.100.30')).statusCode).toBe(200);
  });

  it('strangers from many addresses cannot burn the owner’s code: past the address’s cap only they are locked out', async () => {
    const email = uniqueEmail('global');
    const owner = '198.51.100.31';
    await register(a.app, email, owner);
    const code = await smtp.codeFor(email);
    const wrong = code === '000000' ? '111111' : '000000';
    // 11 strangers × 5 wrong tries, on both replicas: 55 tries, past the cap of 50.
    for (let client = 0; client < 11; client++) {
      for (let i = 0; i < 5; i++) expect((await verify(client % 2 ? b.app : a.app, email, wrong, `203.0.113.${client + 1}`)).statusCode).toBe(400);
    }
    // A new stranger with the right code is refused now (the cap bounds the guesses)…
    expect((await verify(a.app, email, code, '203.0.113.200')).statusCode).toBe(400);
    // … and a stranger registering the address again neither replaces nor burns the owner's code.
    await register(b.app, email, '203.0.113.201');
    await smtp.codeFor(email);
    // The owner's code still works, from the client that asked for it.
    const owned = await verify(b.app, email, code, owner);
    expect(owned.statusCode, owned.body).toBe(200);
    expect(owned.json()).toMatch(/^dps_/);
  });

  it('answers a wrong code the same whether or not a code is pending for the address', async () => {
    const pending = uniqueEmail('pending');
    await register(a.app, pending);
    const code = await smtp.codeFor(pending);
    const wrong = code === '000000' ? '111111' : '000000';
    const strip = (res: { statusCode: number; headers: Record<string, unknown>; json: () => Record<string, unknown> }) => {
      const { requestId: _r, instance: _i, ...rest } = res.json();
      return { status: res.statusCode, type: res.headers['content-type'], body: rest };
    };
    const withPending = strip(await verify(a.app, pending, wrong, '198.51.100.40'));
    const withoutCode = strip(await verify(a.app, uniqueEmail('nobody'), wrong, '198.51.100.40'));
    expect(withPending).toEqual(withoutCode);
    expect(withPending.status).toBe(400);
  });

  it('rate-limits verification per client (429 with Retry-After)', async () => {
    const limited = await buildTestApp({ REDIS_URL: redisUrl, SMTP_URL: smtpUrl, API_KEY_PEPPER: 'test-pepper-0123456789', RATE_LIMIT_MAX: '1000', VERIFY_PER_IP_PER_HOUR: '3' });
    try {
      const ip = `198.51.100.${50 + (Date.now() % 50)}`;
      const answers = [];
      for (let i = 0; i < 4; i++) answers.push((await verify(limited.app, uniqueEmail('rl'), '123456', ip)).statusCode);
      expect(answers).toEqual([400, 400, 400, 429]);
      const res = await verify(limited.app, uniqueEmail('rl'), '123456', ip);
      expect(Number(res.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    } finally {
      await limited.app.close();
    }
  });

  it('lets only one of two racing verifications with one code mint a key', async () => {
    const email = uniqueEmail('race');
    await register(a.app, email);
    const code = await smtp.codeFor(email);
    const results = await Promise.all([verify(a.app, email, code), verify(b.app, email, code), verify(a.app, email, code)]);
    expect(results.map((r) => r.statusCode).sort()).toEqual([200, 400, 400]);
  });

  it('refuses an expired code', async () => {
    const short = await buildTestApp({ REDIS_URL: redisUrl, SMTP_URL: smtpUrl, API_KEY_PEPPER: 'test-pepper-0123456789', CODE_TTL_SECONDS: '1' });
    try {
      const email = uniqueEmail('expired');
      await register(short.app, email);
      const code = await smtp.codeFor(email);
      await new Promise((r) => setTimeout(r, 1300));
      const res = await verify(short.app, email, code);
      expect(res.statusCode).toBe(400);
      expect(res.json().detail).toMatch(/wrong, expired, already used/);
    } finally {
      await short.app.close();
    }
  });

  it('rejects bad e-mail addresses and codes with a validation problem', async () => {
    const res = await a.app.inject({ url: '/v1/auth/register?email=not-an-address' });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR', status: 400, error: 'Bad Request', details: [{ field: 'querystring.email' }] });
    const badCode = await a.app.inject({ url: '/v1/auth/verify?email=a@example.com&code=12ab' });
    expect(badCode.statusCode).toBe(400);
  });

  it('answers 401 with WWW-Authenticate for missing, malformed, mistyped and unknown keys', async () => {
    const key = await mintKey(a.app);
    const mistyped = key.slice(0, 10) + (key[10] === 'a' ? 'b' : 'a') + key.slice(11);
    const cases: [Record<string, string>, RegExp][] = [
      [{}, /Missing API key/],
      [{ authorization: 'Basic abc' }, /Malformed Authorization/],
      [{ authorization: 'Bearer sk_live_123' }, /Malformed API key/],
      [authed(mistyped), /checksum/],
      [authed(`dps_${'A'.repeat(32)}${key.slice(-6)}`), /checksum|Unknown/],
    ];
    for (const [headers, detail] of cases) {
      const res = await a.app.inject({ url: '/v1/verify/key', headers });
      expect(res.statusCode).toBe(401);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(res.json()).toMatchObject({ code: 'AUTHENTICATION_ERROR' });
      expect(res.json().detail).toMatch(detail);
    }
  });

  it('replaces a caller-chosen X-Request-Id (another request’s id would muddle the log) unless TRUST_REQUEST_ID says a proxy sets it', async () => {
    const given = await a.app.inject({ url: '/v1/health', headers: { 'x-request-id': 'lb-1234' } });
    expect(given.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const made = await a.app.inject({ url: '/v1/nothing-here', headers: { 'x-request-id': 'lb-1234' } });
    expect(made.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(made.json()).toMatchObject({ status: 404, code: 'NOT_FOUND', requestId: made.headers['x-request-id'] });
    const behindProxy = await buildTestApp({ API_KEY_PEPPER: 'test-pepper-0123456789', TRUST_REQUEST_ID: 'true' });
    try {
      expect((await behindProxy.app.inject({ url: '/v1/health', headers: { 'x-request-id': 'lb-1234' } })).headers['x-request-id']).toBe('lb-1234');
      expect((await behindProxy.app.inject({ url: '/v1/health', headers: { 'x-request-id': 'bad id\u0007' } })).headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    } finally {
      await behindProxy.app.close();
    }
  });
});

describe('rate and concurrency limits shared through Redis', () => {
  it('counts requests across two instances and answers 429 with the limit headers', async () => {
    const env = { REDIS_URL: redisUrl, SMTP_URL: smtpUrl, API_KEY_PEPPER: 'test-pepper-0123456789', RATE_LIMIT_MAX: '4', RATE_LIMIT_WINDOW_SECONDS: '60' };
    const one = await buildTestApp(env);
    const two = await buildTestApp(env);
    try {
      const key = await mintKey(one.app);
      const statuses: number[] = [];
      let last;
      for (let i = 0; i < 5; i++) {
        last = await (i % 2 ? two : one).app.inject({ url: '/v1/verify/key', headers: authed(key) });
        statuses.push(last.statusCode);
      }
      expect(statuses).toEqual([200, 200, 200, 200, 429]);
      expect(last!.headers['x-ratelimit-limit']).toBe('4');
      expect(last!.headers['x-ratelimit-remaining']).toBe('0');
      expect(Number(last!.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(last!.headers['x-ratelimit-reset'])).toBeGreaterThan(0);
      expect(last!.json()).toMatchObject({ code: 'RATE_LIMIT_ERROR', status: 429 });
    } finally {
      await one.app.close();
      await two.app.close();
    }
  });

  it('rate-limits requests without a valid key per client IP (429 instead of 401 past the limit)', async () => {
    const env = { REDIS_URL: redisUrl, SMTP_URL: smtpUrl, API_KEY_PEPPER: 'test-pepper-0123456789', RATE_LIMIT_MAX: '3' };
    const one = await buildTestApp(env);
    try {
      const guess = () => one.app.inject({ url: '/v1/verify/key', headers: authed(`dps_${'B'.repeat(38)}`), remoteAddress: '10.9.8.7' });
      const statuses = [];
      for (let i = 0; i < 4; i++) statuses.push((await guess()).statusCode);
      expect(statuses).toEqual([401, 401, 401, 429]);
      const other = await one.app.inject({ url: '/v1/verify/key', headers: authed(`dps_${'B'.repeat(38)}`), remoteAddress: '10.9.8.8' });
      expect(other.statusCode).toBe(401);
    } finally {
      await one.app.close();
    }
  });

  it('limits registration per e-mail address', async () => {
    const email = uniqueEmail('spam');
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await register(a.app, email, '10.0.0.9')).statusCode);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
  });
});

describe('store outage', () => {
  it('answers 503 (never 500 or a hang) when Redis goes away; readiness reports it but stays 200 (the replica is not taken off the balancer)', async () => {
    const own = await startRedisServer();
    const t = await buildTestApp({ REDIS_URL: own.url, SMTP_URL: smtpUrl, API_KEY_PEPPER: 'test-pepper-0123456789' });
    try {
      const key = await mintKey(t.app);
      expect((await t.app.inject({ url: '/v1/health/ready' })).statusCode).toBe(200);
      own.child.kill('SIGKILL');
      await new Promise((r) => setTimeout(r, 300));
      const started = Date.now();
      const res = await t.app.inject({ url: '/v1/verify/key', headers: authed(key) });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ code: 'STORE_UNAVAILABLE' });
      expect(Date.now() - started).toBeLessThan(5000);
      expect((await register(t.app, uniqueEmail('down'))).statusCode).toBe(503);
      const ready = await t.app.inject({ url: '/v1/health/ready' });
      expect(ready.statusCode).toBe(200);
      expect(ready.json()).toMatchObject({ status: 'degraded', checks: { store: { status: 'down', shared: true } } });
      expect((await t.app.inject({ url: '/v1/health' })).statusCode).toBe(200);
    } finally {
      await t.app.close();
      own.child.kill('SIGKILL');
      const { rmSync } = await import('node:fs');
      rmSync(own.dir, { recursive: true, force: true });
    }
  });
});

describe('revoking and rotating keys, across replicas sharing Redis', () => {
  const protectedCall = (app: FastifyInstance, key: string) => app.inject({ method: 'GET', url: '/v1/verify/key', headers: authed(key) });

  it('DELETE /v1/auth/key ends the presented key at once on every replica, and only that key', async () => {
    const email = uniqueEmail('revoke');
    const doomed = await mintKey(a.app, email);
    const other = await mintKey(a.app, email);
    expect((await protectedCall(b.app, doomed)).statusCode).toBe(200);
    const revoked = await a.app.inject({ method: 'DELETE', url: '/v1/auth/key', headers: authed(doomed) });
    expect(revoked.statusCode).toBe(204);
    for (const app of [a.app, b.app]) expect((await protectedCall(app, doomed)).statusCode).toBe(401);
    expect((await protectedCall(b.app, other)).statusCode).toBe(200);
    expect((await b.app.inject({ method: 'DELETE', url: '/v1/auth/key', headers: authed(doomed) })).statusCode).toBe(401);
  });

  it('POST /v1/auth/key/rotate gives a new key at once; the old one works through the grace period on every replica, then stops', async () => {
    const env = { REDIS_URL: redisUrl, SMTP_URL: smtpUrl, API_KEY_PEPPER: 'test-pepper-0123456789', RATE_LIMIT_MAX: '1000', KEY_ROTATION_GRACE_SECONDS: '2' };
    const one = await buildTestApp(env);
    const two = await buildTestApp(env);
    try {
      const old = await mintKey(one.app);
      const rotated = await two.app.inject({ method: 'POST', url: '/v1/auth/key/rotate', headers: authed(old) });
      expect(rotated.statusCode, rotated.body).toBe(200);
      expect(rotated.headers['cache-control']).toBe('no-store');
      const { key, previousKeyExpiresAt } = rotated.json();
      expect(key).toMatch(/^dps_/);
      expect(new Date(previousKeyExpiresAt).getTime() - Date.now()).toBeLessThanOrEqual(2_000);
      for (const app of [one.app, two.app]) {
        expect((await protectedCall(app, key)).statusCode).toBe(200);
        expect((await protectedCall(app, old)).statusCode).toBe(200);
      }
      // A key in its grace period does not rotate again (only the active key of a lineage does).
      const again = await one.app.inject({ method: 'POST', url: '/v1/auth/key/rotate', headers: authed(old) });
      expect(again.statusCode).toBe(409);
      expect(again.json()).toMatchObject({ code: 'KEY_NOT_ACTIVE' });
      await new Promise((r) => setTimeout(r, 2_300));
      for (const app of [one.app, two.app]) {
        expect((await protectedCall(app, old)).statusCode).toBe(401);
        expect((await protectedCall(app, key)).statusCode).toBe(200);
      }
    } finally {
      await one.app.close();
      await two.app.close();
    }
  });

  it('revoking any key of a lineage ends all of it: the keys rotated from it and those still in grace it was rotated from', async () => {
    const first = await mintKey(a.app);
    const second = (await b.app.inject({ method: 'POST', url: '/v1/auth/key/rotate', headers: authed(first) })).json().key as string;
    const third = (await a.app.inject({ method: 'POST', url: '/v1/auth/key/rotate', headers: authed(second) })).json().key as string;
    for (const key of [first, second, third]) expect((await protectedCall(b.app, key)).statusCode).toBe(200);
    expect((await b.app.inject({ method: 'DELETE', url: '/v1/auth/key', headers: authed(third) })).statusCode).toBe(204);
    for (const app of [a.app, b.app]) for (const key of [first, second, third]) expect((await protectedCall(app, key)).statusCode).toBe(401);

    const root = await mintKey(a.app);
    const child = (await a.app.inject({ method: 'POST', url: '/v1/auth/key/rotate', headers: authed(root) })).json().key as string;
    const grandchild = (await b.app.inject({ method: 'POST', url: '/v1/auth/key/rotate', headers: authed(child) })).json().key as string;
    // The oldest, still in grace, takes its descendants with it.
    expect((await a.app.inject({ method: 'DELETE', url: '/v1/auth/key', headers: authed(root) })).statusCode).toBe(204);
    for (const key of [root, child, grandchild]) expect((await protectedCall(b.app, key)).statusCode).toBe(401);
  });

  it('rotate and revoke racing on two replicas never leave a live key; parallel rotations of one key mint one successor', async () => {
    for (let attempt = 0; attempt < 20; attempt++) {
      const key = await mintKey(a.app);
      const [rotated, revoked] = await Promise.all([
        a.app.inject({ method: 'POST', url: '/v1/auth/key/rotate', headers: authed(key) }),
        b.app.inject({ method: 'DELETE', url: '/v1/auth/key', headers: authed(key) }),
      ]);
      expect(revoked.statusCode).toBe(204);
      expect([200, 401]).toContain(rotated.statusCode);
      expect((await protectedCall(b.app, key)).statusCode).toBe(401);
      if (rotated.statusCode === 200) expect((await protectedCall(a.app, rotated.json().key)).statusCode, `attempt ${attempt}`).toBe(401);
    }
    const key = await mintKey(a.app);
    const rotations = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).app.inject({ method: 'POST', url: '/v1/auth/key/rotate', headers: authed(key) })));
    expect(rotations.filter((r) => r.statusCode === 200)).toHaveLength(1);
    // The others: 409 KEY_NOT_ACTIVE, or 429 from the key's concurrency limit (10 at once).
    expect(rotations.filter((r) => r.statusCode !== 200).map((r) => r.json().code).filter((c) => c !== 'KEY_NOT_ACTIVE' && c !== 'CONCURRENCY_LIMIT_ERROR')).toEqual([]);
  });

  it('an account rotates at most KEY_ROTATIONS_PER_HOUR times, and a rotated lineage shares one rate limit', async () => {
    const env = { REDIS_URL: redisUrl, SMTP_URL: smtpUrl, API_KEY_PEPPER: 'test-pepper-0123456789', RATE_LIMIT_MAX: '6', KEY_ROTATIONS_PER_HOUR: '3' };
    const one = await buildTestApp(env);
    try {
      let key = await mintKey(one.app);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const res = await one.app.inject({ method: 'POST', url: '/v1/auth/key/rotate', headers: authed(key) });
        statuses.push(res.statusCode);
        if (res.statusCode === 200) key = res.json().key;
        else {
          expect(res.json()).toMatchObject({ code: 'RATE_LIMIT_ERROR' });
          expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
        }
      }
      expect(statuses).toEqual([200, 200, 200, 429]);
      // The four rotate requests and these calls share the lineage's window of 6.
      const calls = [];
      for (let i = 0; i < 3; i++) calls.push((await protectedCall(one.app, key)).statusCode);
      expect(calls).toEqual([200, 200, 429]);
    } finally {
      await one.app.close();
    }
  });

  it('with a grace period of 0 the rotated key stops at once', async () => {
    const env = { REDIS_URL: redisUrl, SMTP_URL: smtpUrl, API_KEY_PEPPER: 'test-pepper-0123456789', RATE_LIMIT_MAX: '1000', KEY_ROTATION_GRACE_SECONDS: '0' };
    const one = await buildTestApp(env);
    try {
      const old = await mintKey(one.app);
      const rotated = await one.app.inject({ method: 'POST', url: '/v1/auth/key/rotate', headers: authed(old) });
      expect(rotated.statusCode).toBe(200);
      expect((await protectedCall(one.app, old)).statusCode).toBe(401);
      expect((await protectedCall(one.app, rotated.json().key)).statusCode).toBe(200);
    } finally {
      await one.app.close();
    }
  });
});
