import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import PizZip from 'pizzip';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { issueTestKey, multipart } from '../../support/api-key.js';
import { pdfText } from '../../support/pdf-text.js';
import { buildTestApp, type TestApp } from '../../support/test-app.js';
import { CORPUS_DIR } from '../../support/corpus.js';

/**
 * Markdown/HTML → DOCX/PDF end to end through POST /v1/convert on the real app (workers,
 * office pool). Independent readers check the results: pandoc reads the DOCX, pdftotext the PDF.
 */
const CORPUS = `${CORPUS_DIR}`;
const MAX_FILE_BYTES = 1024 * 1024;

let t: TestApp;
let key: string;
let canary: Server;
let canaryHits: string[];
let canaryUrl: string;

beforeAll(async () => {
  canaryHits = [];
  canary = createServer((req, res) => {
    canaryHits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'image/png' }).end(readFileSync(`${CORPUS}/md/lalune.jpg`));
  });
  await new Promise<void>((resolve) => canary.listen(0, '127.0.0.1', resolve));
  canaryUrl = `http://127.0.0.1:${(canary.address() as AddressInfo).port}`;
  t = await buildTestApp({
    REDIS_URL: inject('redisUrl'), OFFICE_ENABLED: 'true', OFFICE_POOL_SIZE: '1', MAX_FILE_BYTES: String(MAX_FILE_BYTES), RATE_LIMIT_MAX: '1000',
  });
  key = await issueTestKey(t.app);
});

afterAll(async () => {
  await t?.app.close();
  await new Promise((resolve) => canary?.close(resolve));
});

async function convert(data: Buffer, filename: string, query: string, extra: Record<string, { data: Buffer; filename: string }> = {}) {
  const body = await multipart({ file: { data, filename }, ...extra });
  return t.app.inject({
    method: 'POST', url: `/v1/convert${query}`, headers: { authorization: `Bearer ${key}`, 'content-type': body.contentType }, payload: body.payload,
  });
}

/** pandoc as an independent DOCX reader; the DOCX goes through stdin, nothing touches the disk. */
const pandocPlain = (docx: Buffer) =>
  execFileSync('pandoc', ['-f', 'docx', '-t', 'plain', '--wrap=none'], { input: docx }).toString('utf8');

/** pandoc's reading of the document's metadata (it takes the title from the Title-styled paragraph). */
const pandocMeta = (docx: Buffer): Record<string, unknown> => {
  const ast = JSON.parse(execFileSync('pandoc', ['-f', 'docx', '-t', 'json'], { input: docx }).toString('utf8'));
  const text = (v: { t: string; c: unknown }): string => execFileSync('pandoc', ['-f', 'json', '-t', 'plain'], {
    input: JSON.stringify({ ...ast, blocks: [{ t: 'Plain', c: v.c }], meta: {} }),
  }).toString('utf8').trim();
  return Object.fromEntries(Object.entries(ast.meta as Record<string, { t: string; c: unknown }>).map(([k, v]) => [k, text(v)]));
};

const part = (docx: Buffer, name: string) => new PizZip(docx).file(name)?.asText();

const warningsOf = (headers: Record<string, unknown>) =>
  String(headers['x-docproc-warnings'] ?? '').split(', ').filter(Boolean).map((w) => decodeURIComponent(w));

const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

describe('POST /v1/convert: Markdown and HTML', () => {
  it('md → docx: pandoc reads back headings, lists, tables, code and footnotes', async () => {
    const md = [
      '# Quarterly notes', '', 'Some **bold** and *italic* text with a footnote.[^1]', '',
      '- first item', '- second item', '', '| Name | Score |', '| ---- | ----: |', '| Ada  | 42    |', '',
      '```js', 'const answer = 42;', '```', '', '[^1]: The footnote text.', '',
    ].join('\n');
    const res = await convert(Buffer.from(md), 'notes.md', '?from=md&to=docx');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe(DOCX_TYPE);
    expect(res.headers['content-disposition']).toContain('notes.docx');
    const text = pandocPlain(res.rawPayload);
    expect(text).toMatch(/Quarterly notes/);
    expect(text).toMatch(/Some bold and italic text with a footnote\.\[1\]/);
    expect(text).toMatch(/-\s+first item\s+-\s+second item/);
    expect(text).toMatch(/Name\s+Score[\s\S]*Ada\s+42/);
    expect(text).toContain('const answer = 42;');
    expect(text).toMatch(/\[1\] The footnote text\./);
  });

  it('html → docx: pandoc reads back the structure', async () => {
    const html = '<!doctype html><html><body><h2>Menu</h2><ol><li>Soup</li><li>Bread</li></ol><blockquote><p>Quoted <b>words</b></p></blockquote></body></html>';
    const res = await convert(Buffer.from(html), 'menu.html', '?from=html&to=docx');
    expect(res.statusCode).toBe(200);
    const native = execFileSync('pandoc', ['-f', 'docx', '-t', 'native'], { input: res.rawPayload }).toString('utf8');
    expect(native).toMatch(/Header\s+2/);
    expect(native).toMatch(/OrderedList/);
    expect(native).toMatch(/BlockQuote/);
    expect(native).toMatch(/Strong\s*\[\s*Str "words"/);
    expect(pandocPlain(res.rawPayload)).toMatch(/1\.\s+Soup\s+2\.\s+Bread/);
  });

  it('md → pdf and html → pdf on the office pool: pdftotext reads the text', async () => {
    const md = await convert(Buffer.from('# Title line\n\nA paragraph with *emphasis* and a [link](https://example.com).\n'), 'a.md', '?from=md&to=pdf');
    expect(md.statusCode).toBe(200);
    expect(md.headers['content-type']).toBe('application/pdf');
    expect(md.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
    expect(pdfText(md.rawPayload)).toMatch(/Title line\s+A paragraph with emphasis and a link\./);

    const html = await convert(
      Buffer.from('<span style="display:none">Preheader text</span><table><tr><th>City</th><th>Pop</th></tr><tr><td>Oslo</td><td>709000</td></tr></table>'),
      'b.html', '?from=html&to=pdf',
    );
    expect(html.statusCode).toBe(200);
    const text = pdfText(html.rawPayload, true);
    expect(text).toMatch(/City\s+Pop/);
    expect(text).toMatch(/Oslo\s+709000/);
    expect(text).not.toContain('Preheader'); // kept as hidden text in the DOCX, not printed
  });

  it('detects Markdown and HTML when from is absent (to defaults to pdf)', async () => {
    const md = await convert(Buffer.from('Plain *markdown* text\n\n- item\n'), 'noext', '?to=docx');
    expect(md.statusCode).toBe(200);
    expect(pandocPlain(md.rawPayload)).toMatch(/Plain markdown text\s+-\s+item/);
    const html = await convert(Buffer.from('  <p>Hello <i>HTML</i></p>'), 'noext', '?to=docx');
    expect(html.statusCode).toBe(200);
    const text = pandocPlain(html.rawPayload);
    expect(text).toContain('Hello HTML');
    expect(text).not.toContain('<p>');
    const pdf = await convert(Buffer.from('# Detected\n'), 'note.md', '');
    expect(pdf.statusCode).toBe(200);
    expect(pdf.headers['content-type']).toBe('application/pdf');
    expect(pdfText(pdf.rawPayload)).toContain('Detected');
  });

  it('a reference DOCX restyles the output: its styles.xml is in the result', async () => {
    const reference = readFileSync(`${CORPUS}/docx/pandoc-tables.docx`);
    const referenceStyles = part(reference, 'word/styles.xml')!;
    const referenceIds = [...referenceStyles.matchAll(/w:styleId="([^"]+)"/g)].map((m) => m[1]);
    expect(referenceIds.length).toBeGreaterThan(5);
    const res = await convert(Buffer.from('# Heading\n\nBody text.\n'), 'r.md', '?from=md&to=docx', { reference: { data: reference, filename: 'reference.docx' } });
    expect(res.statusCode).toBe(200);
    const styles = part(res.rawPayload, 'word/styles.xml')!;
    for (const id of referenceIds) expect(styles).toContain(`w:styleId="${id}"`);
    // The reference's own definition of Normal survives (ours is just a name).
    const normal = (xml: string) => /<w:style\b[^>]*w:styleId="Normal"[^>]*>[\s\S]*?<\/w:style>/.exec(xml)?.[0];
    expect(normal(styles)).toBe(normal(referenceStyles));
    expect(pandocPlain(res.rawPayload)).toMatch(/Heading\s+Body text\./);

    const broken = await convert(Buffer.from('# x\n'), 'r.md', '?from=md&to=docx', { reference: { data: Buffer.from('not a docx'), filename: 'reference.docx' } });
    expect(broken.statusCode).toBe(400);
    expect(broken.json().code).toBe('INVALID_FILE_FORMAT');
  });

  it('remote images become their alt text, a warning names them, and nothing is fetched', async () => {
    const image = `${canaryUrl}/logo.png`;
    const md = await convert(Buffer.from(`Before ![Company logo](${image}) after.\n`), 'img.md', '?from=md&to=docx');
    expect(md.statusCode).toBe(200);
    expect(pandocPlain(md.rawPayload)).toContain('Before Company logo after.');
    expect(warningsOf(md.headers).some((w) => w.includes(image))).toBe(true);
    expect(Object.keys(new PizZip(md.rawPayload).files).some((name) => name.startsWith('word/media/'))).toBe(false);

    const html = await convert(Buffer.from(`<p>See <img src="${canaryUrl}/chart.gif" alt="Sales chart"> here</p>`), 'img.html', '?from=html&to=docx');
    expect(html.statusCode).toBe(200);
    expect(pandocPlain(html.rawPayload)).toContain('See Sales chart here');
    expect(warningsOf(html.headers).some((w) => w.includes(`${canaryUrl}/chart.gif`))).toBe(true);
    expect(canaryHits).toEqual([]);
  });

  it('front matter title and author go to docProps/core.xml; the title also opens the body', async () => {
    const md = '---\ntitle: "Annual <Report> & Plan"\nauthor: Grace Hopper\n---\n\nFirst paragraph.\n';
    const res = await convert(Buffer.from(md), 'fm.md', '?to=docx');
    expect(res.statusCode).toBe(200);
    const core = part(res.rawPayload, 'docProps/core.xml')!;
    expect(core).toContain('<dc:title>Annual &lt;Report&gt; &amp; Plan</dc:title>');
    expect(core).toContain('<dc:creator>Grace Hopper</dc:creator>');
    expect(pandocMeta(res.rawPayload).title).toBe('Annual <Report> & Plan');
    expect(pandocPlain(res.rawPayload).trim()).toBe('First paragraph.');
  });

  it('an empty document and a document of only front matter give valid DOCX', async () => {
    const empty = await convert(Buffer.alloc(0), 'empty.md', '?from=md&to=docx');
    expect(empty.statusCode).toBe(200);
    expect(part(empty.rawPayload, 'word/document.xml')).toMatch(/<w:body>(<w:p\/>)?<w:sectPr>/);
    expect(pandocPlain(empty.rawPayload).trim()).toBe('');

    const emptyHtml = await convert(Buffer.from('<html><body></body></html>'), 'empty.html', '?from=html&to=docx');
    expect(emptyHtml.statusCode).toBe(200);
    expect(pandocPlain(emptyHtml.rawPayload).trim()).toBe('');

    const onlyFrontMatter = await convert(Buffer.from('---\ntitle: Only a title\n---\n'), 'fm.md', '?from=md&to=docx');
    expect(onlyFrontMatter.statusCode).toBe(200);
    expect(part(onlyFrontMatter.rawPayload, 'docProps/core.xml')).toContain('<dc:title>Only a title</dc:title>');
    expect(pandocMeta(onlyFrontMatter.rawPayload).title).toBe('Only a title');
    expect(pandocPlain(onlyFrontMatter.rawPayload).trim()).toBe('');

    const pdf = await convert(Buffer.alloc(0), 'empty.md', '?from=md&to=pdf');
    expect(pdf.statusCode).toBe(200);
    expect(pdf.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
  });

  it('nesting past the limit is refused with 422 DOCUMENT_TOO_COMPLEX', async () => {
    const quotes = await convert(Buffer.from(`${'> '.repeat(150)}deep\n`), 'deep.md', '?from=md&to=docx');
    expect(quotes.statusCode).toBe(422);
    expect(quotes.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(quotes.json().code).toBe('DOCUMENT_TOO_COMPLEX');

    const lists = await convert(Buffer.from(Array.from({ length: 150 }, (_, i) => `${'  '.repeat(i)}- level ${i}`).join('\n')), 'deep.md', '?from=md&to=docx');
    expect(lists.statusCode).toBe(422);
    expect(lists.json().code).toBe('DOCUMENT_TOO_COMPLEX');

    const html = await convert(Buffer.from(`${'<blockquote>'.repeat(150)}deep${'</blockquote>'.repeat(150)}`), 'deep.html', '?from=html&to=docx');
    expect(html.statusCode).toBe(422);
    expect(html.json().code).toBe('DOCUMENT_TOO_COMPLEX');

    // Just inside the limit converts.
    const fine = await convert(Buffer.from(`${'> '.repeat(20)}fine\n`), 'ok.md', '?from=md&to=docx');
    expect(fine.statusCode).toBe(200);
  });

  it('too large → 413 FILE_TOO_LARGE', async () => {
    const res = await convert(Buffer.alloc(MAX_FILE_BYTES + 1024, 'a'), 'big.md', '?from=md&to=docx');
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe('FILE_TOO_LARGE');
  });

  it('non-UTF-8 text converts with replacement characters and a warning', async () => {
    const latin1 = Buffer.concat([Buffer.from('Caf'), Buffer.from([0xe9]), Buffer.from(' au lait\n')]);
    const res = await convert(latin1, 'menu.md', '?to=docx');
    expect(res.statusCode).toBe(200);
    expect(pandocPlain(res.rawPayload)).toContain('Caf\uFFFD au lait');
    expect(warningsOf(res.headers).some((w) => /not valid UTF-8/.test(w))).toBe(true);
  });

  it('binary garbage → 415 UNSUPPORTED_MEDIA_TYPE naming the formats convert takes', async () => {
    const garbage = Buffer.from(Array.from({ length: 2048 }, (_, i) => (i * 7919 + 13) % 256));
    const res = await convert(garbage, 'mystery.bin', '?to=docx');
    expect(res.statusCode).toBe(415);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ code: 'UNSUPPORTED_MEDIA_TYPE', acceptedFormats: expect.arrayContaining(['md', 'html', 'docx']) });
  });
});
