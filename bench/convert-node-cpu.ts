/**
 * Node's CPU per DOCX→PDF request (issue 27): the service's own process, measured from /proc while
 * it converts the three Word documents of bench/convert-docx.ts at concurrency 4, for this checkout
 * and, with --compare, for other checkouts (e.g. a copy of main), in the same run.
 *
 * Each checkout runs as its own service process (node + tsx, or its dist/ with --compiled; pool of
 * --pool office processes, temp files where TMPDIR says, as the service's default); the client is
 * this process, so its CPU is not counted. Every service is warmed up (--warmup requests, as a
 * long-running replica is), then the rounds alternate the services in ABBA order so that load from
 * elsewhere on the shared machine hits both alike. Per round and service: utime+stime of the whole
 * Node process (/proc/PID/stat, which keeps the time of threads that ended) per request, and of its
 * main thread alone (schedstat, ns). Printed: the medians over rounds, and the median of the paired
 * per-round differences to the first service. LibreOffice's processes are children and are not
 * counted: this is Node's share.
 *
 * --compare DIR#FLAGS runs that checkout with Node flags before the entry point (e.g.
 * `--compare .#--max-semi-space-size=64`: this checkout with a larger young generation).
 *
 * --compiled runs every checkout from tsc's output (dist/, built first) as `npm start` does, instead of
 * its sources through tsx.
 *
 *   npx tsx bench/convert-node-cpu.ts [--compare DIR[#FLAGS]]... [--compiled] [--rounds 8] [--requests 120] [--concurrency 4]
 *                                     [--pool 2] [--warmup 600] [--redis redis://localhost:6379]
 *
 * --redis runs the services on that Redis (the production store: key lookup, rate-limit hit and
 * concurrency slot are Redis round trips) instead of the in-memory store.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CORPUS_DIR } from '../test/support/corpus.js';
import { freePort } from '../test/support/global-setup.js';
import { buildCompiled, issueKey, projectRoot, startService, type ServiceProcess } from './support/service.js';
import { benchServiceEnv, convertOverHttp, multipartUpload, type ConvertUpload } from './support/convert-client.js';
import { statCpu } from './support/proc-cpu.js';

const { values: args } = parseArgs({
  options: {
    compare: { type: 'string', multiple: true, default: [] },
    rounds: { type: 'string', default: '8' },
    requests: { type: 'string', default: '120' },
    concurrency: { type: 'string', default: '4' },
    pool: { type: 'string', default: '2' },
    warmup: { type: 'string', default: '600' },
    redis: { type: 'string', default: '' },
    compiled: { type: 'boolean', default: false },
  },
});
const ROUNDS = Number(args.rounds);
const REQUESTS = Number(args.requests);
const CONCURRENCY = Number(args.concurrency);
const DOCUMENTS = ['pandoc-tables.docx', 'superdoc-advanced-text.docx', 'superdoc-h_f-normal-odd-even-firstpg.docx'].map((name) => readFileSync(path.join(CORPUS_DIR, 'docx', name)));

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
/** utime+stime (ms) of the whole process, threads that have ended included. */
const processCpuMs = (pid: number): number => statCpu(readFileSync(`/proc/${pid}/stat`, 'latin1')).ms;
/** Time on a CPU (ms) of the process's main thread. */
const mainThreadCpuMs = (pid: number) => Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'latin1').split(' ')[0]) / 1e6;

const UPLOADS = DOCUMENTS.map((doc) => multipartUpload(doc));
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

interface Target {
  label: string;
  service: ServiceProcess;
  key: string;
  dataDir: string;
}

const convert = (target: Target, upload: ConvertUpload) => convertOverHttp(target.service.base, target.key, upload, agent, target.label);

async function run(target: Target, requests: number): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < requests) await convert(target, UPLOADS[next++ % UPLOADS.length]!);
  }));
}

async function start(label: string, root: string, nodeArgs: string[]): Promise<Target> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'docproc-node-cpu-'));
  const env = { ...benchServiceEnv(Number(args.pool)), DATA_DIR: dataDir, REDIS_URL: args.redis!, SMTP_URL: '' };
  if (args.compiled) buildCompiled(root);
  const service = await startService({ name: label, port: await freePort(), env, root, nodeArgs, compiled: args.compiled, readyTimeoutMs: 180_000 });
  const key = await issueKey(service, `node-cpu-${process.pid}-${label.replace(/\W/g, '')}@example.com`);
  return { label, service, key, dataDir };
}

async function main(): Promise<void> {
  const sides = [{ root: projectRoot, nodeArgs: [] as string[] }, ...args.compare!.map((spec) => {
    const [dir, flags] = spec.split('#');
    return { root: path.resolve(dir!), nodeArgs: flags ? flags.split(' ').filter(Boolean) : [] };
  })];
  const targets: Target[] = [];
  try {
    for (const [i, { root, nodeArgs }] of sides.entries()) targets.push(await start(i === 0 ? 'this' : `compare${i}:${path.basename(root)}${nodeArgs.length ? ` ${nodeArgs.join(' ')}` : ''}`, root, nodeArgs));
    console.log(`Services: ${targets.map((t) => `${t.label} (pid ${t.service.pid})`).join(', ')}; store ${args.redis || 'in-memory'}; pool ${args.pool}; concurrency ${CONCURRENCY}`);
    for (const target of targets) await run(target, Number(args.warmup));
    const total = new Map(targets.map((t) => [t.label, [] as number[]]));
    const main = new Map(targets.map((t) => [t.label, [] as number[]]));
    for (let round = 1; round <= ROUNDS; round++) {
      const order = round % 2 ? targets : [...targets].reverse();
      const line: string[] = [];
      for (const target of order) {
        const pid = target.service.pid;
        const [cpu0, main0] = [processCpuMs(pid), mainThreadCpuMs(pid)];
        await run(target, REQUESTS);
        const perRequest = (processCpuMs(pid) - cpu0) / REQUESTS;
        const mainPerRequest = (mainThreadCpuMs(pid) - main0) / REQUESTS;
        total.get(target.label)!.push(perRequest);
        main.get(target.label)!.push(mainPerRequest);
        line.push(`${target.label} ${perRequest.toFixed(2)} (main ${mainPerRequest.toFixed(2)})`);
      }
      console.log(`round ${round}: ms per request ${line.join(', ')}`);
    }
    console.log('\nNode process CPU ms per request, median over rounds: total (main thread + other threads)');
    const base = targets[0]!.label;
    for (const { label } of targets) {
      const t = total.get(label)!;
      const m = main.get(label)!;
      const paired = label === base ? '' : `; paired difference ${base} − ${label}: total ${median(total.get(base)!.map((v, i) => v - t[i]!)).toFixed(2)}, main ${median(main.get(base)!.map((v, i) => v - m[i]!)).toFixed(2)}`;
      console.log(`  ${label.padEnd(28)} ${median(t).toFixed(2)} (${median(m).toFixed(2)} + ${median(t.map((v, i) => v - m[i]!)).toFixed(2)}); min..max ${Math.min(...t).toFixed(2)}..${Math.max(...t).toFixed(2)}${paired}`);
    }
  } finally {
    for (const target of targets) {
      // The bench's keys go (with --redis they would stay in the shared store).
      await fetch(`${target.service.base}/v1/auth/key`, { method: 'DELETE', headers: { authorization: `Bearer ${target.key}` } }).then((r) => r.arrayBuffer(), () => undefined);
      await target.service.stop(30_000);
      rmSync(target.dataDir, { recursive: true, force: true });
    }
  }
}

await main();
