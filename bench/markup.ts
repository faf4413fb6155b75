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
 *    for HTML, no HTML file under 8×. Per file also the bare parser's CPU time on the same text
 *    and `bound` = pandoc / bare parser: the ratio a conversion could reach if everything but the
 *    user's parser took no time (for Markdown, remark-parse + remark-gfm bounds the large files).
 *    --url/--key may be given several times (e.g. the service before and after a change): every
 *    service's call is made in the same interleaved round, so their ratios come from one run.
 *    --pid (one per --url) adds that service's CPU time per request, split into its main thread
 *    (HTTP, multipart, auth, limits, response, worker hand-off) and its other threads (the
 *    worker thread converting, V8's compiler and GC helpers), read from /proc.
 *    The client is node:http with each document's multipart body built once (fetch + FormData
 *    cost the client more CPU per request than the service's own HTTP, on the same 2 cores).
 *
 *    Before timing, every service converts every file --warmup times (default 30), as a long-running
 *    replica has: with only a few calls per file its worker was still compiling.
 *
 *    --compare DIR (part 1): another checkout (e.g. `git worktree`/`git archive` of main) whose
 *    converters run alternately with this one's in this process, for paired before/after stage times.
 *
 *   npx tsx bench/markup.ts [--runs 7] [--warmup 30] [--compare DIR] [--url http://127.0.0.1:3000 --key KEY [--pid PID]]... [--no-pandoc] [--no-profile] [--only md|html]
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
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
const options = (name: string) => args.flatMap((a, i) => (a === `--${name}` && args[i + 1] !== undefined ? [args[i + 1]!] : []));
const runs = Number(option('runs') ?? 7);
const services = options('url').map((url, i) => ({ url, key: options('key')[i], pid: options('pid')[i] ? Number(options('pid')[i]) : undefined }));
const withPandoc = !args.includes('--no-pandoc');
const withProfile = !args.includes('--no-profile');
const only = option('only');
const warmupRounds = Number(option('warmup') ?? 30);
const compareDir = option('compare');
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
  return only ? list.filter((c) => c.kind === only) : list;
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

type Converter = typeof markdownToDocx;
/** --compare DIR: another checkout's converters (e.g. main before a change), loaded into this process. */
const other: { md: Converter; html: Converter } | undefined = compareDir
  ? {
      md: ((await import(join(compareDir, 'src/documents/markdown/index.ts'))) as { markdownToDocx: Converter }).markdownToDocx,
      html: ((await import(join(compareDir, 'src/documents/html/index.ts'))) as { htmlToDocx: Converter }).htmlToDocx,
    }
  : undefined;
const convertOther = (c: Case, stages?: StageTimes) => other![c.kind](c.source, { limits, stages });

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
  if (other) {
    console.log(`   each file's second line: ${compareDir}'s conversion, called alternately with this one in this process; ×: this / that.`);
    console.log('   (Both load @resvg/resvg-wasm; only the first to render an SVG image can: SVG data: images then cost the second nothing.)');
  }
  console.log(`${'document'.padEnd(38)} ${'KB'.padStart(5)} ${stageNames.map((s) => s.padStart(8)).join('')} ${'of: zip'.padStart(8)} ${'total'.padStart(8)} ${'bare'.padStart(8)} ${'ratio'.padStart(6)}`);
  for (const c of all) {
    for (let i = 0; i < 3; i++) {
      baseline(c);
      await convert(c);
      if (other) await convertOther(c);
    }
    const sides = other ? [convert, convertOther] : [convert];
    const samples = sides.map(() => {
      const m: Record<string, number[]> = { total: [], bare: [], zip: [] };
      for (const s of stageNames) m[s] = [];
      return m;
    });
    for (let i = 0; i < runs; i++) {
      const bare = baseline(c);
      for (const [k, run] of sides.entries()) {
        const stages: StageTimes = {};
        const started = process.cpuUsage();
        const { docx } = await run(c, stages);
        samples[k]!.total!.push(cpuMs(started));
        samples[k]!.bare!.push(bare);
        for (const s of stageNames) samples[k]![s]!.push(stages[s] ?? 0);
        samples[k]!.zip!.push(zipMs(docx));
      }
    }
    const medians = samples.map((side) => Object.fromEntries(Object.entries(side).map(([k, v]) => [k, median(v)])) as Record<string, number>);
    for (const [k, m] of medians.entries()) {
      const name = k === 0 ? c.name.padEnd(38) : `  (compare) ${(m.total! / medians[0]!.total! > 0 ? `${(medians[0]!.total! / m.total!).toFixed(2)}×` : '')}`.padEnd(38);
      console.log(
        `${name} ${k === 0 ? (c.source.length / 1024).toFixed(0).padStart(5) : ''.padStart(5)} ${stageNames.map((s) => m[s]!.toFixed(1).padStart(8)).join('')} ` +
        `${m.zip!.toFixed(1).padStart(8)} ${m.total!.toFixed(1).padStart(8)} ${m.bare!.toFixed(1).padStart(8)} ${(m.total! / m.bare!).toFixed(2).padStart(6)}`,
      );
    }
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const BOUNDARY = 'docproc-bench-markup';
const uploads = new Map<Case, Buffer>();

/** The document's multipart body, built once per document. */
function upload(c: Case): Buffer {
  let body = uploads.get(c);
  if (!body) {
    const head = `--${BOUNDARY}\r\nContent-Disposition: form-data; name="file"; filename="input.${c.kind}"\r\nContent-Type: application/octet-stream\r\n\r\n`;
    body = Buffer.concat([Buffer.from(head), c.source, Buffer.from(`\r\n--${BOUNDARY}--\r\n`)]);
    uploads.set(c, body);
  }
  return body;
}

async function oursOverHttp(c: Case, service: { url: string; key?: string }): Promise<void> {
  const body = upload(c);
  const { status, reply } = await new Promise<{ status: number; reply: Buffer }>((resolve, reject) => {
    const request = http.request(`${service.url}/v1/convert?from=${c.kind}&to=docx`, {
      method: 'POST',
      agent,
      headers: { ...(service.key ? { authorization: `Bearer ${service.key}` } : {}), 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, 'content-length': body.length },
    });
    request.once('error', reject);
    request.once('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('error', reject);
      response.once('end', () => resolve({ status: response.statusCode ?? 0, reply: Buffer.concat(chunks) }));
    });
    request.end(body);
  });
  if (status !== 200 || reply.readUInt32LE(0) !== 0x04034b50) throw new Error(`HTTP ${status}: ${reply.subarray(0, 300).toString()}`);
}

/** CPU ms per thread of a process so far, from /proc (schedstat: time on a CPU, in ns). */
function threadCpuMs(pid: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      out.set(Number(tid), Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'latin1').split(' ')[0]) / 1e6);
    } catch {
      // the thread ended
    }
  }
  return out;
}

/** A service's CPU ms per request between two readings: its main thread and all its other threads. */
function cpuSplit(pid: number, before: Map<number, number>, after: Map<number, number>, requests: number): { main: number; other: number } {
  let main = 0;
  let other = 0;
  for (const [tid, ms] of after) {
    const used = ms - (before.get(tid) ?? 0);
    if (tid === pid) main += used;
    else other += used;
  }
  return { main: main / requests, other: other / requests };
}

async function againstPandoc(all: Case[]): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'markup-bench-'));
  const sides = services.length > 0 ? services.map((s, i) => ({ label: services.length > 1 ? `#${i + 1}` : 'ours', ours: (c: Case) => oursOverHttp(c, s), pid: s.pid }))
    : [{ label: 'ours', ours: (c: Case) => convert(c), pid: undefined }];
  try {
    // A long-running replica's worker has compiled its hot code: every service converts every file
    // this many times before anything is timed (with 3 calls per file, V8 was still compiling).
    const warmStart = performance.now();
    for (let round = 0; round < warmupRounds; round++) for (const c of all) for (const side of sides) await side.ours(c);
    if (warmupRounds > 0) console.log(`\nwarm-up: ${warmupRounds} rounds over the ${all.length} files per service (${((performance.now() - warmStart) / 1000).toFixed(0)} s)`);
    console.log(`\n2. Against the pandoc CLI, wall ms (median of ${runs}, interleaved); ${services.length > 0 ? `over HTTP: ${services.map((s, i) => `#${i + 1} ${s.url}`).join(', ')}` : 'ours in-process'}`);
    console.log('   bare = the bare parser\'s CPU ms on the text (in this process); bound = pandoc / bare; cpu main+other = the service\'s CPU ms per request (with --pid)');
    const ratios = sides.map(() => ({ md: [] as number[], html: [] as number[] }));
    for (const c of all) {
      const input = join(work, c.kind === 'md' ? 'input.md' : 'input.html');
      writeFileSync(input, c.source);
      const pandoc = () => execFileSync('pandoc', ['-f', c.kind === 'md' ? 'gfm' : 'html', '-t', 'docx', '-o', join(work, 'out.docx'), input], { cwd: work, stdio: 'ignore' });
      for (const side of sides) for (let i = 0; i < 3; i++) await side.ours(c);
      pandoc();
      const oursMs: number[][] = sides.map(() => []);
      const cpu = sides.map(() => ({ main: [] as number[], other: [] as number[] }));
      const pandocMs: number[] = [];
      const bareMs: number[] = [];
      for (let i = 0; i < runs; i++) {
        for (const [k, side] of sides.entries()) {
          const before = side.pid ? threadCpuMs(side.pid) : undefined;
          const t = performance.now();
          await side.ours(c);
          oursMs[k]!.push(performance.now() - t);
          if (side.pid && before) {
            const split = cpuSplit(side.pid, before, threadCpuMs(side.pid), 1);
            cpu[k]!.main.push(split.main);
            cpu[k]!.other.push(split.other);
          }
        }
        const t = performance.now();
        pandoc();
        pandocMs.push(performance.now() - t);
        bareMs.push(baseline(c));
      }
      const pandocMedian = median(pandocMs);
      const bare = median(bareMs);
      const cells = sides.map((side, k) => {
        const ms = median(oursMs[k]!);
        const ratio = pandocMedian / ms;
        ratios[k]![c.kind].push(ratio);
        const cpuText = side.pid ? ` cpu ${median(cpu[k]!.main).toFixed(1)}+${median(cpu[k]!.other).toFixed(1)}` : '';
        return `${side.label} ${ms.toFixed(1).padStart(7)} ms ${ratio.toFixed(1).padStart(5)}×${cpuText}`;
      });
      console.log(
        `${c.name.padEnd(38)} ${(c.source.length / 1024).toFixed(0).padStart(5)} KB  ${cells.join('  ')}  pandoc ${pandocMedian.toFixed(1).padStart(7)} ms  ` +
        `bare ${bare.toFixed(1).padStart(6)} ms  bound ${(pandocMedian / bare).toFixed(0).padStart(5)}×`,
      );
    }
    for (const [k, side] of sides.entries()) {
      for (const kind of ['md', 'html'] as const) {
        const r = ratios[k]![kind];
        if (r.length > 0) console.log(`${side.label} ${kind}: geomean ${geomean(r).toFixed(1)}× over ${r.length} files, lowest ${Math.min(...r).toFixed(1)}×`);
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

const all = cases();
if (withProfile) await profile(all);
if (withPandoc) await againstPandoc(all);
