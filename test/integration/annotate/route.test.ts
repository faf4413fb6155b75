import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import PizZip from 'pizzip';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { generateApiKey, hashApiKey } from '../../../src/accounts/api-keys.js';
import type { Services } from '../../../src/services.js';
import { buildDocx, cell, listParts, para, plainText, pngImage, readPart, row, sdt, table } from '../../support/annotate/docx-builder.js';
import { multipartBody } from '../../support/annotate/multipart.js';
import { buildTestApp, type TestApp } from '../../support/test-app.js';
import { CORPUS_DIR } from '../../support/corpus.js';

const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const EMU_PER_PX = 9525;
const CORPUS = `${CORPUS_DIR}/templates/`;

const PEPPER = 'annotate-route-pepper-0123456789';
const run = promisify(execFile);
let testApp: TestApp;
let app: FastifyInstance;
let key: string;

beforeAll(async () => {
  testApp = await buildTestApp({ REDIS_URL: inject('redisUrl'), API_KEY_PEPPER: PEPPER, RATE_LIMIT_MAX: '1000' });
  app = testApp.app;
  key = generateApiKey();
  const services = (app as unknown as { services: Services }).services;
  await services.store.putApiKey(hashApiKey(key, PEPPER), { email: 'annotate-route@example.com', createdAt: new Date().toISOString() });
});

afterAll(async () => {
  await app?.close();
});

const auth = () => ({ authorization: `Bearer ${key}` });

function postJson(body: unknown, headers: Record<string, string> = {}, query = '') {
  return app.inject({ method: 'POST', url: `/v1/annotate${query}`, headers: { ...auth(), 'content-type': 'application/json', ...headers }, payload: JSON.stringify(body) });
}

function expectProblem(res: { statusCode: number; headers: Record<string, unknown>; json: () => any }, status: number, code: string) {
  expect(res.statusCode, JSON.stringify(res.json())).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
  const problem = res.json();
  expect(problem).toMatchObject({ status, code });
  expect(typeof problem.detail).toBe('string');
  return problem;
}

const BOLD_RED = '<w:rPr><w:b/><w:color w:val="C00000"/></w:rPr>';
const SHADED = '<w:shd w:val="clear" w:color="auto" w:fill="EEEEEE"/>';

/** A template using every kind of field: text tag, grouped tag + content control, image, signature, table row loop. */
function superDocTemplate(): Buffer {
  return buildDocx({
    header: para('Issued by {company}'),
    body:
      para('Customer: {customer}', BOLD_RED) +
      `<w:p><w:r><w:t xml:space="preserve">Supplier: </w:t></w:r>${sdt('company', '<w:r><w:rPr><w:i/><w:rStyle w:val="PlaceholderText"/></w:rPr><w:t>Company name</w:t></w:r>', { placeholder: true })}</w:p>` +
      para('{%logo}') +
      table([
        row([cell('Item'), cell('Qty')], true),
        row([cell(para('{#items}{c0}', BOLD_RED), 3000, SHADED), cell(para('{c1}{/items}', BOLD_RED), 3000, SHADED)]),
      ]) +
      para('{%signature}'),
  });
}

const logoPng = pngImage(400, 100, [10, 120, 40]);
const signaturePng = pngImage(300, 100, [0, 0, 0]);

/** The request body exactly as a SuperDoc client sends it. */
function superDocRequest() {
  return {
    document: { base64: superDocTemplate().toString('base64') },
    fields: [
      { id: 'customer', type: 'text', value: 'Ada Lovelace', options: { keepTextNodeStyles: true } },
      { group: 'company', type: 'text', value: 'Analytical Engines Ltd' },
      { id: 'logo', type: 'image', value: `data:image/png;base64,${logoPng.toString('base64')}`, options: { dimensions: { width: '200px', height: '80px' } } },
      {
        id: 'signature',
        type: 'signature',
        value: `data:image/png;base64,${signaturePng.toString('base64')}`,
        options: {
          dimensions: { width: 150 },
          arcElement: { color: '#1f3a93' },
          topLabel: { text: 'Signed by Ada Lovelace', color: '#333333' },
          bottomLabel: { text: '2026-01-05 10:42 UTC · 203.0.113.7', color: '#888888' },
        },
      },
      { id: 'items', type: 'table', value: [['Pen', '2'], ['Ink', '5'], ['Paper', '7']], options: { copyRowStyle: true } },
    ],
  };
}

function extents(xml: string): Array<{ cx: number; cy: number }> {
  return [...xml.matchAll(/<wp:extent cx="(\d+)" cy="(\d+)"\/>/g)].map((m) => ({ cx: Number(m[1]), cy: Number(m[2]) }));
}

function checkFilledDocx(docx: Buffer) {
  const body = readPart(docx, 'word/document.xml');
  const text = plainText(body);
  expect(text).toContain('Customer: Ada Lovelace');
  expect(text).toContain('Supplier: Analytical Engines Ltd');
  expect(plainText(readPart(docx, 'word/header1.xml'))).toContain('Issued by Analytical Engines Ltd');
  expect(body).not.toMatch(/\{[#/%]?\w+\}/);
  expect(body).not.toContain('showingPlcHdr');
  // The text tag keeps the placeholder's bold red formatting.
  expect(body).toMatch(/<w:r><w:rPr><w:b\/><w:color w:val="C00000"\/><\/w:rPr><w:t[^>]*>Customer: Ada Lovelace<\/w:t>/);

  const media = listParts(docx).filter((p) => p.startsWith('word/media/'));
  expect(media).toHaveLength(2);
  const mediaBytes = media.map((p) => new PizZip(docx).file(p)!.asNodeBuffer());
  expect(mediaBytes.some((b) => b.equals(logoPng))).toBe(true);
  expect(mediaBytes.some((b) => b.equals(signaturePng))).toBe(true);
  const sizes = extents(body);
  expect(sizes).toContainEqual({ cx: 200 * EMU_PER_PX, cy: 80 * EMU_PER_PX });
  expect(sizes).toContainEqual({ cx: 150 * EMU_PER_PX, cy: 50 * EMU_PER_PX });
  expect(text).toContain('Signed by Ada Lovelace');
  expect(text).toContain('2026-01-05 10:42 UTC · 203.0.113.7');
  expect(body).toContain('w:val="333333"');
  expect(body).toContain('w:val="888888"');
  expect(body.toUpperCase()).toContain('1F3A93');

  const rows = body.match(/<w:tr>[\s\S]*?<\/w:tr>/g) ?? [];
  expect(rows).toHaveLength(4);
  expect(rows.map((r) => plainText(r).replace(/\s+/g, ' ').trim())).toEqual(['Item Qty', 'Pen 2', 'Ink 5', 'Paper 7']);
  for (const dataRow of rows.slice(1)) {
    expect(dataRow.match(/w:fill="EEEEEE"/g)).toHaveLength(2);
    expect(dataRow.match(/<w:b\/><w:color w:val="C00000"\/>/g)?.length).toBeGreaterThanOrEqual(2);
  }
  expect(rows[0]).toContain('<w:tblHeader/>');
}

describe('POST /v1/annotate (JSON, SuperDoc shape)', () => {
  it('fills text, group, image, signature and table fields and answers {document:{base64, contentType}, warnings}', async () => {
    const res = await postJson(superDocRequest());
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const reply = res.json();
    // SuperDoc's shape plus docproc's `warnings` (issue 25: warnings in the body), empty here.
    expect(Object.keys(reply)).toEqual(['document', 'warnings']);
    expect(reply.warnings).toEqual([]);
    expect(reply.document.contentType).toBe(DOCX_TYPE);
    expect(res.headers['x-docproc-warnings']).toBeUndefined();
    checkFilledDocx(Buffer.from(reply.document.base64, 'base64'));
  });

  it('renders table values exactly as sent: one row, empty strings, numbers as strings (bodies are never coerced)', async () => {
    for (const value of [[['SuperDoc', 'Frontend']], [['', '0'], ['007', '']], [['1.50', '-2']]]) {
      const request = superDocRequest();
      request.fields = request.fields.map((f) => ('id' in f && f.id === 'items' ? { ...f, value } : f)) as typeof request.fields;
      const res = await postJson(request);
      expect(res.statusCode, res.body).toBe(200);
      const body = readPart(Buffer.from(res.json().document.base64, 'base64'), 'word/document.xml');
      const cells = [...body.matchAll(/<w:tc>[\s\S]*?<\/w:tc>/g)].map((m) => plainText(m[0]).trim());
      for (const row of value) for (const cell of row) expect(cells).toContain(cell);
      expect(body).not.toContain('[&quot;');
      expect(body).not.toContain('["');
    }
  });

  it('a value of the wrong shape is a 400 naming the field, not coerced', async () => {
    const request = superDocRequest();
    request.fields = request.fields.map((f) => ('id' in f && f.id === 'items' ? { ...f, value: ['SuperDoc', 'Frontend'] } : f)) as typeof request.fields;
    const res = await postJson(request);
    expectProblem(res, 400, 'VALIDATION_ERROR');
    expect(JSON.stringify(res.json().details)).toContain('fields');
  });

  it('answers with the DOCX itself when Accept names the DOCX type', async () => {
    const res = await postJson(superDocRequest(), { accept: DOCX_TYPE });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe(DOCX_TYPE);
    expect(res.headers['content-disposition']).toContain('annotated.docx');
    checkFilledDocx(res.rawPayload);
  });
});

describe('POST /v1/annotate (multipart)', () => {
  it('takes file + fields + a cid: image part and answers with the file', async () => {
    const template = buildDocx({ body: para('Dear {name},') + para('{%logo}') });
    const fields = [
      { id: 'name', type: 'text', value: 'Grace' },
      { id: 'logo', type: 'image', value: 'cid:logo', options: { dimensions: { width: 120 } } },
    ];
    const { payload, headers } = multipartBody([
      { name: 'file', value: template, filename: 'Welcome letter.docx', contentType: DOCX_TYPE },
      { name: 'fields', value: JSON.stringify(fields) },
      { name: 'logo', value: logoPng, filename: 'logo.png', contentType: 'image/png' },
    ]);
    const res = await app.inject({ method: 'POST', url: '/v1/annotate', headers: { ...auth(), ...headers }, payload });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe(DOCX_TYPE);
    expect(res.headers['content-disposition']).toBe(`attachment; filename="Welcome letter.docx"; filename*=UTF-8''Welcome%20letter.docx`);
    const docx = res.rawPayload;
    const body = readPart(docx, 'word/document.xml');
    expect(plainText(body)).toContain('Dear Grace,');
    expect(extents(body)).toEqual([{ cx: 120 * EMU_PER_PX, cy: 30 * EMU_PER_PX }]);
    const media = listParts(docx).filter((p) => p.startsWith('word/media/'));
    expect(media).toHaveLength(1);
    expect(new PizZip(docx).file(media[0])!.asNodeBuffer().equals(logoPng)).toBe(true);
  });

  it('embeds an SVG part with its PNG fallback (rendered in the worker thread)', async () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="90" height="30"><rect width="90" height="30" fill="#0050a0"/></svg>');
    const { payload, headers } = multipartBody([
      { name: 'file', value: buildDocx({ body: para('{%badge}') }), filename: 'badge.docx' },
      { name: 'fields', value: JSON.stringify([{ id: 'badge', type: 'image', value: 'cid:badge' }]) },
      { name: 'badge', value: svg, filename: 'badge.svg', contentType: 'image/svg+xml' },
    ]);
    const res = await app.inject({ method: 'POST', url: '/v1/annotate', headers: { ...auth(), ...headers }, payload });
    expect(res.statusCode, res.body).toBe(200);
    const zip = new PizZip(res.rawPayload);
    expect(zip.file('word/media/docproc-annotate-2.svg')!.asNodeBuffer().equals(svg)).toBe(true);
    const png = zip.file('word/media/docproc-annotate-1.png')!.asNodeBuffer();
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([180, 60]);
    expect(extents(readPart(res.rawPayload, 'word/document.xml'))).toEqual([{ cx: 90 * EMU_PER_PX, cy: 30 * EMU_PER_PX }]);
  });

  it('honours data, strict and ignoreUnknownFields given as multipart fields', async () => {
    const template = buildDocx({ body: para('{#paid}PAID{/paid}{^paid}DUE{/paid} for {name}') });
    const { payload, headers } = multipartBody([
      { name: 'file', value: template, filename: 'invoice.docx' },
      { name: 'fields', value: JSON.stringify([{ id: 'name', type: 'text', value: 'Bo' }, { id: 'ghost', type: 'text', value: 'x' }]) },
      { name: 'data', value: JSON.stringify({ paid: true }) },
      { name: 'ignoreUnknownFields', value: 'true' },
      { name: 'strict', value: 'true' },
    ]);
    const res = await app.inject({ method: 'POST', url: '/v1/annotate', headers: { ...auth(), ...headers }, payload });
    expect(res.statusCode, res.body).toBe(200);
    expect(plainText(readPart(res.rawPayload, 'word/document.xml'))).toContain('PAID for Bo');
    expect(decodeURIComponent(String(res.headers['x-docproc-warnings']))).toContain('"ghost"');
  });

  it('refuses a cid: reference to a part that was not sent', async () => {
    const { payload, headers } = multipartBody([
      { name: 'file', value: buildDocx({ body: para('{%logo}') }), filename: 't.docx' },
      { name: 'fields', value: JSON.stringify([{ id: 'logo', type: 'image', value: 'cid:nothere' }]) },
    ]);
    const res = await app.inject({ method: 'POST', url: '/v1/annotate', headers: { ...auth(), ...headers }, payload });
    const problem = expectProblem(res, 400, 'VALIDATION_ERROR');
    expect(problem.detail).toContain('nothere');
  });

  it('refuses a fields part that is not JSON', async () => {
    const { payload, headers } = multipartBody([
      { name: 'file', value: buildDocx({ body: para('{a}') }), filename: 't.docx' },
      { name: 'fields', value: '[{id:' },
    ]);
    const res = await app.inject({ method: 'POST', url: '/v1/annotate', headers: { ...auth(), ...headers }, payload });
    const problem = expectProblem(res, 400, 'VALIDATION_ERROR');
    expect(problem.details).toEqual([{ field: 'body.fields', issue: 'must be a JSON string' }]);
  });
});

describe('POST /v1/annotate errors as problem+json', () => {
  it.each([
    ['errors-footer-and-header', 3, ['word/header1.xml', 'word/document.xml', 'word/footer1.xml']],
    ['multi-errors', 4, ['word/document.xml']],
    ['one-unclosed', 1, ['word/document.xml']],
  ])('corpus %s → 422 TEMPLATE_INVALID listing every error with part and offset', async (name, count, parts) => {
    const template = readFileSync(`${CORPUS}docxtemplater-${name}.docx`);
    const res = await postJson({ document: { base64: template.toString('base64') }, fields: [] });
    const problem = expectProblem(res, 422, 'TEMPLATE_INVALID');
    expect(problem.errors).toHaveLength(count);
    expect(new Set(problem.errors.map((e: { part: string }) => e.part))).toEqual(new Set(parts));
    for (const error of problem.errors) {
      expect(error.explanation.length).toBeGreaterThan(0);
      expect(Number.isInteger(error.offset)).toBe(true);
    }
    expect(problem.details).toHaveLength(count);
    expect(problem.details.map((d: { field: string }) => d.field)).toEqual(problem.errors.map((e: { part: string; offset: number }) => `${e.part}:${e.offset}`));
  });

  it('names a foreign template language, an unknown filter and refused raw XML, each in the problem format', async () => {
    const jinja = await postJson({ document: { base64: buildDocx({ body: para('Dear {{ customer }}') }).toString('base64') }, fields: [] });
    expect(expectProblem(jinja, 422, 'TEMPLATE_INVALID').templateLanguages).toEqual(['jinja']);
    const filter = await postJson({ document: { base64: buildDocx({ body: para('{name | shout}') }).toString('base64') }, fields: [], data: { name: 'x' } });
    expect(JSON.stringify(expectProblem(filter, 422, 'TEMPLATE_INVALID').errors)).toContain('unknown filter \\"shout\\"');
    const raw = await postJson({ document: { base64: buildDocx({ body: para('{@raw}') }).toString('base64') }, fields: [], data: { raw: '<w:p><w:fldSimple w:instr="INCLUDETEXT x"/></w:p>' } });
    expect(expectProblem(raw, 422, 'RAW_XML_INVALID').detail).toContain('fldSimple');
  });

  it('names the unknown field in 422 FIELD_NOT_FOUND', async () => {
    const res = await postJson({ document: { base64: buildDocx({ body: para('{name}') }).toString('base64') }, fields: [{ id: 'nmae', type: 'text', value: 'x' }] });
    const problem = expectProblem(res, 422, 'FIELD_NOT_FOUND');
    expect(problem.fields).toEqual(['nmae']);
    expect(problem.detail).toContain('"nmae"');
  });

  it('turns unknown fields into an x-docproc-warnings header with ignoreUnknownFields', async () => {
    const res = await postJson({
      document: { base64: buildDocx({ body: para('{name}') }).toString('base64') },
      fields: [{ id: 'name', type: 'text', value: 'Kay' }, { id: 'nmae', type: 'text', value: 'x' }],
      ignoreUnknownFields: true,
    });
    expect(res.statusCode, res.body).toBe(200);
    const warnings = String(res.headers['x-docproc-warnings']).split(', ').map(decodeURIComponent);
    expect(warnings).toEqual(['Field "nmae" matches no tag or content control and was ignored.']);
    expect(plainText(readPart(Buffer.from(res.json().document.base64, 'base64'), 'word/document.xml'))).toContain('Kay');
  });

  it('fails a tag without value in strict mode with 422 MISSING_VALUES', async () => {
    const document = { base64: buildDocx({ body: para('{name} {city}') }).toString('base64') };
    const res = await postJson({ document, fields: [{ id: 'name', type: 'text', value: 'Kay' }], strict: true });
    const problem = expectProblem(res, 422, 'MISSING_VALUES');
    expect(problem.tags).toEqual(['city']);
    const lenient = await postJson({ document, fields: [{ id: 'name', type: 'text', value: 'Kay' }] });
    expect(lenient.statusCode).toBe(200);
    expect(decodeURIComponent(String(lenient.headers['x-docproc-warnings']))).toContain('{city}');
  });

  it('refuses a field with both id and group with 400 and details', async () => {
    const res = await postJson({ document: { base64: buildDocx({ body: para('{a}') }).toString('base64') }, fields: [{ id: 'a', group: 'a', type: 'text', value: 'x' }] });
    const problem = expectProblem(res, 400, 'VALIDATION_ERROR');
    expect(problem.details.length).toBeGreaterThan(0);
    expect(problem.details.some((d: { field: string }) => d.field.startsWith('body.fields.0'))).toBe(true);
  });

  it('refuses a document that is not a DOCX with 400 naming docx (SuperDoc’s contract has no 415 here)', async () => {
    const res = await postJson({ document: { base64: Buffer.from('%PDF-1.7 not a word file').toString('base64') }, fields: [] });
    expect(expectProblem(res, 400, 'INVALID_FILE_FORMAT').acceptedFormats).toEqual(['docx']);
  });

  it('refuses an image URL while URL inputs are disabled with 400 URL_NOT_ALLOWED', async () => {
    const res = await postJson({ document: { base64: buildDocx({ body: para('{%logo}') }).toString('base64') }, fields: [{ id: 'logo', type: 'image', value: 'https://example.com/logo.png' }] });
    expectProblem(res, 400, 'URL_NOT_ALLOWED');
  });

  it('refuses a zip bomb with a 4xx before templating', async () => {
    const zip = new PizZip(buildDocx({ body: para('{a}') }));
    zip.file('word/media/filler.bin', Buffer.alloc(12 * 1024 * 1024));
    const bomb = zip.generate({ type: 'nodebuffer', compression: 'DEFLATE' }) as Buffer;
    const res = await postJson({ document: { base64: bomb.toString('base64') }, fields: [] });
    const problem = expectProblem(res, 422, 'INVALID_FILE_FORMAT');
    expect(problem.detail).toMatch(/zip bomb/);
  });

  it('answers 401 without an API key', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/annotate', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(superDocRequest()) });
    expectProblem(res, 401, 'AUTHENTICATION_ERROR');
    expect(res.headers['www-authenticate']).toContain('Bearer');
  });
});

describe('POST /v1/annotate?to=pdf', () => {
  it('answers 503 while this instance runs without the office pool (OFFICE_ENABLED=false)', async () => {
    const res = await postJson(superDocRequest(), {}, '?to=pdf');
    expectProblem(res, 503, 'SERVICE_BUSY');
  });

  it('renders the filled template to PDF on the warm office pool (pdftotext and pdfimages read it back)', async () => {
    const office = await buildTestApp({ REDIS_URL: inject('redisUrl'), API_KEY_PEPPER: PEPPER, RATE_LIMIT_MAX: '1000', OFFICE_ENABLED: 'true', OFFICE_POOL_SIZE: '1' });
    const dir = await mkdtemp(join(tmpdir(), 'docproc-annotate-route-'));
    try {
      const res = await office.app.inject({
        method: 'POST',
        url: '/v1/annotate?to=pdf',
        headers: { ...auth(), 'content-type': 'application/json', accept: 'application/pdf' },
        payload: JSON.stringify(superDocRequest()),
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['content-type']).toBe('application/pdf');
      expect(res.headers['content-disposition']).toContain('annotated.pdf');
      expect(res.rawPayload.subarray(0, 5).toString('latin1')).toBe('%PDF-');
      const pdf = join(dir, 'annotated.pdf');
      await writeFile(pdf, res.rawPayload);
      const { stdout: text } = await run('pdftotext', ['-layout', pdf, '-']);
      for (const expected of ['Issued by Analytical Engines Ltd', 'Customer: Ada Lovelace', 'Supplier: Analytical Engines Ltd', 'Signed by Ada Lovelace', '2026-01-05 10:42 UTC']) {
        expect(text).toContain(expected);
      }
      expect(text).toMatch(/Pen\s+2/);
      expect(text).toMatch(/Paper\s+7/);
      const { stdout: images } = await run('pdfimages', ['-list', pdf]);
      expect(images.trim().split('\n').slice(2).filter((line) => /\simage\s/.test(line))).toHaveLength(2);

      // Without Accept, a JSON request gets the PDF inside the SuperDoc-shaped JSON reply.
      const json = await office.app.inject({ method: 'POST', url: '/v1/annotate?to=pdf', headers: { ...auth(), 'content-type': 'application/json' }, payload: JSON.stringify(superDocRequest()) });
      expect(json.statusCode, json.body).toBe(200);
      expect(json.json().document.contentType).toBe('application/pdf');
      expect(Buffer.from(json.json().document.base64, 'base64').subarray(0, 5).toString('latin1')).toBe('%PDF-');
    } finally {
      await rm(dir, { recursive: true, force: true });
      await office.app.close();
    }
  });
});
