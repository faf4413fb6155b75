import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey } from '../../../src/accounts/api-keys.js';
import { RedisStore } from '../../../src/store/redis-store.js';
import { convertRequest, loadFixtures, send, type Fixtures } from '../../../bench/support/mix.js';
import { processTreeMemory, startService, type ServiceProcess } from '../../../bench/support/service.js';
import { freePort, startRedisServer } from '../../support/global-setup.js';
import { buildDocx, para } from '../../support/annotate/docx-builder.js';
import { multipartBody } from '../../support/annotate/multipart.js';
import { SmtpPeer } from '../../support/smtp-peer.js';
import { worstRequestBodies } from '../../support/platform/worst-requests.js';
import { startNginx, type AccessEntry, type Nginx } from './nginx.js';

/**
 * Two replicas behind the shipped deploy/nginx.conf: no answer a replica gives to one request takes
 * it off the balancer or is carried to the other replica. A head full of warnings, a Redis outage
 * (503 + Retry-After), a conversion whose LibreOffice dies (502): each is answered once, by one
 * replica, and both replicas keep serving everyone else.
 */
const PEPPER = 'lb-faults-pepper-0123456789';
let dir: string;
let redis: Awaited<ReturnType<typeof startRedisServer>>;
let smtp: SmtpPeer;
let replicas: ServiceProcess[] = [];
let nginx: Nginx;
let key: string;
let fixtures: Fixtures;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'docproc-lb-faults-'));
  redis = await startRedisServer();
  smtp = new SmtpPeer();
  const smtpUrl = await smtp.start();
  const env = {
    REDIS_URL: redis.url,
    SMTP_URL: smtpUrl,
    API_KEY_PEPPER: PEPPER,
    TRUST_PROXY: '1',
    TRUST_REQUEST_ID: 'true',
    OFFICE_POOL_SIZE: '1',
    WORKER_THREADS: '1',
    RATE_LIMIT_MAX: '100000',
    REGISTER_PER_IP_PER_HOUR: '1000',
  };
  const ports = [await freePort(), await freePort()];
  for (const [i, port] of ports.entries()) replicas.push(await startService({ name: `replica-${i}`, port, env: { ...env, DATA_DIR: path.join(dir, `data-${i}`) }, readyTimeoutMs: 180_000 }));
  nginx = await startNginx(path.join(dir, 'nginx'), await freePort(), ports);
  const store = new RedisStore(redis.url);
  await store.connected();
  key = generateApiKey();
  await store.putApiKey(hashApiKey(key, PEPPER), { email: 'lb-faults@example.com', createdAt: new Date().toISOString() });
  await store.close();
  fixtures = loadFixtures();
}, 180_000);

afterAll(async () => {
  await nginx?.stop();
  await Promise.all(replicas.map((r) => r.stop(5000)));
  await smtp?.stop();
  redis?.child.kill('SIGKILL');
  if (redis) rmSync(redis.dir, { recursive: true, force: true });
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const bearer = () => ({ authorization: `Bearer ${key}` });
const upstreamOf = (replica: ServiceProcess) => `127.0.0.1:${replica.port}`;

/** The access-log entries written since `before` entries. */
const entriesSince = (before: number): AccessEntry[] => nginx.accessLog().slice(before);

/** Both replicas are in the rotation: consecutive health checks through nginx reach each of them. */
async function expectBothServing() {
  const before = nginx.accessLog().length;
  for (let i = 0; i < 6; i++) expect((await fetch(`${nginx.base}/v1/health`)).status).toBe(200);
  const reached = new Set(entriesSince(before).flatMap((e) => e.upstreams));
  expect([...reached].sort()).toEqual(replicas.map(upstreamOf).sort());
}

describe('the shipped nginx config in front of two replicas', () => {
  it('a response head full of warnings passes through (200), and the replica that sent it stays in the rotation', async () => {
    const tags = Array.from({ length: 60 }, (_, i) => para(`{${String(i).padStart(2, '0')}${'x'.repeat(5000)}}`)).join('');
    const template = buildDocx({ body: tags });
    const before = nginx.accessLog().length;
    for (let i = 0; i < 4; i++) {
      const form = multipartBody([{ name: 'file', value: template, filename: `${'😀'.repeat(70)}.docx` }, { name: 'fields', value: '[]' }]);
      const res = await fetch(`${nginx.base}/v1/annotate`, { method: 'POST', headers: { ...bearer(), ...form.headers }, body: form.payload });
      expect(res.status, await res.clone().text()).toBe(200);
      expect(res.headers.get('x-docproc-warnings')).toMatch(/and%20\d+%20more$/);
    }
    // Round-robin: the four went to both replicas, each once, none retried.
    const entries = entriesSince(before);
    expect(entries.every((e) => e.upstreams.length === 1 && e.status === 200)).toBe(true);
    expect(new Set(entries.map((e) => e.upstreams[0])).size).toBe(2);
    await expectBothServing();
    expect(nginx.errorLog()).not.toMatch(/too big header|no live upstreams/);
  }, 60_000);

  it('during a Redis outage each replica’s 503 + Retry-After reaches the client once; health stays 200 and no mail is sent twice', async () => {
    const admin = new Redis(redis.url);
    const mailsBefore = smtp.mails.length;
    const before = nginx.accessLog().length;
    // Every client of this Redis, our replicas included, is held for 6 s: their commands time out.
    await admin.call('CLIENT', 'PAUSE', '6000', 'ALL');
    try {
      const answers = await Promise.all([
        ...Array.from({ length: 4 }, () => fetch(`${nginx.base}/v1/verify/key`, { headers: bearer() })),
        ...Array.from({ length: 4 }, (_, i) => fetch(`${nginx.base}/v1/auth/register?email=outage-${i}@example.com`)),
      ]);
      for (const res of answers) {
        expect(res.status).toBe(503);
        expect(res.headers.get('retry-after')).toMatch(/^\d+$/);
        expect(((await res.json()) as { code: string }).code).toBe('STORE_UNAVAILABLE');
      }
      const health = await Promise.all(Array.from({ length: 6 }, () => fetch(`${nginx.base}/v1/health`)));
      expect(health.map((r) => r.status)).toEqual(Array(6).fill(200));
      const ready = await fetch(`${nginx.base}/v1/health/ready`);
      expect(ready.status).toBe(200);
      expect(((await ready.json()) as { status: string }).status).toBe('degraded');
    } finally {
      admin.disconnect();
    }
    const outage = entriesSince(before).filter((e) => e.status === 503);
    expect(outage).toHaveLength(8);
    // Each answered by the replica it reached, never re-sent to the other one.
    expect(outage.every((e) => e.upstreams.length === 1 && e.upstreamStatuses[0] === '503')).toBe(true);
    expect(smtp.mails.length).toBe(mailsBefore);
    expect(nginx.errorLog()).not.toMatch(/no live upstreams/);
    // Once Redis answers again, both replicas serve protected routes.
    await new Promise((r) => setTimeout(r, 6500));
    for (const replica of replicas) expect((await fetch(`${replica.base}/v1/verify/key`, { headers: bearer() })).status).toBe(200);
    await expectBothServing();
  }, 60_000);

  it('a conversion whose LibreOffice dies is answered 502 once, never carried to the other replica, and both keep serving', async () => {
    const killOffices = () => {
      for (const replica of replicas) for (const pid of processTreeMemory(replica.pid).officePids) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // gone already
        }
      }
    };
    let before = 0;
    let outcome = { status: 0 } as Awaited<ReturnType<typeof send>>;
    // Whichever replica takes the conversion, its LibreOffice is killed while it works (again if the
    // conversion was done before the kill).
    for (let attempt = 0; attempt < 4 && outcome.status !== 502; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, 5000)); // the office processes come back
      before = nginx.accessLog().length;
      const conversion = send(nginx.base, convertRequest(key, fixtures.slowDocx), 'convert');
      await new Promise((r) => setTimeout(r, 300 + 150 * attempt));
      killOffices();
      outcome = await conversion;
    }
    expect(outcome.status, outcome.body?.toString()).toBe(502);
    expect(JSON.parse(outcome.body!.toString())).toMatchObject({ code: 'CONVERSION_FAILED' });
    // nginx writes a line when it finalizes the request, which may come just after the client has the
    // answer: the conversion's line may come late, and a health check's from before may come after `before`.
    const conversions = () => entriesSince(before).filter((e) => e.uri === '/v1/convert');
    for (let i = 0; i < 100 && conversions().length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    const [entry] = conversions();
    expect(entry).toMatchObject({ method: 'POST', status: 502, upstreamStatuses: ['502'] });
    expect(entry!.upstreams).toHaveLength(1);
    await expectBothServing();
    // Both replicas convert again once their office process is back.
    for (const replica of replicas) {
      let status = 0;
      for (let i = 0; i < 40 && status !== 200; i++) {
        status = (await send(replica.base, convertRequest(key, fixtures.docx), 'convert')).status;
        if (status !== 200) await new Promise((r) => setTimeout(r, 500));
      }
      expect(status).toBe(200);
    }
  }, 120_000);

  it('the worst request of each kind leaves another caller’s p99 within its normal range', async () => {
    const other = generateApiKey();
    const store = new RedisStore(redis.url);
    await store.connected();
    await store.putApiKey(hashApiKey(other, PEPPER), { email: 'lb-faults-other@example.com', createdAt: new Date().toISOString() });
    await store.close();
    // The other caller: its key checked (Redis) and health, one after the other, through nginx.
    const probe = async (): Promise<number> => {
      const started = performance.now();
      const [a, b] = await Promise.all([fetch(`${nginx.base}/v1/verify/key`, { headers: { authorization: `Bearer ${other}` } }), fetch(`${nginx.base}/v1/health`)]);
      expect([a.status, b.status]).toEqual([200, 200]);
      return performance.now() - started;
    };
    const p99 = (samples: number[]) => [...samples].sort((x, y) => x - y)[Math.min(samples.length - 1, Math.floor(samples.length * 0.99))]!;
    // The normal range is measured around the event, before and after it: on this shared 2-core
    // machine the other processes' load moves the normal p99 between ~10 and ~300 ms within minutes.
    const normal: number[] = [];
    for (let i = 0; i < 80; i++) normal.push(await probe());
    // The worst of each kind, from the first key: LibreOffice past its memory, 38 MB bodies, zip bombs, a head full of warnings.
    const { office: heavy, json: body, bomb, warnings } = await worstRequestBodies();
    const post = (route: string, payload: Buffer, headers: Record<string, string>) => fetch(`${nginx.base}${route}`, { method: 'POST', headers: { ...bearer(), ...headers }, body: payload }).then(async (r) => (await r.arrayBuffer(), r.status));
    const before = nginx.accessLog().length;
    const worst = Promise.all([
      post('/v1/convert?to=pdf', heavy.payload, heavy.headers),
      post('/v1/convert?to=pdf', heavy.payload, heavy.headers),
      ...Array.from({ length: 4 }, () => post('/v1/annotate', body, { 'content-type': 'application/json' })),
      ...Array.from({ length: 6 }, () => post('/v1/convert?to=pdf', bomb.payload, bomb.headers)),
      post('/v1/annotate', warnings.payload, warnings.headers),
    ]);
    let settled = false;
    void worst.finally(() => (settled = true));
    const during: number[] = [];
    while (!settled || during.length < 20) during.push(await probe());
    const statuses = await worst;
    for (let i = 0; i < 80; i++) normal.push(await probe());
    // Within the normal range: at most 4 × the normal p99, or the normal p99 + 300 ms when that is
    // more. On this machine (2 cores, other jobs at load 7–15) the normal p99 itself measured 37–395 ms
    // from one minute to the next. Runs: 71–416 ms against normal 25–115 ms now (6); before the
    // worker threads, the JSON parser and LibreOffice ran below the event loop and annotate's data
    // reached its worker as bytes, 539–3739 ms against normal 37–395 ms (5 runs), each past this bound.
    const bound = Math.max(4 * p99(normal), p99(normal) + 300);
    console.info(`other caller p99: normal ${p99(normal).toFixed(0)} ms, during the worst requests ${p99(during).toFixed(0)} ms (${during.length} probes, bound ${bound.toFixed(0)} ms); worst answered ${statuses.join(' ')}`);
    expect(statuses.slice(0, 2)).toEqual([422, 422]);
    for (const status of statuses.slice(2)) expect([200, 422, 429, 503]).toContain(status);
    // Each worst request reached one replica once; none ejected a replica or was carried to the other.
    expect(entriesSince(before).filter((e) => e.method === 'POST').every((e) => e.upstreams.length === 1)).toBe(true);
    expect(p99(during)).toBeLessThanOrEqual(bound);
    await expectBothServing();
    expect(nginx.errorLog()).not.toMatch(/no live upstreams/);
  }, 240_000);
});
