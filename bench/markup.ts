/**
 * Markdown/HTML → DOCX benchmark, two parts, each against a baseline measured in the same run:
 *
 * 1. Profile (in-process, CPU time of this process, median over --runs): where one conversion
 *    spends its time, stage by stage — prescan (decoding and the complexity prescan), parse,
 *    model (HTML blocks, images lookup, lowering), images (resolving), docx (XML and ZIP, with
 *    the ZIP share measured apart) — beside the bare parser on the same text: remark-parse +
 *    remark-gfm for Markdown (the user's fixed stack), parse5's streaming tokenizer for HTML.
 *    `ratio` = whole conversion / bare parser; the Markdown target is ≤ 1.3 on every file ≥ 20 KB.
 * 2. Against the pandoc CLI (one process per document, as users run it; it gets the one file, no
 *    network), wall time, ours and pandoc's runs interleaved so that load on the machine hits
 *    both alike. Ours is in-process, or over HTTP with --url/--key (keep-alive, concurrency 1;
 *    the difference to in-process is the HTTP stage). Targets: geomean ≥ 20× for Markdown and
 *    for HTML, no HTML file under 8×.
 *
 *   npx tsx bench/markup.ts [--runs 7] [--url http://127.0.0.1:3000 --key KEY] [--no-pandoc]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Tokenizer, type TokenHandler } from 'parse5';
import PizZip from 'pizzip';
import remarkGfm from 'remark-gfm';
import remarkParse from 'remark-parse';
import { unified } from 'unified';
import { htmlToDocx } from '../src/documents/html/index.js';
import { markdownToDocx } from '../src/documents/markdown/index.js';
import type { Stage, StageTimes } from '../src/documents/model/stages.js';
import { writeZip, type ZipPart } from '../src/documents/ooxml/zip/write.js';
import { CORPUS_DIR } from '../test/support/corpus.js';

const args = process.argv.slice(2);
const option = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const runs = Number(option('runs') ?? 7);
const url = option('url');
const key = option('key');
const withPandoc = !args.includes('--no-pandoc');
const limits = { maxBytes: 20 * 1024 * 1024, maxNestingDepth: 64 };

type Kind = 'md' | 'html';
interface Case {
  name: string;
  kind: Kind;
  source: Buffer;
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const geomean = (values: number[]) => Math.exp(values.reduce((s, v) => s + Math.log(v), 0) / values.length);
const cpuMs = (since: NodeJS.CpuUsage) => {
  const used = process.cpuUsage(since);
  return (used.user + used.system) / 1000;
};

/** The corpus's Markdown and HTML files, plus cuts of the CommonMark spec at 32, 64 and 128 KB (before a heading). */
function cases(): Case[] {
  const list: Case[] = [];
  for (const kind of ['md', 'html'] as const) {
    for (const file of readdirSync(join(CORPUS_DIR, kind)).filter((f) => f.endsWith(`.${kind}`)).sort()) {
      list.push({ name: file, kind, source: readFileSync(join(CORPUS_DIR, kind, file)) });
    }
  }
  const spec = readFileSync(join(CORPUS_DIR, 'md', 'commonmark-spec.md'), 'utf8');
  for (const kb of [32, 64, 128]) {
    const cut = spec.indexOf('\n\n#', kb * 1024);
    list.push({ name: `commonmark-spec-${kb}k.md`, kind: 'md', source: Buffer.from(spec.slice(0, cut + 1)) });
  }
  return list;
}

const markdownParser = unified().use(remarkParse).use(remarkGfm).freeze();
const ignore = () => {};
const tokenHandler: TokenHandler = {
  onComment: ignore, onDoctype: ignore, onStartTag: ignore, onEndTag: ignore, onEof: ignore,
  onCharacter: ignore, onNullCharacter: ignore, onWhitespaceCharacter: ignore,
};

/** The bare parser's CPU time on the text: remark-parse + remark-gfm, or parse5's tokenizer. */
function baseline(c: Case): number {
  const text = c.source.toString('utf8');
  const started = process.cpuUsage();
  if (c.kind === 'md') markdownParser.parse(text);
  else new Tokenizer({ sourceCodeLocationInfo: false }, tokenHandler).write(text, true);
  return cpuMs(started);
}

const convert = (c: Case, stages?: StageTimes) => (c.kind === 'md' ? markdownToDocx : htmlToDocx)(c.source, { limits, stages });

/** The ZIP stage alone: the package's parts written again by the same writer. */
function zipMs(docx: Buffer): number {
  const zip = new PizZip(docx);
  const parts: ZipPart[] = Object.values(zip.files).map((f) => ({ name: f.name, data: f.asNodeBuffer(), store: /\.(png|jpe?g|gif)$/.test(f.name) }));
  const started = process.cpuUsage();
  writeZip(parts);
  return cpuMs(started);
}

async function profile(all: Case[]): Promise<void> {
  const stageNames: Stage[] = ['prescan', 'parse', 'model', 'images', 'docx'];
  console.log(`\n1. Profile, CPU ms per conversion (median of ${runs}); bare parser = ${'remark-parse+gfm (md) / parse5 tokenizer (html)'}`);
  console.log(`${'document'.padEnd(38)} ${'KB'.padStart(5)} ${stageNames.map((s) => s.padStart(8)).join('')} ${'of: zip'.padStart(8)} ${'total'.padStart(8)} ${'bare'.padStart(8)} ${'ratio'.padStart(6)}`);
  for (const c of all) {
    for (let i = 0; i < 3; i++) {
      baseline(c);
      await convert(c);
    }
    const samples: Record<string, number[]> = { total: [], bare: [], zip: [] };
    for (const s of stageNames) samples[s] = [];
    for (let i = 0; i < runs; i++) {
      samples.bare.push(baseline(c));
      const stages: StageTimes = {};
      const started = process.cpuUsage();
      const { docx } = await convert(c, stages);
      samples.total.push(cpuMs(started));
      for (const s of stageNames) samples[s].push(stages[s] ?? 0);
      samples.zip.push(zipMs(docx));
    }
    const m = Object.fromEntries(Object.entries(samples).map(([k, v]) => [k, median(v)]));
    console.log(
      `${c.name.padEnd(38)} ${(c.source.length / 1024).toFixed(0).padStart(5)} ${stageNames.map((s) => m[s].toFixed(1).padStart(8)).join('')} ` +
      `${m.zip.toFixed(1).padStart(8)} ${m.total.toFixed(1).padStart(8)} ${m.bare.toFixed(1).padStart(8)} ${(m.total / m.bare).toFixed(2).padStart(6)}`,
    );
  }
}

async function oursOverHttp(c: Case): Promise<void> {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(c.source)]), c.kind === 'md' ? 'input.md' : 'input.html');
  const response = await fetch(`${url}/v1/convert?from=${c.kind}&to=docx`, { method: 'POST', body: form, headers: key ? { authorization: `Bearer ${key}` } : {} });
  if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
  await response.arrayBuffer();
}

async function againstPandoc(all: Case[]): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'markup-bench-'));
  try {
    console.log(`\n2. Against the pandoc CLI, wall ms (median of ${runs}, interleaved); ours ${url ? `over HTTP (${url})` : 'in-process'}`);
    const ratios: Record<Kind, number[]> = { md: [], html: [] };
    for (const c of all) {
      const input = join(work, c.kind === 'md' ? 'input.md' : 'input.html');
      writeFileSync(input, c.source);
      const pandoc = () => execFileSync('pandoc', ['-f', c.kind === 'md' ? 'gfm' : 'html', '-t', 'docx', '-o', join(work, 'out.docx'), input], { cwd: work, stdio: 'ignore' });
      const ours = () => (url ? oursOverHttp(c) : convert(c));
      for (let i = 0; i < 3; i++) await ours();
      pandoc();
      const oursMs: number[] = [];
      const pandocMs: number[] = [];
      for (let i = 0; i < runs; i++) {
        let t = performance.now();
        await ours();
        oursMs.push(performance.now() - t);
        t = performance.now();
        pandoc();
        pandocMs.push(performance.now() - t);
      }
      const ratio = median(pandocMs) / median(oursMs);
      ratios[c.kind].push(ratio);
      console.log(`${c.name.padEnd(38)} ${(c.source.length / 1024).toFixed(0).padStart(5)} KB  ours ${median(oursMs).toFixed(1).padStart(7)} ms  pandoc ${median(pandocMs).toFixed(1).padStart(7)} ms  ${ratio.toFixed(1).padStart(6)}×`);
    }
    for (const kind of ['md', 'html'] as const) {
      console.log(`${kind}: geomean ${geomean(ratios[kind]).toFixed(1)}× over ${ratios[kind].length} files, lowest ${Math.min(...ratios[kind]).toFixed(1)}×`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const all = cases();
await profile(all);
if (withPandoc) await againstPandoc(all);
