/**
 * The main thread's CPU per worker task on the DOCX→PDF path: prepareForPdf (guards, scrub, what the
 * document needs) on the three documents of bench/convert-docx.ts, through the service's WorkerPool
 * (Piscina: clone, post, wake, answer) against in place, in alternating rounds. CPU from
 * /proc/thread-self (the main thread only), so the worker thread's own work is not counted.
 *
 *   npx tsx bench/worker-round-trip.ts [--tasks 3000] [--rounds 3]
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { CORPUS_DIR } from '../test/support/corpus.js';
import { WorkerPool } from '../src/compute/worker-pool.js';
import { prepareForPdf } from '../src/documents/docx-pdf/prepare.js';

function threadCpuMs(): number {
  const stat = readFileSync('/proc/thread-self/stat', 'latin1');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * 10;
}
const { values: args } = parseArgs({ options: { tasks: { type: 'string', default: '3000' }, rounds: { type: 'string', default: '3' } } });
const docs = ['pandoc-tables.docx', 'superdoc-advanced-text.docx', 'superdoc-h_f-normal-odd-even-firstpg.docx'].map((f) => readFileSync(path.join(CORPUS_DIR, 'docx', f)));
const pool = new WorkerPool({ threads: 2, maxQueue: 100, memoryMb: 512 });
const N = Number(args.tasks);
for (let i = 0; i < 600; i++) await pool.run('prepareDocx', { docx: docs[i % 3], mode: 'markup', format: 'docx' });
for (let round = 0; round < Number(args.rounds); round++) {
  let t = threadCpuMs(); let w = performance.now();
  for (let i = 0; i < N; i++) await pool.run('prepareDocx', { docx: docs[i % 3], mode: 'markup', format: 'docx' });
  const worker = (threadCpuMs() - t) / N, workerWall = (performance.now() - w) / N;
  t = threadCpuMs(); w = performance.now();
  for (let i = 0; i < N; i++) prepareForPdf(docs[i % 3]!, 'docx', 'markup');
  const inPlace = (threadCpuMs() - t) / N, inPlaceWall = (performance.now() - w) / N;
  console.log(`main-thread CPU per doc: via worker ${worker.toFixed(3)} ms (wall ${workerWall.toFixed(3)}), in place ${inPlace.toFixed(3)} ms (wall ${inPlaceWall.toFixed(3)})`);
}
process.exit(0);
