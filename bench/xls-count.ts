/**
 * Cost of counting an XLS before LibreOffice (issue 24, xls-structure.ts) against converting it, both
 * measured in this run: the count's CPU time (median of many rounds, warm) on the largest real XLS
 * (readxl's datasets, 94 KB Workbook stream) and on a generated 10⁵-cell one, against one cold
 * `soffice --convert-to pdf` of each (its own profile, wall time). Prints the ratios.
 *   npx tsx bench/xls-count.ts [--rounds 200]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { readCompoundFile } from '../src/inputs/compound-file.js';
import { assertXlsStructure } from '../src/documents/docx-pdf/xls-structure.js';
import { buildXls } from '../test/support/office/biff-builder.js';

const { values } = parseArgs({ options: { rounds: { type: 'string', default: '200' } } });
const rounds = Number(values.rounds);
const dir = mkdtempSync(path.join(tmpdir(), 'docproc-bench-xls-'));

const generatedCells = Array.from({ length: 100_000 }, (_, i) => ({ row: Math.floor(i / 100), column: i % 100, kind: 'number' as const }));
const files: [string, Buffer][] = [
  ['datasets.xls', readFileSync(path.resolve(import.meta.dirname, '../test/fixtures/formats/datasets.xls'))],
  ['generated 10^5 cells', buildXls([{ cells: generatedCells }])],
];

/** CPU milliseconds of one call, median over the rounds (after warm-up rounds). */
function cpuMedian(work: () => unknown): number {
  for (let i = 0; i < 10; i++) work();
  const times: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const started = process.cpuUsage();
    work();
    const used = process.cpuUsage(started);
    times.push((used.user + used.system) / 1000);
  }
  return times.sort((a, b) => a - b)[Math.floor(times.length / 2)]!;
}

function convertMs(name: string, data: Buffer): number {
  const input = path.join(dir, `${name.replace(/\W+/g, '-')}.xls`);
  writeFileSync(input, data);
  const started = performance.now();
  execFileSync('soffice', [`-env:UserInstallation=file://${dir}/profile`, '--headless', '--convert-to', 'pdf', '--outdir', path.join(dir, 'out'), input], { stdio: 'ignore', timeout: 180_000 });
  return performance.now() - started;
}

try {
  // A first conversion creates the profile, so each measured one is a cold process with a ready profile.
  convertMs('warm-profile', files[0]![1]);
  for (const [name, data] of files) {
    const readOnly = cpuMedian(() => readCompoundFile(data)!.stream('Workbook'));
    const count = cpuMedian(() => assertXlsStructure(data));
    const convert = convertMs(name, data);
    const counted = assertXlsStructure(data);
    console.log(
      `${name.padEnd(22)} ${String(data.length).padStart(8)} B  cells ${counted.cells}  stream read ${readOnly.toFixed(3)} ms CPU  count (incl. read) ${count.toFixed(3)} ms CPU  ` +
        `soffice --convert-to pdf ${convert.toFixed(0)} ms wall  count/convert ${(count / convert).toExponential(2)}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
