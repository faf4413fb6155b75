import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateApiKey, hashApiKey } from '../../../src/accounts/api-keys.js';
import { RedisStore } from '../../../src/store/redis-store.js';
import { build, convertRequest, loadFixtures, pick, send, signedPdfFrom, type Fixtures, type Outcome } from '../../../bench/support/mix.js';
import { processTreeMemory, startService, type ServiceProcess } from '../../../bench/support/service.js';
import { freePort } from '../../support/global-setup.js';
import { SmtpPeer } from '../../support/smtp-peer.js';
import { startNginx, type Nginx } from './nginx.js';

const METRICS_TOKEN = 'replicas-metrics-token-0123456789';

/**
 * Three service processes sharing one Redis behind a round-robin nginx, as in production:
 * keys, rate limits and concurrency limits hold across instances, and stopping one instance
 * with SIGTERM in the middle of traffic loses no request.
 */
const PEPPER = 'replicas-test-pepper-0123456789';
const RATE_LIMIT_MAX = 30;
const TRAFFIC_LANES = 4;
/** Keys each lane rotates through, so no key reaches RATE_LIMIT_MAX within MAX_REQUESTS. */
const KEYS_PER_LANE = 10;
/** Pause between two requests of a lane (a client's think time), so traffic spans the stop. */
const THINK_MS = 100;
const TRAFFIC_MS = 24_000;
const STOP_AFTER_MS = 7_000;
const MAX_REQUESTS = 600;

let dir: string;
let smtp: SmtpPeer;
let services: ServiceProcess[] = [];
let nginx: Nginx | undefined;
let fixtures: Fixtures;
/** Keys stored directly in Redis, as /v1/auth/verify stores them (the mail flow is tested once, below). */
let laneKeys: string[] = [];
/** Key of the conversion sent straight to the instance that is stopped. */
let drainKey: string;

async function storeKeys(redisUrl: string, count: number): Promise<string[]> {
  const store = new RedisStore(redisUrl);
  await store.connected();
  const keys = Array.from({ length: count }, () => generateApiKey());
  for (const [i, key] of keys.entries()) {
    await store.putApiKey(hashApiKey(key, PEPPER), { email: `replicas-${i}@example.com`, createdAt: new Date().toISOString() });
  }
  await store.close();
  return keys;
}

function makeSigningIdentity(into: string): string {
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${into}/key.pem`, '-out', `${into}/cert.pem`, '-days', '2', '-subj', '/CN=docproc replicas test/O=docproc'], { stdio: 'ignore' });
  execFileSync('openssl', ['pkcs12', '-export', '-inkey', `${into}/key.pem`, '-in', `${into}/cert.pem`, '-passout', 'pass:replicas', '-out', `${into}/signing.p12`], { stdio: 'ignore' });
  return `${into}/signing.p12`;
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'docproc-replicas-'));
  smtp = new SmtpPeer();
  const smtpUrl = await smtp.start();
  const redisUrl = inject('redisUrl');
  const env = {
    REDIS_URL: redisUrl,
    SMTP_URL: smtpUrl,
    API_KEY_PEPPER: PEPPER,
    // All replicas sign with one identity (in production: a Secret), so any of them verifies what another signed.
    SIGNING_P12: makeSigningIdentity(dir),
    SIGNING_P12_PASSWORD: 'replicas',
    DATA_DIR: path.join(dir, 'data'),
    OFFICE_POOL_SIZE: '1',
    WORKER_THREADS: '1',
    RATE_LIMIT_MAX: String(RATE_LIMIT_MAX),
    METRICS_TOKEN,
    RATE_LIMIT_WINDOW_SECONDS: '60',
    CONCURRENCY_PER_KEY: '1',
    REGISTER_PER_IP_PER_HOUR: '1000',
    SHUTDOWN_GRACE_MS: '30000',
  };
  const ports = await Promise.all([freePort(), freePort(), freePort()]);
  // Started one after the other: three office pools starting at once on 2 cores are slower than in turn.
  for (const [i, port] of ports.entries()) services.push(await startService({ name: `replica-${'abc'[i]}`, port, env, readyTimeoutMs: 180_000 }));
  // max_fails=0: a stopped replica stays in the rotation, so every request that meets it shows its retry.
  nginx = await startNginx(path.join(dir, 'nginx'), await freePort(), ports, { serverParameters: 'max_fails=0' });
  fixtures = loadFixtures();
  laneKeys = await storeKeys(redisUrl, TRAFFIC_LANES * KEYS_PER_LANE);
  drainKey = (await storeKeys(redisUrl, 1))[0]!;
  fixtures.signedPdf = await signedPdfFrom(nginx.base, laneKeys[0]!, fixtures);
}, 600_000);

afterAll(async () => {
  await nginx?.stop();
  await Promise.all(services.map((s) => s.stop(5000)));
  await smtp?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });

describe('three replicas behind nginx, one Redis', () => {
  it('a key minted through the load balancer works on every instance, and any instance verifies what another signed', async () => {
    const email = `replicas-${Date.now()}@example.com`;
    const registered = await fetch(`${nginx!.base}/v1/auth/register?email=${encodeURIComponent(email)}`);
    expect(registered.status, await registered.clone().text()).toBe(200);
    const code = await smtp.codeFor(email);
    const verified = await fetch(`${nginx!.base}/v1/auth/verify?email=${encodeURIComponent(email)}&code=${code}`);
    expect(verified.status).toBe(200);
    const key = (await verified.json()) as string;
    expect(key).toMatch(/^dps_/);

    for (const service of services) {
      const res = await fetch(`${service.base}/v1/verify/key`, { headers: bearer(key) });
      expect(res.status, `${service.name}: ${await res.clone().text()}`).toBe(200);
      const refused = await fetch(`${service.base}/v1/verify/key`, { headers: bearer(generateApiKey()) });
      expect(refused.status).toBe(401);
      const metrics = await fetch(`${service.base}/metrics`, { headers: bearer(METRICS_TOKEN) });
      expect(await metrics.text()).toContain('# HELP');
      expect((await fetch(`${service.base}/metrics`, { headers: bearer(key) })).status).toBe(401);
    }

    const [a, b] = services;
    const signed = await send(a!.base, { ...build('sign', key, fixtures), headers: { ...build('sign', key, fixtures).headers, accept: 'application/pdf' } }, 'sign', { keepBody: true });
    expect(signed.status).toBe(200);
    const report = await send(b!.base, { ...build('verify', key, { ...fixtures, signedPdf: signed.body }) }, 'verify', { keepBody: true });
    expect(report.status).toBe(200);
    expect(JSON.parse(report.body!.toString())).toMatchObject({ valid: true, signer: { name: 'docproc replicas test' } });
  });

  it('the rate limit counts requests on all instances together', async () => {
    const [key] = await storeKeys(inject('redisUrl'), 1);
    const total = RATE_LIMIT_MAX + 15;
    const outcomes: { instance: string; status: number; code?: string; remaining: string | null; retryAfter: string | null }[] = [];
    for (let i = 0; i < total; i++) {
      const service = services[i % services.length]!;
      const res = await fetch(`${service.base}/v1/verify/key`, { headers: bearer(key!) });
      const body = await res.text();
      const code = res.status === 200 ? undefined : (JSON.parse(body) as { code: string }).code;
      outcomes.push({ instance: service.name, status: res.status, code, remaining: res.headers.get('x-ratelimit-remaining'), retryAfter: res.headers.get('retry-after') });
    }
    const ok = outcomes.filter((o) => o.status === 200);
    const limited = outcomes.filter((o) => o.code === 'RATE_LIMIT_ERROR');
    // Strictly sequential requests may still meet the previous request's concurrency slot (it is
    // released after the answer is sent); such a 429 was counted in the window like any request.
    const busy = outcomes.filter((o) => o.code === 'CONCURRENCY_LIMIT_ERROR');
    if (busy.length > 0) console.log(`replicas: ${busy.length} sequential request(s) refused by CONCURRENCY_PER_KEY=1 before the previous slot was released`);
    expect(outcomes.every((o) => o.status === 200 || o.status === 429)).toBe(true);
    expect(ok.length + busy.length).toBe(RATE_LIMIT_MAX);
    expect(limited).toHaveLength(total - RATE_LIMIT_MAX);
    // Each instance alone saw only a third of the requests, far below the limit: the count is shared.
    expect(new Set(limited.map((o) => o.instance)).size).toBe(3);
    expect(limited.every((o) => Number(o.retryAfter) >= 1)).toBe(true);
    expect(outcomes.slice(0, RATE_LIMIT_MAX).map((o) => Number(o.remaining))).toEqual(Array.from({ length: RATE_LIMIT_MAX }, (_, i) => RATE_LIMIT_MAX - 1 - i));
  });

  it('the per-key concurrency limit holds across instances: two slow converts at once, on two instances, one is refused', async () => {
    const [key] = await storeKeys(inject('redisUrl'), 1);
    const [a, b] = services;
    const [first, second] = await Promise.all([
      send(a!.base, convertRequest(key!, fixtures.slowDocx), 'convert', { keepBody: true }),
      send(b!.base, convertRequest(key!, fixtures.slowDocx), 'convert', { keepBody: true }),
    ]);
    const statuses = [first.status, second.status].sort();
    expect(statuses).toEqual([200, 429]);
    const refused = first.status === 429 ? first : second;
    const done = first.status === 200 ? first : second;
    expect(JSON.parse(refused.body!.toString())).toMatchObject({ status: 429, code: 'CONCURRENCY_LIMIT_ERROR' });
    expect(refused.retryAfter).toBe('1');
    expect(done.body!.subarray(0, 5).toString()).toBe('%PDF-');
    // The slot is released when the conversion ends: the same key converts again.
    expect((await send(b!.base, convertRequest(key!, fixtures.docx), 'convert')).status).toBe(200);
  });

  it('loses no request while one instance is stopped with SIGTERM in the middle of mixed traffic', async () => {
    const stopped = services[2]!;
    const deadline = Date.now() + TRAFFIC_MS;
    const outcomes: (Outcome & { at: number })[] = [];
    let issued = 0;
    const started = Date.now();
    const lane = async (lane: number) => {
      for (let n = 0; Date.now() < deadline && issued < MAX_REQUESTS; n++) {
        const operation = pick({ health: 20, convert: 20, annotate: 25, sign: 20, verify: 15 }, issued++);
        // Consecutive requests of a lane rotate through its keys, so a slot released just after the
        // previous answer (CONCURRENCY_PER_KEY=1) is never still held when the next request arrives.
        const key = laneKeys[lane * KEYS_PER_LANE + (n % KEYS_PER_LANE)]!;
        const outcome = await send(nginx!.base, build(operation, key, fixtures, n), operation, { timeoutMs: 60_000 });
        outcomes.push({ ...outcome, at: Date.now() - started });
        await new Promise((r) => setTimeout(r, THINK_MS));
      }
    };
    const traffic = Promise.all(Array.from({ length: TRAFFIC_LANES }, (_, i) => lane(i)));

    await new Promise((r) => setTimeout(r, STOP_AFTER_MS));
    // A conversion running on the instance when it is told to stop must still complete.
    const inFlight = send(stopped.base, convertRequest(drainKey, fixtures.slowDocx), 'convert', { keepBody: true });
    await new Promise((r) => setTimeout(r, 300));
    expect(processTreeMemory(stopped.pid).officePids.length).toBe(1);
    const stoppedAt = Date.now() - started;
    stopped.child.kill('SIGTERM');
    const drained = await inFlight;
    expect(drained.status).toBe(200);
    expect(drained.body!.subarray(0, 5).toString()).toBe('%PDF-');
    expect(await stopped.exited, stopped.log().slice(-3000)).toBe(0);
    expect(await fetch(`${stopped.base}/v1/health`).then((r) => r.status, () => 'refused')).toBe('refused');
    await traffic;

    const failures = outcomes.filter((o) => o.status !== 200);
    expect(failures.map((o) => `${o.operation} ${o.status} ${o.error ?? o.body?.toString().slice(0, 200)}`)).toEqual([]);
    const after = outcomes.filter((o) => o.at > stoppedAt + 1000);
    expect(outcomes.length).toBeGreaterThan(40);
    expect(after.length).toBeGreaterThan(10);
    for (const op of ['health', 'convert', 'annotate', 'sign', 'verify']) expect(outcomes.some((o) => o.operation === op)).toBe(true);

    // What nginx did: requests that reached the stopped instance first and were re-sent to another.
    const stoppedUpstream = `127.0.0.1:${stopped.port}`;
    const retried = nginx!.accessLog().filter((e) => e.upstreams.length > 1 && e.upstreams[0] === stoppedUpstream);
    const retriedPosts = retried.filter((e) => e.method === 'POST');
    const retriedGets = retried.filter((e) => e.method === 'GET');
    const summary = {
      requests: outcomes.length,
      afterStop: after.length,
      byOperation: Object.fromEntries(['health', 'convert', 'annotate', 'sign', 'verify'].map((op) => [op, outcomes.filter((o) => o.operation === op).length])),
      retriedPosts: retriedPosts.length,
      retriedGets: retriedGets.length,
      upstreamStatusesOfRetried: [...new Set(retried.map((e) => e.upstreamStatuses.join(',')))],
      refusedInErrorLog: (nginx!.errorLog().match(/Connection refused|Connection reset by peer|prematurely closed/g) ?? []).length,
    };
    console.log('replicas: SIGTERM mid-traffic', JSON.stringify(summary));
    // POSTs that met the closed port (refused) or a connection reset as the listener closed were re-sent.
    expect(retriedPosts.length).toBeGreaterThan(0);
    expect(retriedPosts.every((e) => e.status === 200 && e.upstreamStatuses[0] === '502' && e.upstreamStatuses.at(-1) === '200')).toBe(true);
    expect(summary.refusedInErrorLog).toBeGreaterThanOrEqual(retried.length);
    // The other two kept serving.
    for (const service of services.slice(0, 2)) expect((await fetch(`${service.base}/v1/health/ready`)).status).toBe(200);
  }, 120_000);
});
