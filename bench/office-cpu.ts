/**
 * Which difference between bare LibreOffice (bench/support/bare-uno.py, convert-docx.ts's baseline) and the
 * service's office process (office-process.ts, uno-bridge.py, profile.ts, jail.ts) costs soffice.bin CPU
 * per document (issue 27). Each variant is one warm soffice driven by bench/support/office-variant.py,
 * set up as bare-uno.py's with some of the service's differences switched on (or as the service's with
 * some switched off):
 *
 *   jail     bubblewrap with jail.ts's arguments (work directory at /tmp/office, jobs at /document)
 *   profile  profile.ts's registrymodifications.xcu (else LibreOffice's default, made on first start)
 *   props    uno-bridge.py's load properties (FilterName, MacroExecutionMode, UpdateDocMode, RepairPackage,
 *            Silent) instead of bare-uno.py's Hidden + ReadOnly
 *   fresh    a new copy of the document renamed to one fixed job path per job, the PDF renamed away
 *            (the service's staging.ts) instead of reloading the same files in place
 *   lang     LANG=C.UTF-8 (officeEnvironment) instead of no locale variable (bare-uno.py's environment)
 *   rss      the office's statm read after each job (uno-bridge.py's office_rss)
 *   session  soffice in the bench's session, as the service's is in the service's (office-process.ts,
 *            ownProcessGroup), instead of a session of its own (bare-uno.py's start_new_session): for the
 *            kernel's autogroup scheduling that decides who it competes with
 *   busy     not a difference of the office process but of its surroundings: while the variant converts,
 *            a worker thread of this process (nice 0) burns CPU in bursts (--busy BURST_MS/PERIOD_MS), as
 *            the service's Node process does beside its office processes
 *   aged     --age conversions per process before the rounds (convert-docx.ts warms the service's
 *            processes with 600 requests, the bare ones with one conversion of each document)
 *
 * Two more variants run the service's own code instead of office-variant.py: `pool` (OfficePool in this
 * process: office-process.ts, the real uno-bridge.py, staging.ts, the memory watch; `--parallel` lanes
 * calling convertToPdf as the convert route does) and `app` (buildApp with HTTP, as convert-docx.ts runs
 * it, at concurrency 2 × --parallel after --app-warmup requests; `pool-jail`: the pool unjailed).
 *
 *   npx tsx bench/office-cpu.ts [--rounds 40] [--batch 2] [--warmup 5] [--nice 10] [--tmp DIR]
 *                               [--parallel 1] [--busy 1.5/8.5] [--age 300] [--app-warmup 300]
 *                               [--variants bare,service,bare+jail,...,pool,app]
 *
 * A variant is `bare` or `service` followed by +name / -name toggles (e.g. `service-jail`, `bare+props+fresh`;
 * `service` has every difference but busy and aged). --parallel N gives each variant N processes that
 * convert at the same time (convert-docx.ts's throughput phase keeps 2 busy per side); a variant's figure
 * is then over all N. Rounds run every variant once, one after the other, in a new random order each
 * round; each turn converts the three DOCX of convert-docx.ts `--batch` times per process and reads
 * soffice.bin's utime+stime from /proc before and after. Printed per variant: CPU ms per document (total
 * over all rounds) and its paired difference per round against the first variant (mean ± 2 standard
 * errors; median with the middle two thirds), the wall time per document of one process, the driver's
 * CPU per document (office-variant.py, or this Node process for pool and app) and soffice.bin's CPU
 * while idle between turns.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import type { FastifyInstance } from 'fastify';
import { nicePrefix } from '../src/compute/background-priority.js';
import { startBenchApp } from './support/bench-app.js';
import { convertOverHttp, multipartUpload, type ConvertUpload } from './support/convert-client.js';
import { statCpu } from './support/proc-cpu.js';
import { bubblewrapArgs, JAIL_BRIDGE_PATH, JAIL_JOBS_DIR, JAIL_WORK_DIR } from '../src/office/jail.js';
import { processGroupMembers } from '../src/office/memory-watch.js';
import { OfficePool } from '../src/office/office-pool.js';
import { writeProfile } from '../src/office/profile.js';
import { CORPUS_DIR } from '../test/support/corpus.js';

const DOCUMENTS = ['pandoc-tables.docx', 'superdoc-advanced-text.docx', 'superdoc-h_f-normal-odd-even-firstpg.docx'].map((f) => path.join(CORPUS_DIR, 'docx', f));
const SOFFICE = '/usr/lib/libreoffice/program/soffice';
const DRIVER = path.join(import.meta.dirname, 'support', 'office-variant.py');

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '40' },
    batch: { type: 'string', default: '2' },
    warmup: { type: 'string', default: '5' },
    nice: { type: 'string', default: '10' },
    tmp: { type: 'string', default: os.tmpdir() },
    variants: { type: 'string', default: 'bare,service,bare+jail,bare+profile,bare+props,bare+fresh,bare+lang,bare+rss,bare+session' },
    parallel: { type: 'string', default: '1' },
    busy: { type: 'string', default: '1.5/8.5' },
    'app-warmup': { type: 'string', default: '300' },
    age: { type: 'string', default: '300' },
  },
});

const TOGGLES = ['jail', 'profile', 'props', 'fresh', 'lang', 'rss', 'session', 'busy', 'aged'] as const;
type Toggle = (typeof TOGGLES)[number];

function parseVariant(spec: string): Set<Toggle> {
  const match = /^(bare|service)((?:[+-][a-z]+)*)$/.exec(spec);
  if (!match) throw new Error(`variant ${spec}: expected bare|service followed by +name/-name`);
  const on = new Set<Toggle>(match[1] === 'service' ? TOGGLES.filter((t) => t !== 'busy' && t !== 'aged') : []);
  for (const [, sign, name] of match[2]!.matchAll(/([+-])([a-z]+)/g)) {
    if (!TOGGLES.includes(name as Toggle)) throw new Error(`variant ${spec}: unknown difference ${name} (${TOGGLES.join(', ')})`);
    if (sign === '+') on.add(name as Toggle);
    else on.delete(name as Toggle);
  }
  return on;
}

interface Turn {
  officeMs: number;
  /** soffice.bin's CPU between the previous turn and this one, while it had nothing to do (office-variant.py only). */
  officeIdleMs?: number;
  selfMs: number;
  wallMs: number;
}

/** One office process of a variant, driven by office-variant.py. */
class OfficeDriver {
  private lines!: AsyncIterator<string>;
  private child!: ChildProcess;
  private constructor(readonly name: string) {}

  static async start(name: string, on: Set<Toggle>, root: string): Promise<OfficeDriver> {
    const workDir = await mkdtemp(path.join(root, 'variant-'));
    const driver = new OfficeDriver(name);
    await mkdir(path.join(workDir, 'tmp'), { mode: 0o700 });
    await mkdir(path.join(workDir, 'jobs'), { mode: 0o700 });
    await mkdir(path.join(workDir, 'inputs'));
    await Promise.all(DOCUMENTS.map((d, i) => copyFile(d, path.join(workDir, 'inputs', `doc-${i}.docx`))));
    if (on.has('profile')) await writeProfile(path.join(workDir, 'profile'));
    // Paths as the driver sees them: the jail shows the work directory at /tmp/office, its jobs/ at /document.
    const seen = (p: string) => (on.has('jail') ? path.posix.join(JAIL_WORK_DIR, path.relative(workDir, p)) : p);
    const jobDir = on.has('jail') ? path.posix.join(JAIL_JOBS_DIR, 'job') : path.join(workDir, 'jobs', 'job');
    const env: Record<string, string> = { PATH: '/usr/bin:/bin', HOME: seen(workDir), TMPDIR: seen(path.join(workDir, 'tmp')) };
    if (on.has('lang')) env.LANG = 'C.UTF-8';
    const config = {
      soffice: SOFFICE,
      workDir: seen(workDir),
      profileDir: seen(path.join(workDir, 'profile')),
      inputs: DOCUMENTS.map((_, i) => seen(path.join(workDir, 'inputs', `doc-${i}.docx`))),
      props: on.has('props') ? 'service' : 'bare',
      path: on.has('fresh') ? 'fresh' : 'same',
      jobDir,
      rss: on.has('rss'),
      sameSession: on.has('session'),
    };
    const command = on.has('jail')
      ? ['bwrap', ...bubblewrapArgs({ workDir, bridgePath: DRIVER, env }), '/usr/bin/python3', JAIL_BRIDGE_PATH, JSON.stringify(config)]
      : ['/usr/bin/python3', DRIVER, JSON.stringify(config)];
    const [file, ...rest] = [...nicePrefix(Number(args.nice)), ...command];
    driver.child = spawn(file!, rest, { stdio: ['pipe', 'pipe', 'inherit'], env: on.has('jail') ? { PATH: '/usr/bin:/bin' } : env });
    driver.lines = createInterface({ input: driver.child.stdout! })[Symbol.asyncIterator]();
    await driver.next();
    return driver;
  }

  private async next<T>(): Promise<T> {
    const line = await this.lines.next();
    if (line.done) throw new Error(`${this.name}: driver exited`);
    return JSON.parse(line.value) as T;
  }

  async batch(docs: number[]): Promise<Turn> {
    this.child.stdin!.write(`${JSON.stringify({ op: 'batch', docs })}\n`);
    return this.next<Turn>();
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin!.end();
    await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000))]);
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill('SIGKILL');
  }
}

/**
 * CPU bursts on a worker thread of this process at nice 0 while a busy variant converts: BURST_MS of
 * work over a 4 MB buffer (copies and sums, as a request's buffers and heap would be touched) every
 * PERIOD_MS. The worker's CPU is this process's, never soffice.bin's.
 */
const BURNER = `
const { workerData } = require('node:worker_threads');
const [flag, burstMs, periodMs] = [new Int32Array(workerData.flag), workerData.burstMs, workerData.periodMs];
const a = Buffer.alloc(4 << 20, 1), b = Buffer.alloc(4 << 20);
let sink = 0;
for (;;) {
  Atomics.wait(flag, 0, 0);
  if (Atomics.load(flag, 0) === 2) break;
  const started = performance.now();
  while (performance.now() - started < burstMs) {
    a.copy(b, 0, (sink & 0xffff) * 32);
    for (let i = 0; i < b.length; i += 4096) sink = (sink + b[i]) | 0;
  }
  Atomics.wait(flag, 0, 1, Math.max(0, periodMs - (performance.now() - started)));
}
`;

class Burner {
  private readonly flag = new Int32Array(new SharedArrayBuffer(4));
  private readonly worker: Worker;
  constructor(burstMs: number, periodMs: number) {
    this.worker = new Worker(BURNER, { eval: true, workerData: { flag: this.flag.buffer, burstMs, periodMs } });
    this.worker.unref();
  }
  set running(on: boolean) {
    Atomics.store(this.flag, 0, on ? 1 : 0);
    Atomics.notify(this.flag, 0);
  }
  async stop(): Promise<void> {
    Atomics.store(this.flag, 0, 2);
    Atomics.notify(this.flag, 0);
    await this.worker.terminate();
  }
}

interface Runner {
  readonly name: string;
  readonly turns: Turn[];
  batch(docs: number[], burner: Burner): Promise<Turn>;
  stop(): Promise<unknown>;
}

/** soffice.bin's utime+stime (ms) in each of these process groups (host pids). */
function officeCpuMs(pgids: number[]): number {
  let total = 0;
  for (const pgid of pgids) {
    for (const pid of processGroupMembers(pgid)) {
      try {
        if (readFileSync(`/proc/${pid}/comm`, 'latin1').trim() !== 'soffice.bin') continue;
        total += statCpu(readFileSync(`/proc/${pid}/stat`, 'latin1')).ms;
      } catch {
        // gone meanwhile
      }
    }
  }
  return total;
}

/**
 * `pool`: the service's own OfficePool (office-process.ts, the real uno-bridge.py, staging, memory
 * watch) in this process, sent the documents as the convert route sends them (prepare.ts rewrites
 * none of the three and finds nothing to refresh); `--parallel` lanes of one document at a time.
 */
class PoolRunner implements Runner {
  readonly turns: Turn[] = [];
  private constructor(readonly name: string, private readonly pool: OfficePool, private readonly inputs: Buffer[], private readonly lanes: number) {}

  static async start(name: string, lanes: number): Promise<PoolRunner> {
    const pool = new OfficePool({ size: lanes, handleSignals: false, nice: Number(args.nice), jail: name !== 'pool-jail' });
    await pool.start();
    return new PoolRunner(name, pool, await Promise.all(DOCUMENTS.map((d) => readFile(d))), lanes);
  }

  async batch(docs: number[], burner: Burner): Promise<Turn> {
    burner.running = false;
    const pgids = this.pool.processGroups().map((g) => g.pgid);
    const before = officeCpuMs(pgids);
    const self = process.cpuUsage();
    const started = performance.now();
    await Promise.all(Array.from({ length: this.lanes }, async () => {
      for (const i of docs) {
        await this.pool.convertToPdf(this.inputs[i]!, { trackedChanges: 'markup', loadFilter: 'MS Word 2007 XML', application: 'writer', inputExtension: 'docx', work: { fields: false, indexes: false } });
      }
    }));
    const wallMs = performance.now() - started;
    const used = process.cpuUsage(self);
    if (this.pool.processGroups().map((g) => g.pgid).join() !== pgids.join()) throw new Error(`${this.name}: an office process was replaced during the turn`);
    return { officeMs: officeCpuMs(pgids) - before, selfMs: (used.user + used.system) / 1000, wallMs };
  }

  stop(): Promise<unknown> {
    return this.pool.close();
  }
}

/**
 * `app`: the whole service (buildApp, as convert-docx.ts runs it: pool of `--parallel`, one worker
 * thread, HTTP on 127.0.0.1) sent POST /v1/convert at concurrency 2 × `--parallel` over keep-alive
 * sockets; its Node process (service and this bench) works on the same cores as its office processes.
 */
class AppRunner implements Runner {
  readonly turns: Turn[] = [];
  private constructor(readonly name: string, private readonly app: FastifyInstance, private readonly url: string, private readonly key: string, private readonly uploads: ConvertUpload[], private readonly lanes: number) {}

  static async start(name: string, lanes: number): Promise<AppRunner> {
    const { app, url, key } = await startBenchApp(lanes, { BACKGROUND_NICE: args.nice! });
    const uploads = (await Promise.all(DOCUMENTS.map((d) => readFile(d)))).map((doc) => multipartUpload(doc));
    const runner = new AppRunner(name, app, url, key, uploads, lanes);
    // V8 goes on optimizing the service for its first several hundred requests (convert-docx.ts's --warmup).
    let warmed = 0;
    await Promise.all(Array.from({ length: 2 * lanes }, async () => {
      while (warmed < Number(args['app-warmup'])) await runner.post(uploads[warmed++ % uploads.length]!);
    }));
    return runner;
  }

  private post(upload: ConvertUpload): Promise<void> {
    return convertOverHttp(this.url, this.key, upload, agent);
  }

  async batch(docs: number[], burner: Burner): Promise<Turn> {
    burner.running = false;
    const pool = this.app.services.office!;
    const pgids = pool.processGroups().map((g) => g.pgid);
    const before = officeCpuMs(pgids);
    const self = process.cpuUsage();
    const started = performance.now();
    const queue = Array.from({ length: this.lanes }, () => docs).flat();
    await Promise.all(Array.from({ length: 2 * this.lanes }, async () => {
      for (let i = queue.shift(); i !== undefined; i = queue.shift()) await this.post(this.uploads[i]!);
    }));
    const wallMs = performance.now() - started;
    const used = process.cpuUsage(self);
    if (pool.processGroups().map((g) => g.pgid).join() !== pgids.join()) throw new Error(`${this.name}: an office process was replaced during the turn`);
    return { officeMs: officeCpuMs(pgids) - before, selfMs: (used.user + used.system) / 1000, wallMs };
  }

  stop(): Promise<unknown> {
    return this.app.close();
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

class Variant implements Runner {
  readonly turns: Turn[] = [];
  private constructor(readonly name: string, readonly on: Set<Toggle>, readonly drivers: OfficeDriver[]) {}

  static async start(name: string, root: string, count: number): Promise<Variant> {
    const on = parseVariant(name);
    const drivers: OfficeDriver[] = [];
    for (let i = 0; i < count; i++) drivers.push(await OfficeDriver.start(name, on, root));
    if (on.has('aged')) {
      const all = DOCUMENTS.map((_, i) => i);
      await Promise.all(drivers.map(async (d) => {
        for (let done = 0; done < Number(args.age); done += all.length) await d.batch(all);
      }));
    }
    return new Variant(name, on, drivers);
  }

  /** One turn: every process converts `docs` at the same time; the turn's figures are their sums. */
  async batch(docs: number[], burner: Burner): Promise<Turn> {
    burner.running = this.on.has('busy');
    try {
      const turns = await Promise.all(this.drivers.map((d) => d.batch(docs)));
      return { officeMs: turns.reduce((s, t) => s + t.officeMs, 0), officeIdleMs: turns.reduce((s, t) => s + (t.officeIdleMs ?? 0), 0), selfMs: turns.reduce((s, t) => s + t.selfMs, 0), wallMs: Math.max(...turns.map((t) => t.wallMs)) };
    } finally {
      burner.running = false;
    }
  }

  stop(): Promise<unknown> {
    return Promise.all(this.drivers.map((d) => d.stop()));
  }
}

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const quantile = (values: number[], q: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))))]!;
};

function shuffle<T>(items: T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

async function main(): Promise<void> {
  const names = args.variants.split(',').map((v) => v.trim()).filter(Boolean);
  for (const name of names) if (!name.startsWith('pool') && name !== 'app') parseVariant(name);
  const root = await mkdtemp(path.join(args.tmp, 'docproc-office-cpu-'));
  const variants: Runner[] = [];
  const parallel = Number(args.parallel);
  const [burstMs, periodMs] = args.busy.split('/').map(Number);
  if (!(burstMs! >= 0 && periodMs! > 0)) throw new Error(`--busy ${args.busy}: expected BURST_MS/PERIOD_MS`);
  const burner = new Burner(burstMs!, periodMs!);
  const stopAll = () => Promise.all([...variants.map((v) => v.stop()), burner.stop()]);
  process.once('SIGINT', () => void stopAll().then(() => rm(root, { recursive: true, force: true })).then(() => process.exit(130)));
  try {
    for (const name of names) {
      if (name === 'app') variants.push(await AppRunner.start(name, parallel));
      else if (name.startsWith('pool')) variants.push(await PoolRunner.start(name, parallel));
      else variants.push(await Variant.start(name, root, parallel));
    }
    const docs = Array.from({ length: Number(args.batch) }, () => DOCUMENTS.map((_, i) => i)).flat();
    console.log(`${variants.length} variants of ${parallel} process(es), ${args.rounds} rounds of ${docs.length} documents per process, busy ${burstMs} ms every ${periodMs} ms, nice ${args.nice}, files in ${args.tmp}; load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    for (let w = 0; w < Number(args.warmup); w++) for (const v of variants) await v.batch(docs, burner);
    for (let round = 0; round < Number(args.rounds); round++) {
      for (const v of shuffle(variants)) v.turns.push(await v.batch(docs, burner));
    }
    const docsPerTurn = docs.length * parallel;
    const perDoc = (t: Turn) => t.officeMs / docsPerTurn;
    const reference = variants[0]!;
    console.log(`load ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);
    console.log(`soffice.bin CPU ms per document (${Number(args.rounds) * docsPerTurn} documents per variant); paired difference per round against ${reference.name}: mean ± 2 standard errors, median [p17..p83]; wall ms per document; driver CPU ms per document`);
    for (const v of variants) {
      const total = v.turns.reduce((s, t) => s + t.officeMs, 0) / (v.turns.length * docsPerTurn);
      const diffs = v.turns.map((t, i) => perDoc(t) - perDoc(reference.turns[i]!));
      const wall = median(v.turns.map((t) => t.wallMs / docs.length));
      const self = v.turns.reduce((s, t) => s + t.selfMs, 0) / (v.turns.length * docsPerTurn);
      const mean = diffs.reduce((a, b) => a + b, 0) / diffs.length;
      const se = Math.sqrt(diffs.reduce((a, d) => a + (d - mean) ** 2, 0) / (diffs.length - 1) / diffs.length);
      const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(1)}`;
      const diff = v === reference ? '' : `${signed(mean)} ± ${(2 * se).toFixed(1)}, median ${signed(median(diffs))} [${quantile(diffs, 1 / 6).toFixed(1)}..${quantile(diffs, 5 / 6).toFixed(1)}]`;
      const idle = v.turns.reduce((s, t) => s + (t.officeIdleMs ?? 0), 0) / v.turns.length;
      console.log(`  ${v.name.padEnd(24)} ${total.toFixed(1).padStart(6)}  ${diff.padEnd(44)} wall ${wall.toFixed(1).padStart(6)}  driver ${self.toFixed(1)}  idle ${idle.toFixed(1)} ms per turn`);
    }
  } finally {
    await stopAll();
    await rm(root, { recursive: true, force: true });
  }
}

await main();
