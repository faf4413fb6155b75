/**
 * DOCX, XLSX and PPTX→PDF through POST /v1/convert against bare LibreOffice doing the bare job, measured in the
 * same run on the same documents (never a timed test):
 *
 *   baseline  bench/support/bare-uno.py: a warm soffice driven over UNO with none of our code,
 *             load read-only + export, N processes (N = --size, default 2); and, for reference,
 *             cold `soffice --convert-to pdf` per document.
 *   service   the real service as `npm start` runs it: tsc's dist/ (built first) in a node process
 *             of its own, pool of N, HTTP on 127.0.0.1; one job at a time per document and at
 *             concurrency 4 on the mix. --in-process runs the TypeScript sources in this process
 *             instead (buildApp through tsx; what --profile needs).
 *
 * Rounds interleave baseline and service so both see the same machine load; ratios are computed
 * per round and their median is printed, with the spread. The per-stage breakdown comes from the
 * service's own Prometheus histogram (docproc_convert_stage_duration_seconds). The spreadsheet and
 * the presentation (issue 24) go through the same rounds; bare-uno.py exports them with Calc's and
 * Impress's PDF filters and the same (default) filter options the service uses without options.
 *
 *   npx tsx bench/convert-docx.ts [--rounds 3] [--seconds 10] [--latency-rounds 5] [--size 2] [--warmup 600]
 *                                 [--docs docx|all|xlsx|pptx] [--tmp DIR] [--in-process]
 *                                 [--profile SECONDS [--profile-out FILE]]
 *
 * --docs docx (default) is issue 27's DOCX→PDF figure (the three Word documents); all adds the xlsx
 * and the pptx. --tmp defaults to the service's own temp directory (TMPDIR, else /tmp). --profile
 * (implies --in-process) runs one more service-only throughput phase under the inspector's CPU
 * profiler and prints the main thread's time per document by stage (bench/support/stage-profile.ts).
 * The bench's HTTP client is this process in either case; its CPU is printed apart from the service's.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { mainThreadProfile, printProfile } from './support/stage-profile.js';
import { loadConfig } from '../src/config.js';
import { CORPUS_DIR } from '../test/support/corpus.js';
import { nicePrefix } from '../src/compute/background-priority.js';
import { benchServiceEnv, convertOverHttp, multipartUpload, type ConvertUpload } from './support/convert-client.js';
import { buildCompiled, issueKey, startService as startServiceProcess } from './support/service.js';
import { statCpu, USER_HZ } from './support/proc-cpu.js';
import { freePort } from '../test/support/global-setup.js';

const FIXTURES = path.resolve(import.meta.dirname, '../test/fixtures/formats');
const ALL_DOCUMENTS = [
  { label: '1 page, no fields/changes', file: path.join(CORPUS_DIR, 'docx', 'pandoc-tables.docx'), format: 'docx' },
  { label: '4 pages: fields, change, comment, images', file: path.join(CORPUS_DIR, 'docx', 'superdoc-advanced-text.docx'), format: 'docx' },
  { label: '15 pages, PAGE in headers/footers', file: path.join(CORPUS_DIR, 'docx', 'superdoc-h_f-normal-odd-even-firstpg.docx'), format: 'docx' },
  { label: 'xlsx: 4 sheets of data (readxl)', file: path.join(FIXTURES, 'datasets.xlsx'), format: 'xlsx' },
  { label: 'pptx: 42 slides (pandoc)', file: path.join(FIXTURES, 'pandoc-writer.pptx'), format: 'pptx' },
];
const SOFFICE = '/usr/lib/libreoffice/program/soffice';

const { values: args } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    seconds: { type: 'string', default: '10' },
    'latency-rounds': { type: 'string', default: '5' },
    size: { type: 'string', default: '2' },
    concurrency: { type: 'string', default: '4' },
    'cold-docs': { type: 'string', default: '3' },
    warmup: { type: 'string', default: '600' },
    // The service's default: its temp files where TMPDIR says (a disk here); --tmp /dev/shm for tmpfs.
    tmp: { type: 'string', default: os.tmpdir() },
    // docx: the three Word documents only (issue 27's DOCX→PDF figure); all: with the xlsx and pptx.
    docs: { type: 'string', default: 'docx' },
    profile: { type: 'string', default: '0' },
    'in-process': { type: 'boolean', default: false },
    'profile-out': { type: 'string' },
  },
});
const DOCUMENTS = args.docs === 'all' ? ALL_DOCUMENTS : ALL_DOCUMENTS.filter((d) => d.format === args.docs);
if (DOCUMENTS.length === 0) throw new Error(`--docs ${args.docs}: expected all, docx, xlsx or pptx`);
const ROUNDS = Number(args.rounds);
const SECONDS = Number(args.seconds);
const LATENCY_ROUNDS = Number(args['latency-rounds']);
const SIZE = Number(args.size);
const CONCURRENCY = Number(args.concurrency);
const IN_PROCESS = args['in-process'] || Number(args.profile) > 0;

const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
const fmt = (v: number, digits = 0) => v.toFixed(digits);

/** The service's office processes run BACKGROUND_NICE steps below it (src/compute/background-priority.ts); the baseline too. */
const BASELINE_NICE = loadConfig({ ...process.env }).office.nice;

/** One bare-uno.py process: JSON commands in, JSON answers out. */
class BareOffice {
  private readonly lines: AsyncIterator<string>;
  private constructor(private readonly child: ChildProcess) {
    this.lines = createInterface({ input: child.stdout! })[Symbol.asyncIterator]();
  }

  static async start(workDir: string, inputs: string[]): Promise<BareOffice> {
    // At the service's office priority (BACKGROUND_NICE below this process), so both sides compete alike.
    const [file, ...args] = [...nicePrefix(BASELINE_NICE), '/usr/bin/python3', path.join(import.meta.dirname, 'support', 'bare-uno.py'), SOFFICE, workDir, ...inputs];
    const child = spawn(file!, args, {
      stdio: ['pipe', 'pipe', 'inherit'],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: workDir, TMPDIR: workDir },
    });
    const office = new BareOffice(child);
    await office.next();
    return office;
  }

  async next<T>(): Promise<T> {
    const line = await this.lines.next();
    if (line.done) throw new Error('bare-uno.py exited');
    return JSON.parse(line.value) as T;
  }

  async ask<T>(command: object): Promise<T> {
    this.child.stdin!.write(`${JSON.stringify(command)}\n`);
    return this.next<T>();
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return; // e.g. Ctrl-C reached it too
    this.child.stdin!.end();
    await new Promise((resolve) => this.child.once('exit', resolve));
  }
}

/** Cold reference: a fresh `soffice --convert-to pdf` (own profile) per document. */
async function coldConvert(input: string, workDir: string): Promise<number> {
  const t0 = performance.now();
  await new Promise<void>((resolve, reject) => {
    const [file, ...args] = [...nicePrefix(BASELINE_NICE), SOFFICE, `-env:UserInstallation=file://${workDir}/cold-profile`, '--headless', '--convert-to', 'pdf', '--outdir', path.join(workDir, 'cold'), input];
    const child = spawn(file!, args, {
      stdio: 'ignore',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: workDir, TMPDIR: workDir },
    });
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`soffice exited with ${code}`))));
  });
  return performance.now() - t0;
}

/** The service under test: where to send requests, whose CPU is Node's share (pid), and how to stop it. */
interface Service {
  url: string;
  key: string;
  pid: number;
  stop(): Promise<void>;
}

/** /metrics is on for the bench's service only (the stage histogram); the token dies with the run. */
const METRICS_TOKEN = `bench-${randomUUID()}`;

async function startService(): Promise<Service> {
  if (IN_PROCESS) {
    // Loaded only here: the client process stays small unless the service runs in it.
    const { startBenchApp } = await import('./support/bench-app.js');
    const bench = await startBenchApp(SIZE, { METRICS_TOKEN });
    return { url: bench.url, key: bench.key, pid: process.pid, stop: () => bench.app.close() };
  }
  buildCompiled();
  const env = { ...benchServiceEnv(SIZE), METRICS_TOKEN, SMTP_URL: '' };
  const child = await startServiceProcess({ name: 'service', port: await freePort(), env, compiled: true, readyTimeoutMs: 180_000 });
  try {
    const key = await issueKey(child, `bench-convert-${process.pid}@example.com`);
    return { url: child.base, key, pid: child.pid, stop: async () => void (await child.stop()) };
  } catch (err) {
    await child.stop();
    throw err;
  }
}

/**
 * The bench's client shares the 2 cores with the service and LibreOffice, so it is kept as light as
 * bare-uno.py's loop: each document's multipart body is built once and sent over keep-alive
 * sockets with node:http (fetch + FormData cost more CPU per request than the service's own HTTP).
 */
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

const convertViaHttp = (service: Service, upload: ConvertUpload) => convertOverHttp(service.url, service.key, upload, agent);

/** CPU time (ms) the whole machine has spent busy so far, from /proc/stat (user+nice+system+irq+softirq+steal). */
async function machineBusyMs(): Promise<number> {
  const [, ...fields] = (await readFile('/proc/stat', 'latin1')).split('\n', 1)[0]!.trim().split(/\s+/);
  const [user, nice, system, , , irq, softirq, steal] = fields.map(Number);
  return ((user! + nice! + system! + irq! + softirq! + (steal ?? 0)) * 1000) / USER_HZ;
}

/** utime + stime of one /proc/…/stat file in ms, with its command name; undefined when it is gone. */
const statFileCpu = (file: string): Promise<{ comm: string; ms: number } | undefined> => readFile(file, 'latin1').then(statCpu, () => undefined);

type CpuSnapshot = Map<string, { comm: string; ms: number }>;

/** utime + stime and command name of each of `dir`'s numeric entries (processes or threads). */
async function cpuSnapshot(dir: string): Promise<CpuSnapshot> {
  const snapshot: CpuSnapshot = new Map();
  for (const id of await readdir(dir)) {
    if (!/^\d+$/.test(id)) continue;
    const cpu = await statFileCpu(`${dir}/${id}/stat`);
    if (cpu) snapshot.set(id, cpu);
  }
  return snapshot;
}

/**
 * CPU ms per document between two snapshots, per process or thread (so that one whose name changed
 * meanwhile is not counted with its whole lifetime), summed by `nameOf`; the largest first.
 */
function cpuDelta(before: CpuSnapshot, after: CpuSnapshot, docs: number, nameOf: (id: string, comm: string) => string): string {
  const totals = new Map<string, number>();
  for (const [id, { comm, ms }] of after) {
    const name = nameOf(id, comm);
    totals.set(name, (totals.get(name) ?? 0) + ms - (before.get(id)?.ms ?? 0));
  }
  return [...totals]
    .map(([name, ms]) => [name, ms / docs] as const)
    .filter(([, ms]) => ms >= 0.2)
    .sort((a, b) => b[1] - a[1])
    .map(([name, ms]) => `${name} ${fmt(ms, 1)}`)
    .join(', ');
}

/** Every process, by command name; a kernel worker by its pool (its name also says the work it is on at the moment). */
const processes = () => cpuSnapshot('/proc');
const commandName = (_: string, comm: string) => comm.replace(/^(kworker\/[^-]+)-.*$/, '$1');

/** The threads of the service's Node process (main thread, Piscina workers, V8 helpers, libuv pool). */
const threadsOf = (pid: number) => cpuSnapshot(`/proc/${pid}/task`);
const threadName = (pid: number) => (tid: string, comm: string) => (tid === String(pid) ? 'main' : `${comm}#${tid}`);

/** CPU ms of this process: the bench's light client, and the service too when it runs --in-process. */
const clientCpuMs = (): number => {
  const usage = process.cpuUsage();
  return (usage.user + usage.system) / 1000;
};

/** CPU ms of the service's Node process (threads that have ended included). */
const serviceCpuMs = async (service: Service): Promise<number> => (service.pid === process.pid ? clientCpuMs() : (await statFileCpu(`/proc/${service.pid}/stat`))?.ms ?? NaN);

const STAGE_SERIES = /^docproc_convert_stage_duration_seconds_(sum|count)\{stage="([^"]+)"\} (\S+)$/gm;

/** Sum and count per stage of the service's stage histogram, from its /metrics (empty when it has none). */
async function stageTotals(service: Service): Promise<Map<string, { sum: number; count: number }>> {
  const totals = new Map<string, { sum: number; count: number }>();
  const text = await fetch(`${service.url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } }).then((r) => r.text());
  for (const [, kind, stage, value] of text.matchAll(STAGE_SERIES)) {
    const entry = totals.get(stage!) ?? { sum: 0, count: 0 };
    entry[kind as 'sum' | 'count'] = Number(value);
    totals.set(stage!, entry);
  }
  return totals;
}

async function main(): Promise<void> {
  // Both sides keep their files (profiles, inputs, PDFs) in the same place: the service's default
  // temp directory unless --tmp says otherwise. On a disk the kernel's writeback and ext4's work
  // (kworker threads) land in either side's rounds; the breakdown by command shows them.
  process.env.TMPDIR = args.tmp;
  const docs = await Promise.all(DOCUMENTS.map((d) => readFile(d.file)));
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'docproc-bench-convert-'));
  const bare: BareOffice[] = [];
  let service: Service | undefined;
  // The service and the bare processes are children: stopped on Ctrl-C or SIGTERM too, not left running.
  const stopOnSignal = () => void stopAll().finally(() => process.exit(130));
  const stopAll = async () => {
    process.off('SIGINT', stopOnSignal).off('SIGTERM', stopOnSignal);
    await Promise.all(bare.map((b) => b.stop()));
    await service?.stop();
    await rm(workDir, { recursive: true, force: true });
  };
  process.once('SIGINT', stopOnSignal).once('SIGTERM', stopOnSignal);
  try {
    const inputs = await Promise.all(docs.map(async (doc, i) => {
      const file = path.join(workDir, `doc-${i}.${DOCUMENTS[i]!.format}`);
      await writeFile(file, doc);
      return file;
    }));
    console.log(`Documents: ${DOCUMENTS.map((d) => `${path.basename(d.file)} (${d.label})`).join('; ')}`);
    console.log(`Service ${IN_PROCESS ? 'in this process (TypeScript through tsx)' : 'compiled (dist/), a process of its own'}; pool ${SIZE} vs ${SIZE} bare processes; concurrency ${CONCURRENCY}; ${args.warmup} warm-up requests; temp files in ${os.tmpdir()}; ${ROUNDS} rounds of ${SECONDS} s; ${LATENCY_ROUNDS} latency samples per document per round; CPUs ${os.cpus().length}; load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}\n`);

    const cold = [];
    for (let i = 0; i < Number(args['cold-docs']); i++) cold.push(await coldConvert(inputs[i % inputs.length]!, workDir));
    console.log(`cold soffice --convert-to pdf, one document: median ${fmt(median(cold))} ms (${cold.map((c) => fmt(c)).join(', ')})`);

    for (let i = 0; i < SIZE; i++) bare.push(await BareOffice.start(await mkdtemp(path.join(workDir, 'bare-')), inputs));
    service = await startService();
    const uploads = docs.map((doc, i) => multipartUpload(doc, DOCUMENTS[i]!.format));
    for (const upload of uploads) for (let i = 0; i < SIZE; i++) await convertViaHttp(service, upload); // warm every pool process
    // A service runs for many thousands of requests; V8 goes on optimizing for the first ~1000
    // (measured with --trace-opt: 0.7–1.4 ms of compile time per document between requests 150
    // and 1200), so the steady state is measured after a warm-up at the bench's concurrency.
    let warmed = 0;
    await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
      while (warmed < Number(args.warmup)) await convertViaHttp(service!, uploads[warmed++ % uploads.length]!);
    }));

    const throughputRatios: number[] = [];
    const addedLatency: number[][] = docs.map(() => []);
    const bareLatency: number[][] = docs.map(() => []);
    const serviceLatency: number[][] = docs.map(() => []);
    const stageMeans = new Map<string, number[]>();
    const cpuPerDoc = { bare: [] as number[], service: [] as number[], node: [] as number[], client: [] as number[] };
    for (let round = 1; round <= ROUNDS; round++) {
      // One at a time, paired: bare (process 0) then the service on the same document, alternating,
      // so a burst of load from elsewhere hits both sides of a pair.
      const before = await stageTotals(service);
      const latencies: number[][] = docs.map(() => []);
      const ours: number[][] = docs.map(() => []);
      for (let r = 0; r < LATENCY_ROUNDS; r++) {
        for (const [i, upload] of uploads.entries()) {
          latencies[i]!.push((await bare[0]!.ask<{ ms: number }>({ op: 'one', input: i })).ms);
          const t0 = performance.now();
          await convertViaHttp(service, upload);
          ours[i]!.push(performance.now() - t0);
        }
      }
      const after = await stageTotals(service);
      for (const [stage, total] of after) {
        const previous = before.get(stage) ?? { sum: 0, count: 0 };
        const requests = LATENCY_ROUNDS * docs.length;
        stageMeans.set(stage, [...(stageMeans.get(stage) ?? []), ((total.sum - previous.sum) * 1000) / requests]);
      }
      for (const i of docs.keys()) {
        bareLatency[i]!.push(...latencies[i]!);
        serviceLatency[i]!.push(...ours[i]!);
        addedLatency[i]!.push(...ours[i]!.map((ms, k) => ms - latencies[i]![k]!));
      }

      // Throughput: SIZE bare processes in parallel, then the service at CONCURRENCY.
      const bareBusyBefore = await machineBusyMs();
      const bareCommands = await processes();
      const loops = await Promise.all(bare.map((b) => b.ask<{ docs: number; seconds: number }>({ op: 'loop', seconds: SECONDS })));
      const bareRate = loops.reduce((sum, l) => sum + l.docs / l.seconds, 0);
      const bareDocs = loops.reduce((sum, l) => sum + l.docs, 0);
      cpuPerDoc.bare.push(((await machineBusyMs()) - bareBusyBefore) / bareDocs);
      const bareBreakdown = cpuDelta(bareCommands, await processes(), bareDocs, commandName);
      const serviceCommands = await processes();
      const serviceThreads = await threadsOf(service.pid);
      const serviceBusyBefore = await machineBusyMs();
      const [nodeBefore, clientBefore] = [await serviceCpuMs(service), clientCpuMs()];
      let next = 0;
      let done = 0;
      const started = performance.now();
      const deadline = started + SECONDS * 1000;
      await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
        while (performance.now() < deadline) {
          await convertViaHttp(service!, uploads[next++ % uploads.length]!);
          done++;
        }
      }));
      const serviceRate = done / ((performance.now() - started) / 1000);
      cpuPerDoc.service.push(((await machineBusyMs()) - serviceBusyBefore) / done);
      cpuPerDoc.node.push(((await serviceCpuMs(service)) - nodeBefore) / done);
      cpuPerDoc.client.push((clientCpuMs() - clientBefore) / done);
      console.log(`  CPU ms per document by command — bare: ${bareBreakdown}; service: ${cpuDelta(serviceCommands, await processes(), done, commandName)}`);
      console.log(`  CPU ms per document by thread of the service's Node process: ${cpuDelta(serviceThreads, await threadsOf(service.pid), done, threadName(service.pid))}`);
      throughputRatios.push(serviceRate / bareRate);
      console.log(
        `round ${round}: bare ${fmt(bareRate, 2)} docs/s, service ${fmt(serviceRate, 2)} docs/s (ratio ${fmt(serviceRate / bareRate, 2)}); ` +
          `one at a time bare/service ms: ${docs.map((_, i) => `${fmt(median(latencies[i]!))}/${fmt(median(ours[i]!))}`).join(', ')}; load ${os.loadavg()[0]!.toFixed(2)}`,
      );
    }

    if (Number(args.profile) > 0) {
      // Node's share by stage: the main thread's CPU profile over a service-only run at the same
      // concurrency (the profiler's sampling costs a little, so this run is kept out of the ratios).
      let next = 0;
      let done = 0;
      let mainCpuMs = 0;
      const profile = await mainThreadProfile(async () => {
        // The main thread's CPU over the run only (the profiler's own start and stop are outside it).
        const mainBefore = (await statFileCpu(`/proc/${process.pid}/task/${process.pid}/stat`))?.ms ?? 0;
        const deadline = performance.now() + Number(args.profile) * 1000;
        await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
          while (performance.now() < deadline) {
            await convertViaHttp(service!, uploads[next++ % uploads.length]!);
            done++;
          }
        }));
        mainCpuMs = ((await statFileCpu(`/proc/${process.pid}/task/${process.pid}/stat`))?.ms ?? 0) - mainBefore;
      }, args['profile-out']);
      printProfile(profile, done, mainCpuMs);
    }

    console.log('\nOne at a time, medians over all paired samples (ms): bare warm UNO / POST /v1/convert / added (median of pair differences)');
    for (const [i, d] of DOCUMENTS.entries()) {
      console.log(`  ${d.label.padEnd(42)} ${fmt(median(bareLatency[i]!)).padStart(5)} / ${fmt(median(serviceLatency[i]!)).padStart(5)} / ${fmt(median(addedLatency[i]!), 1).padStart(6)}`);
    }
    if (stageMeans.size) {
      console.log('\nStages, mean ms per request over the one-at-a-time runs (median over rounds):');
      for (const [stage, means] of stageMeans) console.log(`  ${stage.padEnd(12)} ${fmt(median(means), 1).padStart(7)}`);
    }
    console.log(
      `\nCPU per document in the throughput runs (median over rounds, whole machine from /proc/stat): bare ${fmt(median(cpuPerDoc.bare), 1)} ms, ` +
        (IN_PROCESS
          ? `service ${fmt(median(cpuPerDoc.service), 1)} ms, of which this Node process (service, workers, bench client) ${fmt(median(cpuPerDoc.node), 1)} ms`
          : `service ${fmt(median(cpuPerDoc.service), 1)} ms, of which the service's Node process ${fmt(median(cpuPerDoc.node), 1)} ms and the bench client ${fmt(median(cpuPerDoc.client), 1)} ms`),
    );
    const sorted = [...throughputRatios].sort((a, b) => a - b);
    console.log(`\nRatios (median of ${ROUNDS} rounds; shared, noisy machine: min..max shown):`);
    console.log(`  throughput, concurrency ${CONCURRENCY}, pool ${SIZE} / ${SIZE} bare warm-UNO processes: ${fmt(median(throughputRatios), 2)} (${fmt(sorted[0]!, 2)}..${fmt(sorted.at(-1)!, 2)}; target >= 0.9)`);
    console.log(`  p50 added latency (median of paired differences), ${DOCUMENTS[0]!.label}: ${fmt(median(addedLatency[0]!), 1)} ms (target <= 15 ms)`);
  } finally {
    await stopAll();
  }
}

await main();
