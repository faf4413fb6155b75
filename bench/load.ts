/**
 * Load, soak and ramp for the whole service over HTTP (loopback only, always bounded in time).
 *
 *   npx tsx bench/load.ts [--duration 60] [--concurrency 8]            mixed load, then a report
 *   npx tsx bench/load.ts --soak [--duration 600] [--sample 15]         memory/restarts over time
 *   npx tsx bench/load.ts --ramp [--steps 1,2,4,8,16,32,64] [--step-duration 15]
 *   npx tsx bench/load.ts --corpus-rss ../shared/corpus/docx [--passes 2]   RSS per soffice after converting every DOCX
 *   ... [--url http://127.0.0.1:3000 --key dps_… [--pid <service pid>]] [--mix health=20,convert=20,annotate=25,sign=20,verify=15]
 *
 * Without --url it starts the service itself (node + tsx, in-memory store, a private DATA_DIR,
 * limits raised so they do not interfere; OFFICE_POOL_SIZE, WORKER_THREADS and the other
 * settings are taken from the environment) on a free loopback port, gets a key through
 * register/verify (the code from its dev-outbox log), and stops it at the end. Memory is the sum
 * of the service process and its descendants (UNO bridges, soffice), sampled from /proc.
 * Each lane is a closed loop: it sends its next request when the previous one answered.
 */
import { freePort } from '../test/support/global-setup.js';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { build, convertRequest, DEFAULT_WEIGHTS, loadFixtures, OPERATIONS, percentile, pick, send, signedPdfFrom, type Operation, type Outcome, type Weights } from './support/mix.js';
import { issueKey, mb, processTreeMemory, startService, type ServiceProcess } from './support/service.js';

const { values } = parseArgs({
  options: {
    url: { type: 'string' },
    key: { type: 'string' },
    pid: { type: 'string' },
    duration: { type: 'string' },
    concurrency: { type: 'string', default: '8' },
    soak: { type: 'boolean', default: false },
    sample: { type: 'string', default: '15' },
    ramp: { type: 'boolean', default: false },
    steps: { type: 'string', default: '1,2,4,8,16,32,64' },
    'step-duration': { type: 'string', default: '15' },
    mix: { type: 'string' },
    'corpus-rss': { type: 'string' },
    passes: { type: 'string', default: '2' },
    'timeout-ms': { type: 'string', default: '30000' },
  },
});

const REQUEST_TIMEOUT_MS = Number(values['timeout-ms']);

function parseMix(spec: string | undefined): Weights {
  if (!spec) return DEFAULT_WEIGHTS;
  const weights: Weights = {};
  for (const part of spec.split(',')) {
    const [op, weight] = part.split('=');
    if (!OPERATIONS.includes(op as Operation) || !(Number(weight) >= 0)) throw new Error(`--mix: "${part}" is not <operation>=<weight> (operations: ${OPERATIONS.join(', ')})`);
    weights[op as Operation] = Number(weight);
  }
  return weights;
}

interface Target {
  base: string;
  key: string;
  pid?: number;
  service?: ServiceProcess;
  cleanup(): Promise<void>;
}

async function startOwnService(): Promise<Target> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'docproc-load-'));
  const defaults: Record<string, string> = { RATE_LIMIT_MAX: '1000000', CONCURRENCY_PER_KEY: '10000', LOG_LEVEL: 'warn' };
  // One instance with the in-memory store and the dev outbox: the bench measures the service, not Redis or SMTP.
  const env: Record<string, string> = { DATA_DIR: dataDir, REDIS_URL: '', SMTP_URL: '' };
  for (const [name, value] of Object.entries(defaults)) env[name] = process.env[name] ?? value;
  let service: ServiceProcess;
  try {
    service = await startService({ name: 'docproc', port: await freePort(), env });
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const cleanup = async () => {
    await service.stop(30_000);
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const key = await issueKey(service, 'load@example.com');
    return { base: service.base, key, pid: service.pid, service, cleanup };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/** Peak and latest memory of the service tree, sampled every 250 ms. */
class MemorySampler {
  peak = { totalBytes: 0, nodeBytes: 0, officeBytes: 0 };
  latest = processTreeMemory(-1);
  officePidsSeen = new Set<number>();
  private timer?: NodeJS.Timeout;
  constructor(private readonly pid: number | undefined) {}
  start() {
    if (!this.pid) return;
    const sample = () => {
      this.latest = processTreeMemory(this.pid!);
      this.peak.totalBytes = Math.max(this.peak.totalBytes, this.latest.totalBytes);
      this.peak.nodeBytes = Math.max(this.peak.nodeBytes, this.latest.nodeBytes);
      this.peak.officeBytes = Math.max(this.peak.officeBytes, this.latest.officeBytes);
      for (const pid of this.latest.officePids) this.officePidsSeen.add(pid);
    };
    sample();
    this.timer = setInterval(sample, 250);
  }
  stop() {
    clearInterval(this.timer);
  }
}

/** Runs `concurrency` closed-loop lanes until `durationMs` has passed; returns every outcome. */
async function drive(target: Target, fixtures: ReturnType<typeof loadFixtures>, weights: Weights, concurrency: number, durationMs: number, onOutcome?: (o: Outcome) => void): Promise<{ outcomes: Outcome[]; seconds: number }> {
  const outcomes: Outcome[] = [];
  const deadline = Date.now() + durationMs;
  let n = 0;
  const started = performance.now();
  const lane = async () => {
    while (Date.now() < deadline) {
      const i = n++;
      const operation = pick(weights, i);
      const outcome = await send(target.base, build(operation, target.key, fixtures, i), operation, { timeoutMs: REQUEST_TIMEOUT_MS });
      outcomes.push(outcome);
      onOutcome?.(outcome);
      // A shed request says when to come back; a real client waits (bounded here, to keep pressure on).
      if ((outcome.status === 503 || outcome.status === 429) && outcome.retryAfter) await new Promise((r) => setTimeout(r, Math.min(1000, Number(outcome.retryAfter) * 1000)));
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return { outcomes, seconds: (performance.now() - started) / 1000 };
}

const fmt = (ms: number) => (Number.isNaN(ms) ? '-' : ms < 10 ? ms.toFixed(1) : ms.toFixed(0));

function statusCounts(outcomes: Outcome[]): string {
  const counts = new Map<string, number>();
  for (const o of outcomes) {
    if (o.status === 200) continue;
    const label = o.status === 0 ? `net:${o.error}` : String(o.status);
    counts.set(label, (counts.get(label) ?? 0) + 1);
  }
  return [...counts].map(([s, c]) => `${s}×${c}`).join(' ') || 'none';
}

function report(outcomes: Outcome[], seconds: number) {
  console.log(`\n${outcomes.length} requests in ${seconds.toFixed(1)} s = ${(outcomes.length / seconds).toFixed(1)} req/s; non-200: ${statusCounts(outcomes)}`);
  console.log('operation   count    ok/s     p50 ms   p95 ms   p99 ms   errors');
  for (const op of OPERATIONS) {
    const mine = outcomes.filter((o) => o.operation === op);
    if (mine.length === 0) continue;
    const ok = mine.filter((o) => o.status === 200).map((o) => o.ms).sort((a, b) => a - b);
    console.log(
      `${op.padEnd(10)} ${String(mine.length).padStart(6)} ${(ok.length / seconds).toFixed(1).padStart(7)} ${fmt(percentile(ok, 50)).padStart(9)} ${fmt(percentile(ok, 95)).padStart(8)} ${fmt(percentile(ok, 99)).padStart(8)}   ${statusCounts(mine)}`,
    );
  }
  const shed = outcomes.filter((o) => o.status === 503 || o.status === 429);
  if (shed.length > 0) console.log(`shed: ${shed.length} (503/429), with Retry-After: ${shed.filter((o) => o.retryAfter).length}; timeouts/network errors: ${outcomes.filter((o) => o.status === 0).length}`);
}

async function officeStats(base: string): Promise<Record<string, number | string | boolean>> {
  const ready = await fetch(`${base}/v1/health/ready`).then((r) => r.json(), () => undefined) as { checks?: { office?: { stats?: Record<string, number> } } } | undefined;
  return ready?.checks?.office?.stats ?? {};
}

function printMemory(sampler: MemorySampler) {
  if (!sampler.officePidsSeen.size && !sampler.peak.totalBytes) return console.log('memory: not sampled (give --pid with --url)');
  const p = sampler.peak;
  console.log(`peak RSS: total ${mb(p.totalBytes)} MB (node ${mb(p.nodeBytes)} MB, soffice ${mb(p.officeBytes)} MB); soffice processes seen: ${sampler.officePidsSeen.size}`);
}

async function runLoad(target: Target, fixtures: ReturnType<typeof loadFixtures>, weights: Weights, sampler: MemorySampler) {
  const seconds = Number(values.duration ?? 60);
  const concurrency = Number(values.concurrency);
  console.log(`load: ${seconds} s, ${concurrency} lanes, mix ${JSON.stringify(weights)}`);
  const { outcomes, seconds: took } = await drive(target, fixtures, weights, concurrency, seconds * 1000);
  report(outcomes, took);
  printMemory(sampler);
}

async function runSoak(target: Target, fixtures: ReturnType<typeof loadFixtures>, weights: Weights, sampler: MemorySampler) {
  const seconds = Number(values.duration ?? 600);
  const every = Number(values.sample) * 1000;
  const concurrency = Number(values.concurrency);
  console.log(`soak: ${seconds} s, ${concurrency} lanes, a line every ${every / 1000} s`);
  console.log('   t s   req/s  non-200   total MB  node MB  soffice MB  office up/size  jobs  restarts');
  let window: Outcome[] = [];
  const started = Date.now();
  const rows: { totalMb: number; restarts: number }[] = [];
  const timer = setInterval(async () => {
    const slice = window;
    window = [];
    const stats = await officeStats(target.base);
    const m = sampler.latest;
    rows.push({ totalMb: mb(m.totalBytes), restarts: Number(stats.restarts ?? 0) });
    console.log(
      `${String(Math.round((Date.now() - started) / 1000)).padStart(6)} ${(slice.length / (every / 1000)).toFixed(1).padStart(7)} ${String(slice.filter((o) => o.status !== 200).length).padStart(8)} ${String(mb(m.totalBytes)).padStart(10)} ${String(mb(m.nodeBytes)).padStart(8)} ${String(mb(m.officeBytes)).padStart(11)} ${`${stats.up ?? '?'}/${stats.size ?? '?'}`.padStart(15)} ${String(stats.jobs ?? '?').padStart(5)} ${String(stats.restarts ?? '?').padStart(9)}`,
    );
  }, every);
  const { outcomes, seconds: took } = await drive(target, fixtures, weights, concurrency, seconds * 1000, (o) => window.push(o));
  clearInterval(timer);
  report(outcomes, took);
  printMemory(sampler);
  if (rows.length >= 4) {
    const half = Math.floor(rows.length / 2);
    const maxOf = (r: typeof rows) => Math.max(...r.map((x) => x.totalMb));
    console.log(`memory bound: max ${maxOf(rows.slice(0, half))} MB in the first half, ${maxOf(rows.slice(half))} MB in the second half; office restarts ${rows.at(-1)!.restarts} (recycling after OFFICE_MAX_JOBS_PER_PROCESS jobs or OFFICE_MAX_RSS_MB)`);
  }
}

async function runRamp(target: Target, fixtures: ReturnType<typeof loadFixtures>, weights: Weights, sampler: MemorySampler) {
  const steps = values.steps.split(',').map(Number);
  const stepMs = Number(values['step-duration']) * 1000;
  console.log(`ramp: concurrency ${steps.join(' → ')}, ${stepMs / 1000} s per step`);
  console.log('  lanes   req/s   ok/s   p50 ms   p95 ms   p99 ms   503   429  timeout  peak MB   non-200');
  let idleP95: number | undefined;
  let knee: { lanes: number; okPerSecond: number; p95: number } | undefined;
  const shed = { total: 0, withRetryAfter: 0, timeouts: 0 };
  for (const lanes of steps) {
    sampler.peak = { totalBytes: 0, nodeBytes: 0, officeBytes: 0 };
    const { outcomes, seconds } = await drive(target, fixtures, weights, lanes, stepMs);
    const ok = outcomes.filter((o) => o.status === 200).map((o) => o.ms).sort((a, b) => a - b);
    const p95 = percentile(ok, 95);
    idleP95 ??= p95;
    const count = (s: number) => outcomes.filter((o) => o.status === s).length;
    for (const o of outcomes) {
      if (o.status === 503 || o.status === 429) (shed.total++, o.retryAfter && shed.withRetryAfter++);
      if (o.status === 0) shed.timeouts++;
    }
    console.log(
      `${String(lanes).padStart(7)} ${(outcomes.length / seconds).toFixed(1).padStart(7)} ${(ok.length / seconds).toFixed(1).padStart(6)} ${fmt(percentile(ok, 50)).padStart(8)} ${fmt(p95).padStart(8)} ${fmt(percentile(ok, 99)).padStart(8)} ${String(count(503)).padStart(5)} ${String(count(429)).padStart(5)} ${String(count(0)).padStart(8)} ${String(mb(sampler.peak.totalBytes)).padStart(8)}   ${statusCounts(outcomes)}`,
    );
    if (p95 <= 2 * idleP95) knee = { lanes, okPerSecond: ok.length / seconds, p95 };
  }
  console.log(`\nshed under overload: ${shed.total} (503/429), ${shed.withRetryAfter} with Retry-After; timeouts/network errors: ${shed.timeouts}`);
  if (knee) console.log(`knee: ${knee.lanes} lanes (${knee.okPerSecond.toFixed(1)} ok/s, p95 ${fmt(knee.p95)} ms ≤ 2 × idle p95 ${fmt(idleP95!)} ms)`);
}

/** Converts every DOCX of a folder (`passes` times, one at a time) and reports the RSS it leaves behind: the sizing figures. */
async function runCorpusRss(target: Target, folder: string, sampler: MemorySampler) {
  const files = readdirSync(folder).filter((f) => f.endsWith('.docx')).sort();
  const passes = Number(values.passes);
  console.log(`corpus RSS: ${files.length} DOCX × ${passes} passes, one at a time`);
  const officeRss = () => sampler.latest.officePids.map((pid) => mb(processTreeMemory(pid).nodeBytes));
  console.log(`before: node ${mb(sampler.latest.nodeBytes)} MB, soffice ${officeRss().join(' / ')} MB`);
  const failed: string[] = [];
  for (let pass = 1; pass <= passes; pass++) {
    for (const file of files) {
      const outcome = await send(target.base, convertRequest(target.key, readFileSync(path.join(folder, file))), 'convert', { timeoutMs: 120_000 });
      if (outcome.status !== 200) failed.push(`${file}: ${outcome.status}`);
    }
    await new Promise((r) => setTimeout(r, 500));
    console.log(`after pass ${pass}: node ${mb(sampler.latest.nodeBytes)} MB, soffice ${officeRss().join(' / ')} MB, bridges ${mb(sampler.latest.otherBytes)} MB, total ${mb(sampler.latest.totalBytes)} MB`);
  }
  console.log(`peak: node ${mb(sampler.peak.nodeBytes)} MB, all soffice ${mb(sampler.peak.officeBytes)} MB, total ${mb(sampler.peak.totalBytes)} MB; failed: ${failed.join(', ') || 'none'}`);
}

async function main() {
  const weights = parseMix(values.mix);
  let target: Target;
  if (values.url) {
    if (!values.key) throw new Error('--url needs --key');
    target = { base: values.url.replace(/\/$/, ''), key: values.key, pid: values.pid ? Number(values.pid) : undefined, cleanup: async () => {} };
  } else {
    console.log('starting the service (node + tsx, in-memory store) …');
    target = await startOwnService();
  }
  const stopOnSignal = () => void target.cleanup().finally(() => process.exit(130));
  process.once('SIGINT', stopOnSignal);
  process.once('SIGTERM', stopOnSignal);
  const sampler = new MemorySampler(target.pid);
  try {
    const fixtures = loadFixtures();
    fixtures.signedPdf = await signedPdfFrom(target.base, target.key, fixtures);
    // Warm-up: every operation once, so first-call costs (worker start, fonts) are not measured.
    for (const op of OPERATIONS) await send(target.base, build(op, target.key, fixtures), op);
    sampler.start();
    console.log(`office before: ${JSON.stringify(await officeStats(target.base))}`);
    if (values['corpus-rss']) await runCorpusRss(target, values['corpus-rss'], sampler);
    else if (values.ramp) await runRamp(target, fixtures, weights, sampler);
    else if (values.soak) await runSoak(target, fixtures, weights, sampler);
    else await runLoad(target, fixtures, weights, sampler);
    console.log(`office after: ${JSON.stringify(await officeStats(target.base))}`);
  } finally {
    sampler.stop();
    await target.cleanup();
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
