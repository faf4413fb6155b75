/**
 * Markdown/HTML → DOCX benchmark: our engine in-process (or over HTTP with --url/--key)
 * beside pandoc on the same files in the same run (pandoc's process start included).
 *   npx tsx bench/markup.ts [--runs 5] [--url http://localhost:3000 --key KEY]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { htmlToDocx } from '../src/documents/html/index.js';
import { markdownToDocx } from '../src/documents/markdown/index.js';

const args = process.argv.slice(2);
const option = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const runs = Number(option('runs') ?? 5);
const url = option('url');
const key = option('key');
const limits = { maxBytes: 20 * 1024 * 1024, maxNestingDepth: 64 };

const cases = [
  { label: 'md small', from: 'md', file: '/work/shared/corpus/md/pandoc-pipe-tables.md', pandocFrom: 'gfm' },
  { label: 'md large (~60 pages)', from: 'md', file: '/work/shared/corpus/md/commonmark-spec.md', pandocFrom: 'gfm' },
  { label: 'html small', from: 'html', file: '/work/shared/corpus/html/html-to-docx-test_browser.html', pandocFrom: 'html' },
  { label: 'html large', from: 'html', file: '/work/shared/corpus/html/turndown-test-index.html', pandocFrom: 'html' },
] as const;

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

const work = mkdtempSync(join(tmpdir(), 'markup-bench-'));
try {
  console.log(`mode: ${url ? `HTTP ${url}` : 'in-process'}; ${runs} runs each; median times\n`);
  for (const c of cases) {
    const source = readFileSync(c.file);
    await ours(c.from, source); // warm-up (module load, JIT)
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
    console.log(
      `${c.label.padEnd(22)} ${basename(c.file).padEnd(34)} ${(source.length / 1024).toFixed(0).padStart(5)} KiB  ` +
      `ours ${o.toFixed(1).padStart(7)} ms  pandoc ${p.toFixed(1).padStart(7)} ms  ratio ${(p / o).toFixed(1)}×  ` +
      `(ours per run: ${oursMs.map((v) => v.toFixed(0)).join(', ')})`,
    );
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
