/**
 * Markdown/HTML → DOCX benchmark: our engine in-process (or over HTTP with --url/--key)
 * beside pandoc on the same files in the same run (pandoc's process start included).
 *   npx tsx bench/markup.ts [--runs 9] [--concurrency 4] [--url http://localhost:3000 --key KEY]
 * Per case: median time per document, sequentially, for us and for pandoc, their ratio, and our
 * throughput (documents/s) with --concurrency requests in flight.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { htmlToDocx } from '../src/documents/html/index.js';
import { markdownToDocx } from '../src/documents/markdown/index.js';
import { CORPUS_DIR } from '../test/support/corpus.js';

const args = process.argv.slice(2);
const option = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const runs = Number(option('runs') ?? 9);
const concurrency = Number(option('concurrency') ?? 4);
const url = option('url');
const key = option('key');
const limits = { maxBytes: 20 * 1024 * 1024, maxNestingDepth: 64 };
const CORPUS = `${CORPUS_DIR}`;

/** The first ≈50 KB of the CommonMark spec (≈30 pages as rendered), cut before a heading. */
function thirtyPages(work: string): string {
  const spec = readFileSync(`${CORPUS}/md/commonmark-spec.md`, 'utf8');
  const cut = spec.indexOf('\n\n#', 50 * 1024);
  const file = join(work, 'commonmark-spec-30-pages.md');
  writeFileSync(file, spec.slice(0, cut + 1));
  return file;
}

async function ours(from: 'md' | 'html', source: Buffer): Promise<number> {
  if (url) {
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(source)]), from === 'md' ? 'input.md' : 'input.html');
    const response = await fetch(`${url}/v1/convert?from=${from}&to=docx`, {
      method: 'POST', body: form, headers: key ? { authorization: `Bearer ${key}` } : {},
    });
    if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
    return (await response.arrayBuffer()).byteLength;
  }
  const result = await (from === 'md' ? markdownToDocx : htmlToDocx)(source, { limits });
  return result.docx.length;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function throughput(from: 'md' | 'html', source: Buffer, total: number): Promise<number> {
  let next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next++ < total) await ours(from, source);
  }));
  return (total * 1000) / (performance.now() - started);
}

const work = mkdtempSync(join(tmpdir(), 'markup-bench-'));
try {
  const cases = [
    { label: 'md small (9 KB)', from: 'md', file: `${CORPUS}/md/pandoc-testsuite.md`, pandocFrom: 'gfm' },
    { label: 'md ~30 pages', from: 'md', file: thirtyPages(work), pandocFrom: 'gfm' },
    { label: 'md ~120 pages', from: 'md', file: `${CORPUS}/md/commonmark-spec.md`, pandocFrom: 'gfm' },
    { label: 'html small', from: 'html', file: `${CORPUS}/html/html-to-docx-test_browser.html`, pandocFrom: 'html' },
    { label: 'html large', from: 'html', file: `${CORPUS}/html/turndown-test-index.html`, pandocFrom: 'html' },
  ] as const;
  console.log(`mode: ${url ? `HTTP ${url}` : 'in-process'}; ${runs} sequential runs each (median), throughput with ${concurrency} in flight\n`);
  for (const c of cases) {
    const source = readFileSync(c.file);
    for (let i = 0; i < 3; i++) await ours(c.from, source); // warm-up (module load, JIT, worker start)
    const oursMs: number[] = [];
    const pandocMs: number[] = [];
    for (let i = 0; i < runs; i++) {
      let t = performance.now();
      await ours(c.from, source);
      oursMs.push(performance.now() - t);
      t = performance.now();
      execFileSync('pandoc', ['-f', c.pandocFrom, '-t', 'docx', '-o', join(work, 'out.docx'), c.file], { stdio: 'ignore' });
      pandocMs.push(performance.now() - t);
    }
    const o = median(oursMs);
    const p = median(pandocMs);
    const docsPerSecond = await throughput(c.from, source, Math.max(runs, concurrency * 3));
    console.log(
      `${c.label.padEnd(16)} ${basename(c.file).padEnd(32)} ${(source.length / 1024).toFixed(0).padStart(4)} KiB  ` +
      `ours ${o.toFixed(1).padStart(7)} ms  pandoc ${p.toFixed(1).padStart(7)} ms  ratio ${(p / o).toFixed(1).padStart(5)}×  ` +
      `${docsPerSecond.toFixed(1).padStart(6)} docs/s  (ours per run: ${oursMs.map((v) => v.toFixed(0)).join(', ')})`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
