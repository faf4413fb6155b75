import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import PizZip from 'pizzip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prepareDocxForPdf } from '../../src/documents/docx-pdf/index.js';
import { DomainError } from '../../src/errors/domain-error.js';
import { issueTestKey } from '../support/api-key.js';
import { CORPUS_DIR } from '../support/corpus.js';
import { buildTestApp, type TestApp } from '../support/test-app.js';
import { httpStatusOf } from '../../src/http/error-status.js';

/**
 * Seeded fuzzing of the parsers that read what callers send: the PDF reader (verify), the OOXML
 * readers (annotate's template reader, the zip guard, scrub and tracked changes before LibreOffice,
 * the DOCX signature verifier) and the Markdown/HTML front ends. Inputs are corpus files mutated
 * at the byte, token and ZIP-entry level, and generated markup. Every input must end in a 2xx or
 * a 4xx problem+json within its deadline: never a 5xx, a hang or a dead worker.
 *
 * CI runs FUZZ_MS (default 30 s) in all with FUZZ_SEED (default below); a longer run:
 *   FUZZ_MS=600000 FUZZ_SEED=$RANDOM npx vitest run test/fuzz
 * A failure names the seed, target and iteration; the same seed replays the same inputs.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261124);
const TOTAL_MS = Number(process.env.FUZZ_MS ?? 30_000);
/** FUZZ_ONLY=ooxml runs one target (to replay a failure faster). */
const ONLY = process.env.FUZZ_ONLY;
const DEADLINE_MS = 20_000;

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
function random(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return { next, int, pick: <T>(items: readonly T[]): T => items[int(items.length)]! };
}
type Random = ReturnType<typeof random>;

const PDF_TOKENS = ['obj', 'endobj', 'stream', 'endstream', 'xref', 'trailer', 'startxref', '<<', '>>', '[', ']', '/Type', '/Root', '/Prev', '/Length 99999999', '/ByteRange [0 1 2 3]', '/Contents <00>', ' R ', '%%EOF', '/ObjStm', '/Filter /FlateDecode', '9999999999', '-1', '(', ')', '\\'];
const XML_TOKENS = ['<w:p>', '</w:p>', '<w:r>', '<w:t>', '</w:t>', '{', '}', '{#', '{/', '{@', '{{', '}}', '<w:ins w:id="1">', '</w:ins>', '<w:del>', '<w:sdt>', '&', '&#0;', '<!DOCTYPE x [<!ENTITY a "aaaa">]>', '<w:fldSimple w:instr="INCLUDETEXT c:\\x"/>', 'r:id="rId999"', '\u0000', '\uFFFF'];
const TAG_TOKENS = ['name', 'first-name', 'Customer Name', '附件', '.', ' ', '|', 'upper', 'date', "'YYYY-MM-DD'", 'number', ':2', ':\'de\'', 'unknownFilter', '"', "'", '\\', '(', ')', '[', ']', '?', ':', '==', '+', '-', '*', '/', '&&', '!', '#', '/', '^', '@', '%', '{', '}', '{{', '}}', '{%', '%}', '+++', '1e999', 'this', 'constructor', '__proto__', 'toString', 'obj.x', 'arr[0]'];
const GOOD_TAGS = ['{name}', '{first-name | upper}', '{Customer Name}', '{obj.x + 1}', "{date | date:'YYYY'}", '{arr | join}', '{#arr}{.}{/arr}', '{附件}', '{obj}', '{missing | default:"d"}', '{arr.length > 1 ? "many" : "one"}'];
const MARKUP_TOKENS = ['# ', '> ', '- ', '1. ', '|', '---', '```', '*', '_', '[', ']', '(', ')', '![x](y)', '<div>', '</div>', '<table><tr><td>', '<script>', '<!--', '\n', '\n\n', '&amp;', '\\', '[^1]', '<img src="data:image/png;base64,AAAA">'];

/** Byte- and token-level mutations of a buffer. */
function mutate(rng: Random, input: Buffer, tokens: string[]): Buffer {
  let bytes = Buffer.from(input);
  const rounds = 1 + rng.int(8);
  for (let i = 0; i < rounds; i++) {
    const at = rng.int(bytes.length + 1);
    switch (rng.int(6)) {
      case 0: // flip bytes
        for (let j = 0; j < 1 + rng.int(16) && bytes.length > 0; j++) bytes[rng.int(bytes.length)] = rng.int(256);
        break;
      case 1: // truncate
        bytes = bytes.subarray(0, at);
        break;
      case 2: // insert a token
        bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(rng.pick(tokens), 'latin1'), bytes.subarray(at)]);
        break;
      case 3: // duplicate a chunk
        bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(rng.int(bytes.length + 1)).subarray(0, rng.int(4096)), bytes.subarray(at)]);
        break;
      case 4: // delete a chunk
        bytes = Buffer.concat([bytes.subarray(0, at), bytes.subarray(at + rng.int(512))]);
        break;
      default: // repeat a token many times
        bytes = Buffer.concat([bytes.subarray(0, at), Buffer.from(rng.pick(tokens).repeat(1 + rng.int(2000)), 'latin1'), bytes.subarray(at)]);
    }
  }
  return bytes;
}

/** Mutates one XML part inside a DOCX and re-zips it (so the damage reaches the XML readers). */
function mutateDocx(rng: Random, docx: Buffer): Buffer {
  if (rng.int(4) === 0) return mutate(rng, docx, XML_TOKENS); // damage at the ZIP level
  const zip = new PizZip(docx);
  const parts = Object.keys(zip.files).filter((n) => n.endsWith('.xml') || n.endsWith('.rels'));
  const name = rng.pick(parts);
  zip.file(name, mutate(rng, Buffer.from(zip.file(name)!.asUint8Array()), XML_TOKENS));
  return zip.generate({ type: 'nodebuffer', compression: 'DEFLATE' }) as Buffer;
}

/** A minimal DOCX whose body is `body` (built from the corpus' first template so it stays a real package). */
function templateDocx(body: string): Buffer {
  const zip = new PizZip(readFileSync(path.join(CORPUS_DIR, 'templates', readdirSync(path.join(CORPUS_DIR, 'templates')).filter((f) => f.endsWith('.docx')).sort()[0]!)));
  const xml = zip.file('word/document.xml')!.asText();
  zip.file('word/document.xml', xml.replace(/<w:body>[\s\S]*?(<w:sectPr[\s\S]*<\/w:sectPr>)?\s*<\/w:body>/, (_m, sect: string | undefined) => `<w:body>${body}${sect ?? ''}</w:body>`));
  return zip.generate({ type: 'nodebuffer', compression: 'DEFLATE' }) as Buffer;
}

function generatedMarkup(rng: Random): Buffer {
  const parts: string[] = [];
  for (let i = 0; i < 20 + rng.int(400); i++) parts.push(rng.next() < 0.6 ? rng.pick(MARKUP_TOKENS) : 'word ');
  return Buffer.from(parts.join(''));
}

const corpusFiles = (dir: string, ext: string) =>
  readdirSync(path.join(CORPUS_DIR, dir)).filter((f) => f.endsWith(ext)).map((f) => readFileSync(path.join(CORPUS_DIR, dir, f)));

let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await buildTestApp({ API_KEY_PEPPER: 'fuzz-pepper-0123456789', WORKER_THREADS: '2', RATE_LIMIT_MAX: '1000000', CONCURRENCY_PER_KEY: '100', WORKER_TASK_TIMEOUT_MS: String(DEADLINE_MS) });
  key = await issueTestKey(t.app, 'fuzz@example.com');
});
afterAll(async () => t?.app.close());

async function post(url: string, payload: string | Buffer, contentType: string) {
  return t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}`, 'content-type': contentType }, payload });
}

function multipartBody(field: string, data: Buffer, filename: string) {
  const boundary = `fuzz${Math.random().toString(36).slice(2)}`;
  const payload = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${field}"; filename="${filename}"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return { payload, contentType: `multipart/form-data; boundary=${boundary}` };
}

/** Runs `once` with fresh inputs until the target's share of the time is used; asserts each answer. */
async function fuzz(target: string, share: number, once: (rng: Random) => Promise<{ statusCode: number; headers: Record<string, unknown>; body: string }>) {
  if (ONLY && ONLY !== target) return;
  const rng = random(SEED ^ hash(target));
  const began = Date.now();
  const until = began + TOTAL_MS * (ONLY ? 1 : share);
  let iterations = 0;
  const statuses = new Map<number, number>();
  for (; iterations === 0 || Date.now() < until; iterations++) {
    const started = Date.now();
    const res = await once(rng);
    statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
    const where = `${target}: seed ${SEED}, iteration ${iterations}`;
    expect(Date.now() - started, `${where} took too long`).toBeLessThan(DEADLINE_MS + 5_000);
    if (res.statusCode >= 500) {
      const logged = t.logs.filter((line) => line.includes('"level":50')).slice(-2).join('\n').slice(0, 3000);
      expect.fail(`${where}: ${res.statusCode} ${res.body.slice(0, 300)}\n${logged}`);
    }
    if (res.statusCode >= 400) {
      expect(String(res.headers['content-type']), where).toMatch(/^application\/problem\+json/);
      expect(JSON.parse(res.body), where).toMatchObject({ status: res.statusCode, code: expect.any(String) });
    }
  }
  const seen = [...statuses].sort(([a], [b]) => a - b).map(([status, count]) => `${status}×${count}`).join(' ');
  console.log(`fuzz ${target}: ${iterations} inputs in ${Math.round((Date.now() - began) / 1000)} s (seed ${SEED}): ${seen}`);
  expect(iterations).toBeGreaterThan(0);
}

function hash(text: string): number {
  let h = 2166136261;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 16777619);
  return h >>> 0;
}

describe(`seeded fuzzing (FUZZ_SEED=${SEED}, FUZZ_MS=${TOTAL_MS})`, () => {
  it('verify: mutated signed and unsigned PDFs', async () => {
    const pdfs = [...corpusFiles('pdf-signed', '.pdf'), ...corpusFiles('pdf-unsigned', '.pdf')];
    await fuzz('verify-pdf', 0.25, (rng) => post('/v1/verify', JSON.stringify({ document: { base64: mutate(rng, rng.pick(pdfs), PDF_TOKENS).toString('base64') } }), 'application/json'));
  }, TOTAL_MS + 120_000);

  it('annotate and verify: mutated DOCX packages and templates', async () => {
    const docx = [...corpusFiles('docx', '.docx'), ...corpusFiles('templates', '.docx'), ...corpusFiles('docx-signed', '.docx')];
    await fuzz('ooxml', 0.3, (rng) => {
      const doc = mutateDocx(rng, rng.pick(docx));
      return rng.int(3) === 0
        ? post('/v1/verify', JSON.stringify({ document: { base64: doc.toString('base64') } }), 'application/json')
        : post('/v1/annotate', JSON.stringify({ document: { base64: doc.toString('base64') }, fields: [{ id: 'name', type: 'text', value: 'Fuzz' }], ignoreUnknownFields: true, data: { a: [1, 2], b: 'x' } }), 'application/json');
    });
  }, TOTAL_MS + 120_000);

  it('annotate: generated tags (names, expressions, filters, foreign syntaxes) and raw XML values', async () => {
    await fuzz('templates', 0.1, (rng) => {
      const tags: string[] = [];
      for (let i = 0; i < 1 + rng.int(6); i++) {
        if (rng.int(3) > 0) {
          tags.push(rng.pick(GOOD_TAGS));
          continue;
        }
        const inner = Array.from({ length: 1 + rng.int(6) }, () => rng.pick(TAG_TOKENS)).join(rng.int(2) ? ' ' : '');
        tags.push(rng.int(4) === 0 ? inner : `{${inner}}`);
      }
      const runs = tags.map((tag) => `<w:r><w:t xml:space="preserve">${tag.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</w:t></w:r>`).join('');
      const sdt = rng.int(3) === 0 ? `<w:sdt><w:sdtPr><w:tag w:val="{&quot;fieldId&quot;:&quot;name&quot;}"/></w:sdtPr><w:sdtContent><w:r><w:t>{{Name}}</w:t></w:r></w:sdtContent></w:sdt>` : '';
      const validRaw = '<w:p><w:r><w:rPr><w:b/></w:rPr><w:t>raw</w:t></w:r></w:p>';
      const raw = rng.int(3) === 0 ? mutate(rng, Buffer.from(validRaw), XML_TOKENS).toString('latin1') : validRaw;
      const template = templateDocx(`<w:p>${runs}${sdt}</w:p><w:p><w:r><w:t>{@raw}</w:t></w:r></w:p>`);
      const data = { name: 'N', 'first-name': 'F', 'Customer Name': 'C', 附件: 'A', obj: { x: 1, toString: 'x' }, arr: [1, { valueOf: 2 }], date: '2024-02-30', raw };
      return post('/v1/annotate', JSON.stringify({ document: { base64: template.toString('base64') }, fields: [{ id: 'name', type: 'text', value: 'Fuzz' }], ignoreUnknownFields: true, data }), 'application/json');
    });
  }, TOTAL_MS + 120_000);

  it('the stages before LibreOffice (zip guard, scrub, tracked changes) end in a result or a 4xx', () => {
    const docx = corpusFiles('docx', '.docx');
    const rng = random(SEED ^ hash('prepare'));
    const until = Date.now() + TOTAL_MS * 0.1;
    for (let i = 0; i === 0 || Date.now() < until; i++) {
      const input = mutateDocx(rng, rng.pick(docx));
      for (const mode of ['markup', 'accept', 'reject'] as const) {
        try {
          prepareDocxForPdf(input, mode);
        } catch (err) {
          expect(err, `prepare (${mode}): seed ${SEED}, iteration ${i}: ${String(err)}`).toBeInstanceOf(DomainError);
          expect(httpStatusOf(err as DomainError)).toBeLessThan(500);
        }
      }
    }
  }, TOTAL_MS + 60_000);

  it('convert: mutated and generated Markdown and HTML', async () => {
    const md = corpusFiles('md', '.md');
    const html = corpusFiles('html', '.html');
    await fuzz('markup', 0.25, (rng) => {
      const asHtml = rng.int(2) === 0;
      const source = rng.int(3) === 0 ? generatedMarkup(rng) : mutate(rng, rng.pick(asHtml ? html : md), MARKUP_TOKENS);
      const body = multipartBody('file', source, asHtml ? 'f.html' : 'f.md');
      return post(`/v1/convert?from=${asHtml ? 'html' : 'md'}&to=docx`, body.payload, body.contentType);
    });
  }, TOTAL_MS + 120_000);
});
