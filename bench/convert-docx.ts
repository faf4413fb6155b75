/**
 * DOCX→PDF throughput and latency, in one run on the same documents:
 *   (a) raw warm-UNO loop: N office processes driven directly, no pool (the physical limit)
 *   (b) cold spawn per document (libreoffice-convert: soffice --convert-to, fresh profile)
 *   (c) one warm office process, one job at a time
 *   (d) the HTTP API at concurrency 1, 2, 4, 8 (--url/--key), or the in-process OfficePool
 *
 *   npx tsx bench/convert-docx.ts [--url http://127.0.0.1:PORT --key KEY] [--seconds 8] [--size N]
 *
 * Loopback only; every scenario is bounded in time; temp files live in a private dir.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import libre from 'libreoffice-convert';
import { OfficePool } from '../src/office/index.js';
import { OfficeProcess } from '../src/office/office-process.js';
import { probeJail } from '../src/office/jail.js';
import { CORPUS_DIR } from '../test/support/corpus.js';

const CORPUS = `${CORPUS_DIR}/docx`;
const DOCUMENTS = [
  { label: '1 page', file: 'pandoc-track_changes_insertion.docx' },
  { label: '3 pages', file: 'superdoc-page-numbering-examples.docx' },
  { label: '31 pages', file: 'docx4j-headers_footers.docx' },
];

const { values: args } = parseArgs({
  options: {
    url: { type: 'string' },
    key: { type: 'string' },
    seconds: { type: 'string', default: '8' },
    size: { type: 'string', default: String(os.cpus().length) },
    'cold-docs': { type: 'string', default: '3' },
  },
});
const SECONDS = Number(args.seconds);
const SIZE = Number(args.size);

interface Result {
  name: string;
  docs: number;
  seconds: number;
  latencies: number[];
  errors: number;
}

const docsPerSecond = (r: Result) => r.docs / r.seconds;
function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** Runs `concurrency` loops over the documents (round robin) until the time budget or `maxDocs` is spent. */
async function measure(
  name: string,
  concurrency: number,
  job: (doc: Buffer, docIndex: number, lane: number) => Promise<void>,
  docs: Buffer[],
  budget: { seconds: number; maxDocs?: number },
): Promise<Result> {
  const latencies: number[] = [];
  let errors = 0;
  let next = 0;
  const started = performance.now();
  const deadline = started + budget.seconds * 1000;
  const lane = async (laneIndex: number) => {
    while (performance.now() < deadline && (budget.maxDocs === undefined || next < budget.maxDocs)) {
      const docIndex = next++ % docs.length;
      const t0 = performance.now();
      try {
        await job(docs[docIndex]!, docIndex, laneIndex);
        latencies.push(performance.now() - t0);
      } catch (err) {
        errors++;
        if (errors === 1) console.error(`  ${name}: ${(err as Error).message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, i) => lane(i)));
  const result = { name, docs: latencies.length, seconds: (performance.now() - started) / 1000, latencies, errors };
  console.log(format(result));
  return result;
}

function format(r: Result): string {
  const ms = (v: number) => `${Math.round(v)} ms`.padStart(8);
  return `${r.name.padEnd(44)} ${docsPerSecond(r).toFixed(2).padStart(7)} docs/s  p50 ${ms(percentile(r.latencies, 50))}  p95 ${ms(percentile(r.latencies, 95))}  (${r.docs} docs${r.errors ? `, ${r.errors} errors` : ''})`;
}

async function assertPdf(pdf: Buffer | Uint8Array): Promise<void> {
  if (Buffer.from(pdf.subarray(0, 5)).toString('latin1') !== '%PDF-') throw new Error('not a PDF');
}

/** Warm processes driven directly: the same bridge and UNO calls as the pool, no queue. */
async function rawWarm(name: string, processes: number, docs: Buffer[], jail: boolean): Promise<Result> {
  const offices = Array.from({ length: processes }, () => new OfficeProcess({ pythonPath: '/usr/bin/python3', sofficePath: '/usr/lib/libreoffice/program/soffice', startTimeoutMs: 60_000, jail }));
  try {
    await Promise.all(offices.map((o) => o.start()));
    // One copy of each input per process, as the pool gives every job its own file (in the process's own job area).
    const inputs = await Promise.all(offices.map((office, lane) => Promise.all(docs.map(async (doc, i) => {
      const file = path.join(office.jobsDirectory!, `raw-${lane}-${i}.docx`);
      await writeFile(file, doc);
      return file;
    }))));
    // Warm-up: each process converts each document once.
    await Promise.all(offices.map(async (office, lane) => {
      for (const input of inputs[lane]!) await office.run({ op: 'convert', input, output: path.join(office.jobsDirectory!, `warm-${lane}.pdf`), trackedChanges: 'markup' }, 120_000);
    }));
    return await measure(name, processes, async (_doc, docIndex, lane) => {
      const output = path.join(offices[lane]!.jobsDirectory!, `raw-out-${lane}.pdf`);
      const result = await offices[lane]!.run({ op: 'convert', input: inputs[lane]![docIndex]!, output, trackedChanges: 'markup' }, 120_000);
      if (!result.ok) throw new Error(result.message);
      await assertPdf(await readFile(output));
    }, docs, { seconds: SECONDS });
  } finally {
    await Promise.all(offices.map((o) => o.kill()));
  }
}

function coldConvert(doc: Buffer, tmpdir: string): Promise<Buffer> {
  return new Promise((resolve, reject) =>
    libre.convertWithOptions(doc, '.pdf', undefined, { fileName: 'input.docx', tmpOptions: { tmpdir } }, (err, data) => (err ? reject(err) : resolve(data))),
  );
}

async function viaHttp(url: string, key: string, doc: Buffer): Promise<void> {
  const form = new FormData();
  form.append('file', new Blob([doc], { type: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' }), 'input.docx');
  const response = await fetch(new URL('/v1/convert?from=docx&to=pdf', url), { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
  if (!response.ok) throw new Error(`HTTP ${response.status}: ${(await response.text()).slice(0, 200)}`);
  await assertPdf(new Uint8Array(await response.arrayBuffer()));
}

async function main(): Promise<void> {
  if (args.url && !/^http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?\/?$/.test(args.url)) throw new Error('--url must be a loopback address');
  if (args.url && !args.key) throw new Error('--url needs --key');
  const docs = await Promise.all(DOCUMENTS.map((d) => readFile(path.join(CORPUS, d.file))));
  const workDir = await mkdtemp(path.join(os.tmpdir(), 'docproc-bench-office-'));
  console.log(`Documents: ${DOCUMENTS.map((d) => `${d.file} (${d.label})`).join(', ')}`);
  console.log(`Office processes: ${SIZE}; ${SECONDS} s per warm scenario; CPUs: ${os.cpus().length}\n`);
  try {
    const jailed = probeJail().available;
    const raw = await rawWarm(`(a) raw warm UNO, ${SIZE} processes${jailed ? ', jailed' : ''}`, SIZE, docs, jailed);
    const unjailed = jailed ? await rawWarm(`(a') raw warm UNO, ${SIZE} processes, no jail`, SIZE, docs, false) : undefined;
    const cold = await measure('(b) cold soffice per document (libreoffice-convert)', 1, async (doc) => assertPdf(await coldConvert(doc, workDir)), docs, {
      seconds: 120,
      maxDocs: Number(args['cold-docs']),
    });
    const single = await rawWarm('(c) one warm process, one job at a time', 1, docs, jailed);

    const service: Result[] = [];
    let pool: OfficePool | undefined;
    let label: string;
    let run: (doc: Buffer) => Promise<void>;
    if (args.url) {
      label = 'HTTP';
      run = (doc) => viaHttp(args.url!, args.key!, doc);
    } else {
      console.log('\n(no --url given: measuring the OfficePool in-process instead of the HTTP API)');
      label = 'in-process pool';
      pool = new OfficePool({ size: SIZE });
      await pool.start();
      for (const doc of docs) await pool.convertToPdf(doc);
      run = async (doc) => assertPdf(await pool!.convertToPdf(doc));
    }
    try {
      for (const concurrency of [1, 2, 4, 8]) service.push(await measure(`(d) ${label}, concurrency ${concurrency}`, concurrency, run, docs, { seconds: SECONDS }));
    } finally {
      await pool?.close();
    }

    const atSize = service.find((r) => r.name.endsWith(`concurrency ${Math.max(SIZE, 1)}`)) ?? service.filter((r) => Number(r.name.split(' ').pop()) >= SIZE)[0]!;
    const atFour = service.find((r) => r.name.endsWith('concurrency 4'))!;
    const best = service.filter((r) => Number(r.name.split(' ').pop()) >= SIZE).reduce((a, b) => (docsPerSecond(b) > docsPerSecond(a) ? b : a));
    console.log('\nRatios (docs/s):');
    if (unjailed) console.log(`  (a) jailed / (a') no jail: ${(docsPerSecond(raw) / docsPerSecond(unjailed)).toFixed(2)} (the jail is set up once per process; target ~1.0)`);
    console.log(`  ${label} @ concurrency ${atSize.name.split(' ').pop()} / (a) raw warm: ${(docsPerSecond(atSize) / docsPerSecond(raw)).toFixed(2)} (target >= 0.85); best at concurrency >= ${SIZE}: ${(docsPerSecond(best) / docsPerSecond(raw)).toFixed(2)}`);
    console.log(`  ${label} @ concurrency 4 / (b) cold spawn: ${(docsPerSecond(atFour) / docsPerSecond(cold)).toFixed(1)}x (target >= 8x)`);
    console.log(`  ${label} @ concurrency 4 / (c) one warm process: ${(docsPerSecond(atFour) / docsPerSecond(single)).toFixed(2)}x (target >= 1.7x)`);
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}

await main();
