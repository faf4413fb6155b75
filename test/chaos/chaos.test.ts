import { execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey } from '../../src/accounts/api-keys.js';
import { RedisStore } from '../../src/store/redis-store.js';
import { build, loadFixtures, pick, type Fixtures, type Operation, type PreparedRequest } from '../../bench/support/mix.js';
import { startService, type ServiceProcess } from '../../bench/support/service.js';
import { freePort, startRedisServer } from '../support/global-setup.js';

/**
 * Chaos under mixed traffic, with real Redis and LibreOffice: soffice, a bridge, Redis and the
 * service itself (SIGTERM, then SIGKILL) are killed while requests run. Every request must get an
 * answer in its deadline (a reset only when the service itself was SIGKILLed, a refused connection
 * only while it is down), nothing may be orphaned, and after the next start nothing of a caller's
 * document may remain in the temp directory. The Redis and the temp directory are this suite's own.
 */
const PEPPER = 'chaos-test-pepper-0123456789';
const REQUEST_TIMEOUT_MS = 45_000;
const LANES = 3;
const ALLOWED = new Set([200, 429, 502, 503, 504]);

interface Result {
  id: string;
  operation: Operation;
  phase: string;
  status: number;
  error?: string;
  body?: string;
}

let tmp: string;
let redis: { url: string; port: number; child: ChildProcess; dir: string };
let fixtures: Fixtures;
let key: string;
let service: ServiceProcess | undefined;
let port: number;

function env() {
  return {
    REDIS_URL: redis.url,
    API_KEY_PEPPER: PEPPER,
    TMPDIR: tmp,
    DATA_DIR: path.join(tmp, '..', `${path.basename(tmp)}-data`),
    OFFICE_POOL_SIZE: '2',
    WORKER_THREADS: '2',
    RATE_LIMIT_MAX: '100000',
    CONCURRENCY_PER_KEY: '1000',
    SHUTDOWN_GRACE_MS: '8000',
    // Each request's id is the client's (x-request-id) and the service logs each request it reads:
    // a reset can then be told from a request the service never read (see requestsRead).
    TRUST_REQUEST_ID: 'true',
    LOG_LEVEL: 'info',
  };
}

/**
 * The ids of the requests the current service instance has read (its "incoming request" log lines).
 * When the listening socket closes, the kernel resets the connections still in its accept queue:
 * requests the service never read, which no server can answer (a balancer has stopped sending by
 * then). A reset of a request the service did read is the service's fault.
 */
let requestsRead = new Set<string>();

function watchRequestsRead(instance: ServiceProcess): void {
  const read = (requestsRead = new Set<string>());
  let partial = '';
  instance.child.stdout!.on('data', (chunk: Buffer) => {
    const lines = (partial + chunk.toString()).split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      const id = /"reqId":"(chaos-[^"]+)"/.exec(line);
      if (id && line.includes('"incoming request"')) read.add(id[1]!);
    }
  });
}

/** One connection per request, as independent clients; the answer's status or the socket error. */
function send(request: PreparedRequest, id: string): Promise<{ status: number; error?: string; body?: string }> {
  return new Promise((resolve) => {
    const body = request.body === undefined ? undefined : Buffer.from(request.body);
    const req = http.request(
      { host: '127.0.0.1', port, path: request.path, method: request.method, agent: false, timeout: REQUEST_TIMEOUT_MS, headers: { ...request.headers, 'x-request-id': id, ...(body ? { 'content-length': body.length } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: (res.statusCode ?? 0) >= 400 ? Buffer.concat(chunks).toString().slice(0, 300) : undefined }));
        res.on('error', (err) => resolve({ status: 0, error: (err as NodeJS.ErrnoException).code ?? err.message }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('TIMEOUT')));
    req.on('error', (err) => resolve({ status: 0, error: (err as NodeJS.ErrnoException).code ?? err.message }));
    req.end(body);
  });
}

/** Mixed traffic from LANES clients until `stop()`; each result is tagged with the phase it started in. */
function traffic(phase: () => string) {
  const results: Result[] = [];
  let running = true;
  let n = 0;
  const lanes = Array.from({ length: LANES }, async () => {
    while (running) {
      const operation = pick({ health: 20, convert: 25, annotate: 20, sign: 20, verify: 15 }, n++);
      const started = phase();
      const id = `chaos-${n}`;
      const answer = await send(build(operation, key, fixtures, n), id);
      results.push({ id, operation, phase: started, ...answer });
      await new Promise((r) => setTimeout(r, 30));
    }
  });
  return { results, stop: async () => ((running = false), await Promise.all(lanes)) };
}

interface Proc {
  pid: number;
  args: string;
}

function processTable(): { pid: number; ppid: number; pgid: number; stat: string; args: string }[] {
  return execFileSync('ps', ['-eo', 'pid=,ppid=,pgid=,stat=,args=']).toString().split('\n').filter(Boolean).map((line) => {
    const [pid, ppid, pgid, stat, ...args] = line.trim().split(/\s+/);
    return { pid: Number(pid), ppid: Number(ppid), pgid: Number(pgid), stat: stat ?? '', args: args.join(' ') };
  });
}

/** The live processes of the office slot (process group) `pid` belongs to. */
function slotOf(pid: number): Proc[] {
  const table = processTable();
  const pgid = table.find((p) => p.pid === pid)?.pgid;
  return table.filter((p) => p.pgid === pgid && !p.stat.startsWith('Z')).map(({ pid: id, args }) => ({ pid: id, args }));
}

/** Live descendants of `root` (bubblewrap, bridges, oosplash, soffice.bin, worker helpers). */
function descendants(root: number): Proc[] {
  const table = processTable().filter((p) => !p.stat.startsWith('Z'));
  const family = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of table) if (family.has(p.ppid) && !family.has(p.pid)) (family.add(p.pid), (grew = true));
  }
  return table.filter((p) => p.pid !== root && family.has(p.pid)).map(({ pid, args }) => ({ pid, args }));
}

/** Which of `pids` still run (zombies excluded). */
function stillRunning(pids: Proc[]): string[] {
  const live = new Set(processTable().filter((p) => !p.stat.startsWith('Z')).map((p) => p.pid));
  return pids.filter((p) => live.has(p.pid)).map((p) => `${p.pid} ${p.args.slice(0, 120)}`);
}

/** Entries of the service's own (tsx, run from source here, keeps its cache in TMPDIR too). */
const ours = (names: string[]) => names.filter((n) => n.startsWith('docproc-'));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function waitReady(timeoutMs = 60_000) {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if ((await send({ method: 'GET', path: '/v1/health/ready', headers: {} }, 'chaos-ready')).status === 200) return;
    await sleep(200);
  }
  throw new Error(`not ready again within ${timeoutMs} ms:\n${service?.log().slice(-3000)}`);
}

async function start(): Promise<ServiceProcess> {
  service = await startService({ name: 'chaos', port, env: env() });
  watchRequestsRead(service);
  return service;
}

beforeAll(async () => {
  tmp = mkdtempSync(path.join(os.tmpdir(), 'chaos-tmp-'));
  redis = await startRedisServer({ persistent: true });
  port = await freePort();
  const store = new RedisStore(redis.url);
  await store.connected();
  key = generateApiKey();
  await store.putApiKey(hashApiKey(key, PEPPER), { email: 'chaos@example.com', createdAt: new Date().toISOString() });
  await store.close();
  fixtures = loadFixtures();
  await start();
  const signed = await new Promise<Buffer>((resolve, reject) => {
    const req = build('sign', key, fixtures);
    const body = Buffer.from(req.body!);
    const r = http.request({ host: '127.0.0.1', port, path: req.path, method: 'POST', headers: { ...req.headers, 'content-length': body.length } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(Buffer.from((JSON.parse(Buffer.concat(chunks).toString()) as { document: { base64: string } }).document.base64, 'base64')));
    });
    r.on('error', reject);
    r.end(body);
  });
  fixtures.signedPdf = signed;
}, 180_000);

afterAll(async () => {
  await service?.stop(10_000);
  redis?.child.kill('SIGKILL');
  for (const dir of [tmp, `${tmp}-data`, redis?.dir]) if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('chaos under mixed traffic', () => {
  it('kills soffice, a bridge and Redis mid-traffic: every request is answered, the service recovers', async () => {
    let phase = 'warm-up';
    const load = traffic(() => phase);
    await sleep(3_000);

    phase = 'soffice killed';
    const office = descendants(service!.pid).filter((p) => /soffice\.bin/.test(p.args));
    expect(office.length).toBeGreaterThan(0);
    const firstSlot = slotOf(office[0]!.pid);
    process.kill(office[0]!.pid, 'SIGKILL');
    await sleep(4_000);

    phase = 'bridge killed';
    // A bridge serving a live soffice: on a loaded machine the slot whose soffice was killed may
    // still be starting its replacement (a bridge without its soffice yet), so wait for one.
    const liveBridge = async (): Promise<number> => {
      for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(250)) {
        const bridges = descendants(service!.pid).filter((p) => /^\S*python3?\s+\S*uno-bridge\.py/.test(p.args));
        const serving = bridges.find((b) => slotOf(b.pid).some((p) => /soffice\.bin/.test(p.args)));
        if (serving) return serving.pid;
      }
      throw new Error('no bridge with a live soffice within 60 s');
    };
    const bridge = await liveBridge();
    const secondSlot = slotOf(bridge);
    process.kill(bridge, 'SIGKILL');
    await sleep(4_000);

    phase = 'redis down';
    redis.child.kill('SIGKILL');
    await sleep(3_000);
    const restarted = await startRedisOn(redis.port, redis.dir);
    redis = { ...redis, child: restarted };
    phase = 'recovered';
    await waitReady();
    await sleep(4_000);
    await load.stop();

    const results = load.results;
    expect(results.length).toBeGreaterThan(20);
    const unanswered = results.filter((r) => r.status === 0);
    expect(unanswered.map((r) => `${r.phase} ${r.operation} ${r.error}`)).toEqual([]);
    const odd = results.filter((r) => !ALLOWED.has(r.status));
    expect(odd.map((r) => `${r.phase} ${r.operation} ${r.status} ${r.body}`)).toEqual([]);
    for (const r of results.filter((x) => x.status >= 500)) expect(r.body ?? '').not.toMatch(/\bat .*\.(ts|js):\d+/); // no stack traces
    // Back to normal: the last phase has successes of every kind.
    const recovered = results.filter((r) => r.phase === 'recovered' && r.status === 200).map((r) => r.operation);
    expect(new Set(recovered).size).toBeGreaterThanOrEqual(3);
    // Nothing orphaned: the office processes and bridges killed or replaced are gone, two slots remain.
    await sleep(1_000);
    expect(stillRunning([...firstSlot, ...secondSlot])).toEqual([]);
    expect(descendants(service!.pid).filter((p) => /soffice\.bin/.test(p.args))).toHaveLength(2);
  }, 180_000);

  it('SIGTERM mid-traffic answers every request it accepted; SIGKILL leaves nothing running, and the next start leaves nothing of the killed instance', async () => {
    let phase = 'before sigterm';
    let load = traffic(() => phase);
    await sleep(3_000);
    phase = 'sigterm';
    const family = descendants(service!.pid);
    service!.child.kill('SIGTERM');
    expect([0, 1]).toContain(await service!.exited);
    phase = 'down';
    await sleep(500);
    await load.stop();
    // Every request the service read was answered; once the listener had closed, connections were
    // refused. The only other outcome: a reset, after SIGTERM, of a request the service never read
    // (its connection was still in the kernel's accept queue when the listener closed).
    const cut = load.results.filter((r) => r.status === 0 && r.error !== 'ECONNREFUSED');
    const neverRead = (r: Result) => r.phase === 'sigterm' && r.error === 'ECONNRESET' && !requestsRead.has(r.id);
    expect(cut.filter((r) => !neverRead(r)).map((r) => `${r.phase} ${r.operation} ${r.error} (read by the service: ${requestsRead.has(r.id)})`)).toEqual([]);
    expect(requestsRead.size).toBeGreaterThan(0);
    console.info(`SIGTERM: ${load.results.filter((r) => r.phase === 'sigterm').length} requests sent while draining; ${cut.filter(neverRead).length} reset in the accept queue, never read`);
    expect(load.results.filter((r) => r.status !== 0 && !ALLOWED.has(r.status)).map((r) => `${r.operation} ${r.status} ${r.body}`)).toEqual([]);
    expect(stillRunning(family)).toEqual([]);
    expect(ours(readdirSync(tmp))).toEqual([]);

    await start();
    phase = 'before sigkill';
    load = traffic(() => phase);
    await sleep(4_000);
    const killed = service!;
    phase = 'sigkill';
    const killedFamily = descendants(killed.pid);
    expect(killedFamily.some((p) => /soffice\.bin/.test(p.args))).toBe(true);
    killed.child.kill('SIGKILL');
    await killed.exited;
    await sleep(300);
    await load.stop();
    // Jailed office processes die with their parent (bubblewrap --die-with-parent), unjailed bridges watch theirs.
    const until = Date.now() + 10_000;
    while (stillRunning(killedFamily).length > 0 && Date.now() < until) await sleep(200);
    expect(stillRunning(killedFamily)).toEqual([]);
    // What the killed instance left is swept at the next start: only the new instance's root remains.
    const leftBehind = ours(readdirSync(tmp));
    await start();
    expect(leftBehind.some((name) => name.startsWith(`docproc-${killed.pid}-`))).toBe(true);
    const after = ours(readdirSync(tmp));
    expect(after).toHaveLength(1);
    expect(after[0]).toMatch(new RegExp(`^docproc-${service!.pid}-`));
    expect(readFileSync(path.join(tmp, after[0]!, 'owner'), 'utf8')).toMatch(new RegExp(`^${service!.pid} `));
  }, 240_000);
});

async function startRedisOn(redisPort: number, dir: string): Promise<ChildProcess> {
  const { spawn } = await import('node:child_process');
  // Persistent, as a production Redis holding keys is: a SIGKILLed one comes back with them (an
  // empty one would rightly answer 401 to requests that reach it before their key is restored).
  const child = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--dir', dir], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    try {
      const probe = new RedisStore(`redis://127.0.0.1:${redisPort}`);
      const ok = await probe.connected(500);
      await probe.close();
      if (ok) return child;
    } catch {
      // not yet
    }
    await sleep(100);
  }
  throw new Error('redis did not restart');
}
