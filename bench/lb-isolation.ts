/**
 * Where another caller's latency goes while the worst requests of one kind are in flight, behind
 * the shipped nginx config in front of two replicas (the set-up of
 * test/integration/platform/lb-faults.test.ts), one kind at a time.
 *
 *   nice -n 10 npx tsx bench/lb-isolation.ts [--kinds office,json,bomb,warnings,all] [--rounds 1] [--every-ms 10] [--prof dir]
 *
 * Per kind: the other caller's probe (its key checked through Redis, and health, in parallel)
 * before (normal) and during; the replicas' event-loop stalls over 20 ms (DIAG_EVENT_LOOP_STALL_MS,
 * logged by src/server.ts); the CPU time and run-queue wait of each replica's main thread (from
 * /proc/<pid>/task/<pid>/schedstat: waiting there means runnable but not on a core); this
 * process's own event-loop delay (the client's share of the figure).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { generateApiKey, hashApiKey } from '../src/accounts/api-keys.js';
import { RedisStore } from '../src/store/redis-store.js';
import { startNginx } from '../test/integration/platform/nginx.js';
import { freePort, startRedisServer } from '../test/support/global-setup.js';
import { worstRequestBodies } from '../test/support/platform/worst-requests.js';
import { startService, type ServiceProcess } from './support/service.js';

const { values } = parseArgs({ options: { kinds: { type: 'string', default: 'office,json,bomb,warnings,all' }, rounds: { type: 'string', default: '1' }, prof: { type: 'string' }, 'every-ms': { type: 'string' } } });
const kinds = values.kinds!.split(',');
const rounds = Number(values.rounds);

const PEPPER = 'lb-isolation-pepper-0123456789';
const dir = mkdtempSync(path.join(tmpdir(), 'docproc-lb-isolation-'));
const redis = await startRedisServer();
const env = {
  REDIS_URL: redis.url,
  API_KEY_PEPPER: PEPPER,
  TRUST_PROXY: '1',
  TRUST_REQUEST_ID: 'true',
  OFFICE_POOL_SIZE: '1',
  WORKER_THREADS: '1',
  RATE_LIMIT_MAX: '100000',
  CONCURRENCY_PER_KEY: '1000',
  DIAG_EVENT_LOOP_STALL_MS: '20',
};
// --prof <dir>: a CPU profile of each replica's main thread (written when it stops).
const nodeArgs = values.prof ? ['--cpu-prof', `--cpu-prof-dir=${path.resolve(values.prof)}`] : [];
const replicas: ServiceProcess[] = [];
const ports = [await freePort(), await freePort()];
for (const [i, port] of ports.entries()) replicas.push(await startService({ name: `replica-${i}`, port, env: { ...env, DATA_DIR: path.join(dir, `data-${i}`) }, readyTimeoutMs: 180_000, nodeArgs }));
const nginx = await startNginx(path.join(dir, 'nginx'), await freePort(), ports);
const store = new RedisStore(redis.url);
await store.connected();
const key = generateApiKey();
const other = generateApiKey();
await store.putApiKey(hashApiKey(key, PEPPER), { email: 'worst@example.com', createdAt: new Date().toISOString() });
await store.putApiKey(hashApiKey(other, PEPPER), { email: 'other@example.com', createdAt: new Date().toISOString() });
await store.close();

const { office: heavy, json, bomb, warnings } = await worstRequestBodies();

const post = (route: string, payload: Buffer, headers: Record<string, string>) =>
  fetch(`${nginx.base}${route}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, ...headers }, body: payload }).then(async (r) => (await r.arrayBuffer(), r.status));
const worstOf: Record<string, () => Promise<number>[]> = {
  office: () => [post('/v1/convert?to=pdf', heavy.payload, heavy.headers), post('/v1/convert?to=pdf', heavy.payload, heavy.headers)],
  json: () => Array.from({ length: 4 }, () => post('/v1/annotate', json, { 'content-type': 'application/json' })),
  bomb: () => Array.from({ length: 6 }, () => post('/v1/convert?to=pdf', bomb.payload, bomb.headers)),
  warnings: () => [post('/v1/annotate', warnings.payload, warnings.headers)],
};
worstOf.all = () => [...worstOf.office!(), ...worstOf.json!(), ...worstOf.bomb!(), ...worstOf.warnings!()];

const probe = async (): Promise<number> => {
  const started = performance.now();
  const [a, b] = await Promise.all([fetch(`${nginx.base}/v1/verify/key`, { headers: { authorization: `Bearer ${other}` } }), fetch(`${nginx.base}/v1/health`)]);
  await Promise.all([a.arrayBuffer(), b.arrayBuffer()]);
  if (a.status !== 200 || b.status !== 200) console.error(`probe answered ${a.status} ${b.status}`);
  return performance.now() - started;
};
const pct = (samples: number[], q: number) => [...samples].sort((x, y) => x - y)[Math.min(samples.length - 1, Math.floor(samples.length * q))]!;
const schedstat = (pid: number) => readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ').map(Number) as [number, number, number];
const stalls = (replica: ServiceProcess, from: number, to: number) =>
  [...replica.log().matchAll(/^diag-stall (\d+) (\d+)$/gm)].map((m) => [Number(m[1]), Number(m[2])] as const).filter(([at, ms]) => at - ms >= from - 50 && at <= to + 50).map(([, ms]) => ms);

const clientLoop = monitorEventLoopDelay({ resolution: 5 });
clientLoop.enable();
for (let i = 0; i < 40; i++) await probe(); // warm-up
try {
  for (let round = 0; round < rounds; round++) {
    for (const kind of kinds) {
      const normal: number[] = [];
      if (values['every-ms']) {
        const sent: Promise<void>[] = [];
        for (let i = 0; i < 80; i++) {
          sent.push(probe().then((ms) => void normal.push(ms)));
          await new Promise((r) => setTimeout(r, Number(values['every-ms'])));
        }
        await Promise.all(sent);
      } else for (let i = 0; i < 80; i++) normal.push(await probe());
      const before = replicas.map((r) => schedstat(r.pid));
      const from = Date.now();
      clientLoop.reset();
      let settled = false;
      const worst = Promise.all(worstOf[kind]!()).finally(() => (settled = true));
      const during: number[] = [];
      if (values['every-ms']) {
        // Open loop: a probe every N ms whatever the others do, so a stall delays every probe sent during it.
        const sent: Promise<void>[] = [];
        while (!settled || sent.length < 20) {
          sent.push(probe().then((ms) => void during.push(ms)));
          await new Promise((r) => setTimeout(r, Number(values['every-ms'])));
        }
        await Promise.all(sent);
      } else while (!settled || during.length < 20) during.push(await probe());
      const statuses = await worst;
      const to = Date.now();
      const after = replicas.map((r) => schedstat(r.pid));
      const replicaLines = replicas.map((r, i) => {
        const s = stalls(r, from, to);
        const cpu = (after[i]![0] - before[i]![0]) / 1e6;
        const wait = (after[i]![1] - before[i]![1]) / 1e6;
        return `r${i}: main cpu ${cpu.toFixed(0)} ms, runq wait ${wait.toFixed(0)} ms, stalls>20ms ${s.length} (max ${Math.max(0, ...s)} ms, sum ${s.reduce((a, b) => a + b, 0)} ms)`;
      });
      console.log(
        `${kind.padEnd(8)} ${((to - from) / 1000).toFixed(1)} s | normal p50 ${pct(normal, 0.5).toFixed(0)} p99 ${pct(normal, 0.99).toFixed(0)} | during p50 ${pct(during, 0.5).toFixed(0)} p99 ${pct(during, 0.99).toFixed(0)} max ${Math.max(...during).toFixed(0)} ms (${during.length}) | client loop max ${(clientLoop.max / 1e6).toFixed(0)} ms | ${replicaLines.join(' | ')} | ${statuses.join(' ')}`,
      );
      await new Promise((r) => setTimeout(r, 2000));
    }
  }
} finally {
  await nginx.stop();
  await Promise.all(replicas.map((r) => r.stop(5000)));
  redis.child.kill('SIGKILL');
  rmSync(redis.dir, { recursive: true, force: true });
  rmSync(dir, { recursive: true, force: true });
}
