import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import PizZip from 'pizzip';
import { issueTestKey, multipart } from '../../support/api-key.js';
import { pdfText } from '../../support/pdf-text.js';
import { buildTestApp, type TestApp } from '../../support/test-app.js';

const corpus = (p: string) => readFileSync(new URL(`../../../../shared/corpus/${p}`, import.meta.url));

let t: TestApp;
let key: string;

beforeAll(async () => {
  t = await buildTestApp({ REDIS_URL: inject('redisUrl'), OFFICE_ENABLED: 'true', OFFICE_POOL_SIZE: '2', MAX_FILE_BYTES: String(2 * 1024 * 1024), RATE_LIMIT_MAX: '1000' });
  key = await issueTestKey(t.app);
});
afterAll(async () => {
  await t?.app.close();
});

async function convert(file: Buffer, filename: string, query = '', app = t.app, apiKey = key) {
  const body = await multipart({ file: { data: file, filename } });
  return app.inject({ method: 'POST', url: `/v1/convert${query}`, headers: { authorization: `Bearer ${apiKey}`, 'content-type': body.contentType }, payload: body.payload });
}

describe('POST /v1/convert through HTTP', () => {
  it('refuses ten zip bombs at once off the event loop: /v1/health keeps answering promptly meanwhile', async () => {
    const zip = new PizZip();
    zip.file('[Content_Types].xml', '<Types/>');
    zip.file('word/document.xml', Buffer.alloc(60 * 1024 * 1024, 0x20));
    const bomb = zip.generate({ type: 'nodebuffer', compression: 'DEFLATE' }) as Buffer;
    expect(bomb.length).toBeLessThan(400 * 1024);

    const latencies: number[] = [];
    let bombing = true;
    // Probes go on for at least 2 s, so that p99 does not degenerate into the maximum of a few samples.
    const probingUntil = performance.now() + 2000;
    const poller = (async () => {
      while (bombing || performance.now() < probingUntil) {
        const started = performance.now();
        const res = await t.app.inject({ method: 'GET', url: '/v1/health' });
        latencies.push(performance.now() - started);
        expect(res.statusCode).toBe(200);
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    const answers = await Promise.all(Array.from({ length: 10 }, () => convert(bomb, 'bomb.docx')));
    bombing = false;
    await poller;
    for (const res of answers) expect(res.json(), res.body).toMatchObject({ status: 422, code: 'INVALID_FILE_FORMAT' });
    latencies.sort((a, b) => a - b);
    const p99 = latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * 0.99))]!;
    // Inflating on the main thread held health for seconds; the bound leaves room for a loaded CI machine.
    // (The ZIP reader now refuses these from their declared sizes before inflating anything.)
    expect(latencies.length).toBeGreaterThan(10);
    expect(p99).toBeLessThan(250);
  });

  it('turns a DOCX into a PDF named after the upload', async () => {
    const res = await convert(corpus('docx/pandoc-tables.docx'), 'Quarterly report.docx');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-disposition']).toContain('filename="Quarterly report.pdf"');
    expect(res.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
    expect(pdfText(res.rawPayload)).toMatch(/Lebron James[\s\S]*Basketball[\s\S]*Very High/);
  });

  it('detects the source format when from is absent, and honours it when given', async () => {
    const md = Buffer.from('# Title\n\nSome *text* here.\n');
    const asPdf = await convert(md, 'note.md');
    expect(asPdf.statusCode).toBe(200);
    expect(pdfText(asPdf.rawPayload)).toContain('Some text here.');
    const asDocx = await convert(Buffer.from('<h1>Hello</h1><p>World</p>'), 'page.html', '?to=docx');
    expect(asDocx.statusCode).toBe(200);
    expect(asDocx.headers['content-type']).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    expect(new PizZip(asDocx.rawPayload).file('word/document.xml')!.asText()).toContain('Heading1');
    const forced = await convert(Buffer.from('# Not a heading in HTML\n'), 'x.txt', '?from=html&to=docx');
    expect(forced.statusCode).toBe(200);
    expect(new PizZip(forced.rawPayload).file('word/document.xml')!.asText()).not.toContain('Heading1');
  });

  it('applies the tracked-changes mode', async () => {
    const doc = corpus('docx/pandoc-track_changes_deletion.docx');
    const markup = pdfText((await convert(doc, 'd.docx')).rawPayload);
    const accepted = pdfText((await convert(doc, 'd.docx', '?trackedChanges=accept')).rawPayload);
    const rejected = pdfText((await convert(doc, 'd.docx', '?trackedChanges=reject')).rawPayload);
    // The deleted run is "n excessively modified": shown struck through in markup, gone when accepted, kept when rejected.
    expect(markup).toContain('excessively modified');
    expect(accepted).toMatch(/This is a text with a\s+deletion/);
    expect(accepted).not.toContain('excessively');
    expect(rejected).toContain('an excessively modified deletion');
  });

  it('answers bad input with the one error format and leaves no temp files', async () => {
    const cases: [Buffer, string, string, number, string][] = [
      [Buffer.from('%PDF-1.4 not a docx'), 'a.pdf', '', 415, 'UNSUPPORTED_MEDIA_TYPE'],
      [Buffer.from('PK\u0003\u0004 broken zip'), 'b.docx', '', 400, 'INVALID_FILE_FORMAT'],
      [Buffer.alloc(3 * 1024 * 1024, 1), 'big.docx', '', 413, 'FILE_TOO_LARGE'],
      [corpus('docx/pandoc-tables.docx'), 't.docx', '?to=docx', 400, 'VALIDATION_ERROR'],
      [corpus('docx/pandoc-tables.docx'), 't.docx', '?to=xlsx', 400, 'VALIDATION_ERROR'],
    ];
    const encrypted = Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(512), Buffer.from('EncryptionInfo', 'utf16le')]);
    cases.push([encrypted, 'secret.docx', '?from=docx', 422, 'ENCRYPTED_DOCUMENT']);
    const bomb = new PizZip();
    bomb.file('[Content_Types].xml', '<Types/>');
    bomb.file('word/document.xml', Buffer.alloc(20 * 1024 * 1024, 0x20)); // ~1000:1, past the ratio guard
    cases.push([bomb.generate({ type: 'nodebuffer', compression: 'DEFLATE' }), 'bomb.docx', '', 422, 'INVALID_FILE_FORMAT']);

    for (const [data, name, query, status, code] of cases) {
      const res = await convert(data, name, query);
      expect(res.statusCode, `${name}${query}`).toBe(status);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ status, code });
    }
    const noFile = await t.app.inject({ method: 'POST', url: '/v1/convert', headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain' }, payload: '# a document as raw text' });
    expect(noFile.statusCode).toBe(415);
    const noDocument = await t.app.inject({ method: 'POST', url: '/v1/convert', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: '{}' });
    expect(noDocument.statusCode).toBe(400);
    // The job directory is kept between jobs; no file of any job is.
    for (const jobs of t.app.services.office!.jobDirectories()) expect(readdirSync(jobs, { recursive: true, withFileTypes: true }).filter((e) => !e.isDirectory())).toEqual([]);
  });

  it('answers 504 when a conversion passes its deadline, and the pool goes on', async () => {
    const slow = await buildTestApp({ REDIS_URL: inject('redisUrl'), OFFICE_ENABLED: 'true', OFFICE_POOL_SIZE: '1', CONVERT_TIMEOUT_MS: '150' });
    try {
      const k = await issueTestKey(slow.app);
      const res = await convert(corpus('docx/docx4j-headers_footers.docx'), 'long.docx', '', slow.app, k);
      expect(res.statusCode).toBe(504);
      expect(res.json()).toMatchObject({ code: 'CONVERSION_TIMEOUT' });
      expect(res.json().detail).not.toMatch(/at .*\.ts/);
      const ready = await slow.app.inject({ url: '/v1/health/ready' });
      expect(ready.json().checks.office.stats.restarts).toBeGreaterThanOrEqual(1);
    } finally {
      await slow.app.close();
    }
  });

  it('sheds load with 503 + Retry-After when the office queue is full', async () => {
    const tight = await buildTestApp({ REDIS_URL: inject('redisUrl'), OFFICE_ENABLED: 'true', OFFICE_POOL_SIZE: '1', OFFICE_MAX_QUEUE: '0', RATE_LIMIT_MAX: '1000' });
    try {
      const k = await issueTestKey(tight.app);
      const doc = corpus('docx/docx4j-headers_footers.docx');
      const results = await Promise.all([0, 1, 2].map(() => convert(doc, 'x.docx', '', tight.app, k)));
      const statuses = results.map((r) => r.statusCode).sort();
      expect(statuses[0]).toBe(200);
      const busy = results.find((r) => r.statusCode === 503)!;
      expect(busy).toBeDefined();
      expect(Number(busy.headers['retry-after'])).toBeGreaterThan(0);
      expect(busy.json()).toMatchObject({ code: 'SERVICE_BUSY' });
    } finally {
      await tight.app.close();
    }
  });

  it('holds the per-key concurrency limit', async () => {
    const one = await buildTestApp({ REDIS_URL: inject('redisUrl'), OFFICE_ENABLED: 'true', OFFICE_POOL_SIZE: '2', CONCURRENCY_PER_KEY: '1', RATE_LIMIT_MAX: '1000' });
    try {
      const k = await issueTestKey(one.app);
      const doc = corpus('docx/docx4j-headers_footers.docx');
      const results = await Promise.all([convert(doc, 'a.docx', '', one.app, k), convert(doc, 'b.docx', '', one.app, k)]);
      expect(results.map((r) => r.statusCode).sort()).toEqual([200, 429]);
      expect(results.find((r) => r.statusCode === 429)!.json().code).toBe('CONCURRENCY_LIMIT_ERROR');
      expect((await convert(doc, 'c.docx', '', one.app, k)).statusCode).toBe(200);
    } finally {
      await one.app.close();
    }
  });
});
