import { readFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CORPUS_DIR } from '../support/corpus.js';
import { compileClient, generateClientTypes, runClient } from '../support/client-types.js';
import { buildDocx, cell, para, plainText, pngImage, readPart, row, table } from '../support/annotate/docx-builder.js';
import { superdocBlockControl, superdocControl, superdocTableControl } from '../support/annotate/superdoc.js';
import { SmtpPeer } from '../support/smtp-peer.js';
import { buildTestApp, uniqueEmail, type TestApp } from '../support/test-app.js';

/**
 * A client generated from SuperDoc's own OpenAPI document (third-party, read from ../shared, never
 * copied here) runs SuperDoc's operations against docproc with SuperDoc-shaped requests, and every
 * answer is validated against the SuperDoc document's schema for its status and content type.
 * Deliberate differences are listed in the README ("SuperDoc compatibility").
 */
const root = path.resolve(import.meta.dirname, '../..');
const SUPERDOC_SPEC = path.resolve(root, '../shared/reference/superdoc-openapi.json');
interface SpecOperation {
  responses: Record<string, { content?: Record<string, { schema?: object }> }>;
  requestBody?: { content?: Record<string, { examples?: Record<string, { value: unknown }> }> };
}
const spec = JSON.parse(readFileSync(SUPERDOC_SPEC, 'utf8')) as { paths: Record<string, Record<string, SpecOperation>> };

/**
 * A template made the way SuperDoc's editor saves fields (JSON w:tag controls), holding every field
 * the spec's annotate examples name: text and groups in body, header and footer, images, a
 * signature and two tables.
 */
function examplesTemplate(): Buffer {
  const itemsTable = (id: string) =>
    superdocTableControl({ fieldId: id, fieldTypeShort: 'table' }, table([row([cell('Name'), cell('Value')], true), row([cell(''), cell('')])]));
  return buildDocx({
    body:
      `<w:p><w:r><w:t xml:space="preserve">Customer: </w:t></w:r>${superdocControl({ fieldId: 'customer_name', fieldTypeShort: 'text', displayLabel: 'Customer Name' })}</w:p>` +
      `<w:p><w:r><w:t xml:space="preserve">Company: </w:t></w:r>${superdocControl({ group: 'company_name', fieldTypeShort: 'text' }, 'Company Name')}</w:p>` +
      superdocBlockControl({ fieldId: 'author_photo', fieldTypeShort: 'image', displayLabel: 'Author Photo' }) +
      superdocBlockControl({ fieldId: 'logo', fieldTypeShort: 'image', displayLabel: 'Logo' }) +
      superdocBlockControl({ group: 'company_logo', fieldTypeShort: 'image' }, 'Company Logo') +
      itemsTable('invoice_items') + para('') + itemsTable('items_table') +
      superdocBlockControl({ fieldId: 'client_signature', fieldTypeShort: 'signature', displayLabel: 'Client Signature' }),
    header: superdocBlockControl({ group: 'company_logo', fieldTypeShort: 'image' }, 'Company Logo') +
      `<w:p>${superdocControl({ group: 'company_name', fieldTypeShort: 'text' }, 'Company Name')}</w:p>`,
    footer: `<w:p>${superdocControl({ group: 'footer_text', fieldTypeShort: 'text' }, 'Footer Text')}</w:p>`,
  });
}

/**
 * The spec's annotate examples as sent, except what cannot be sent as printed: example.com URLs
 * point at a local server here (URL inputs are on for this test), and values the spec truncates
 * ("UEsDBBQ...", "data:image/png;base64,iVBOR...") are completed with a real file of that kind.
 */
function specAnnotateExamples(localBase: string, template: Buffer, png: Buffer): Record<string, unknown> {
  const examples = spec.paths['/v1/annotate']!.post!.requestBody!.content!['application/json']!.examples!;
  const complete = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(complete);
    if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, complete(v)]));
    if (typeof value !== 'string') return value;
    if (value.startsWith('https://example.com/')) return value.replace('https://example.com/', `${localBase}/`);
    if (value.startsWith('data:image/png;base64,') && value.endsWith('...')) return `data:image/png;base64,${png.toString('base64')}`;
    if (value.startsWith('UEsDB') && value.endsWith('...')) return template.toString('base64');
    return value;
  };
  return Object.fromEntries(Object.entries(examples).map(([name, example]) => [name, complete(example.value)]));
}
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => void;

let work: string;
let smtp: SmtpPeer;
let t: TestApp;
let baseUrl: string;
let files: http.Server;
let filesBase: string;
const TEMPLATE = examplesTemplate();
const PNG = pngImage(40, 30);

beforeAll(async () => {
  // Stands in for example.com: every .docx is the examples template, every image a PNG.
  files = http.createServer((req, res) => {
    const body = /\.docx$/.test(req.url ?? '') ? TEMPLATE : PNG;
    res.writeHead(200, { 'content-type': /\.docx$/.test(req.url ?? '') ? 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' : 'image/png' }).end(body);
  });
  await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
  filesBase = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  work = path.join(root, 'test/client/.generated-superdoc');
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  smtp = new SmtpPeer();
  const smtpUrl = await smtp.start();
  t = await buildTestApp({ REDIS_URL: inject('redisUrl'), SMTP_URL: smtpUrl, API_KEY_PEPPER: 'superdoc-compat-pepper-0123', OFFICE_ENABLED: 'true', OFFICE_POOL_SIZE: '1', RATE_LIMIT_MAX: '1000',
    ALLOW_URL_INPUTS: 'true', ALLOW_HTTP_URL_INPUTS: 'true', OUTBOUND_ALLOW_PRIVATE_ADDRESSES: 'true' });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await t?.app.close();
  await smtp?.stop();
  await new Promise((resolve) => files?.close(resolve));
  if (work) rmSync(work, { recursive: true, force: true });
});

interface Answer {
  op: string;
  path: string;
  method: string;
  status: number;
  contentType: string;
  json?: unknown;
  bytes?: number;
}

/** The SuperDoc schema of `method path` for `status` and the answer's media type. */
function validatorFor(ajv: Ajv, answer: Answer) {
  const responses = spec.paths[answer.path]?.[answer.method]?.responses ?? {};
  const response = responses[String(answer.status)];
  expect(response, `SuperDoc documents no ${answer.status} for ${answer.method.toUpperCase()} ${answer.path}`).toBeDefined();
  const mediaType = answer.contentType.split(';')[0]!.trim();
  const content = response!.content ?? {};
  expect(Object.keys(content), `${answer.op}: ${mediaType} is not among SuperDoc's media types`).toContain(mediaType);
  const pointer = ['paths', answer.path, answer.method, 'responses', String(answer.status), 'content', mediaType, 'schema'].map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
  return content[mediaType]!.schema ? ajv.getSchema(`superdoc#/${pointer}`) : undefined;
}

describe('a client generated from SuperDoc’s OpenAPI document', () => {
  it('runs every SuperDoc operation against docproc; each answer matches SuperDoc’s schema, status and content type', async () => {
    await generateClientTypes(SUPERDOC_SPEC, path.join(work, 'schema.d.ts'));
    const email = uniqueEmail('superdoc');
    const program = `
import createClient from 'openapi-fetch';
import { readFileSync } from 'node:fs';
import type { paths } from './schema.js';

const [baseUrl, email, corpus, examplesFile] = process.argv.slice(2) as [string, string, string, string];
// SuperDoc declares every answer, errors included, as application/json, so its clients ask for that.
const client = createClient<paths>({ baseUrl, headers: { Accept: 'application/json' } });
const answers: unknown[] = [];
/** A raw fetch Response (read here), or what openapi-fetch already read: { response, data | error }. */
async function record(op: string, path: string, method: string, result: Response | { response: Response; data?: unknown; error?: unknown }) {
  const response = result instanceof Response ? result : result.response;
  const contentType = response.headers.get('content-type') ?? '';
  const entry: Record<string, unknown> = { op, path, method, status: response.status, contentType };
  if (result instanceof Response) {
    if (contentType.includes('json')) entry.json = await response.json();
    else entry.bytes = (await response.arrayBuffer()).byteLength;
  } else entry.json = result.data ?? result.error;
  answers.push(entry);
}

const reg = await client.GET('/v1/auth/register', { params: { query: { email } } });
await record('register', '/v1/auth/register', 'get', reg);
const code: string = await new Promise((resolve) => process.stdin.once('data', (d) => resolve(String(d).trim())));
const ver = await client.GET('/v1/auth/verify', { params: { query: { email, code } } });
await record('verify-email', '/v1/auth/verify', 'get', ver);
const key = ver.data as unknown as string;
const auth = { headers: { Authorization: 'Bearer ' + key } };
await record('badCode', '/v1/auth/verify', 'get', (await client.GET('/v1/auth/verify', { params: { query: { email, code: '000000' } } })));

await record('root', '/', 'get', (await client.GET('/')));
await record('health', '/v1/health', 'get', (await client.GET('/v1/health')));
await record('verifyKey', '/v1/verify/key', 'get', (await client.GET('/v1/verify/key', auth)));

// SuperDoc documents no request body for convert: multipart 'file', as its guide shows.
const docx = readFileSync(corpus + '/docx/pandoc-tables.docx');
const form = new FormData();
form.append('file', new Blob([docx]), 'report.docx');
await record('convert', '/v1/convert', 'post', await fetch(baseUrl + '/v1/convert?from=docx&to=pdf', { method: 'POST', headers: { Authorization: 'Bearer ' + key, Accept: 'application/pdf, application/json' }, body: form }));
await record('convertNoKey', '/v1/convert', 'post', await fetch(baseUrl + '/v1/convert?from=docx&to=pdf', { method: 'POST', headers: { Accept: 'application/pdf, application/json' }, body: form }));

const template = readFileSync(corpus + '/templates/docxtemplater-tag-example.docx').toString('base64');
const annotate = await client.POST('/v1/annotate', {
  ...auth,
  body: { document: { base64: template }, fields: [{ id: 'first_name', type: 'text', value: 'Ada' }, { id: 'last_name', type: 'text', value: 'Lovelace' }] } as never,
});
await record('annotate', '/v1/annotate', 'post', annotate);
// Every annotate example of SuperDoc's document, sent as the spec prints it (see specAnnotateExamples).
const examples = JSON.parse(readFileSync(examplesFile, 'utf8')) as Record<string, unknown>;
for (const [name, body] of Object.entries(examples)) {
  await record('example:' + name, '/v1/annotate', 'post', await client.POST('/v1/annotate', { ...auth, body: body as never }));
}
await record('annotateBad', '/v1/annotate', 'post', (await client.POST('/v1/annotate', { ...auth, body: { document: { base64: 'bm90IGEgZG9jeA==' }, fields: [] } as never })));

const pdf = readFileSync(corpus + '/pdf-unsigned/signpdf-w3dummy.pdf').toString('base64');
const sign = await client.POST('/v1/sign', {
  ...auth,
  body: {
    eventId: 'evt-superdoc-1',
    document: { base64: pdf },
    signer: { name: 'Jane Doe', email: 'jane@example.com', ip: '203.0.113.7', userAgent: 'Mozilla/5.0', title: 'CFO', company: 'ACME' },
    auditTrail: [
      { type: 'ready', timestamp: '2025-01-15T10:00:00Z' },
      { type: 'field_change', timestamp: '2025-01-15T10:01:00Z', data: { fieldId: 'name', value: 'Jane' } },
      { type: 'submit', timestamp: '2025-01-15T10:02:00Z' },
    ],
    metadata: { contract: 'C-42' },
  } as never, // SuperDoc's schema leaves document and signer as bare objects (Record<string, never> when generated).
});
await record('sign', '/v1/sign', 'post', sign);
const signed = (sign.data as { document: { base64: string; contentType?: string } }).document;
await record('signBad', '/v1/sign', 'post', (await client.POST('/v1/sign', { ...auth, body: { document: { base64: pdf }, signer: {}, auditTrail: [] } as never })));

await record('verify', '/v1/verify', 'post', (await client.POST('/v1/verify', { ...auth, body: { document: signed, eventId: 'evt-superdoc-1' } as never })));
await record('verifyBad', '/v1/verify', 'post', (await client.POST('/v1/verify', { ...auth, body: { document: { base64: 'aGVsbG8=' } } as never })));

console.log(JSON.stringify(answers));
`;
    compileClient(work, program, ['ES2023', 'DOM']);
    const examples = specAnnotateExamples(filesBase, TEMPLATE, PNG);
    expect(Object.keys(examples).length).toBeGreaterThanOrEqual(6);
    const examplesFile = path.join(work, 'annotate-examples.json');
    writeFileSync(examplesFile, JSON.stringify(examples));
    const run = await runClient(work, [baseUrl, email, CORPUS_DIR, examplesFile], smtp.codeFor(email, 15_000));
    expect(run.exit, run.stderr).toBe(0);
    const answers = run.result as Answer[];

    const expected: Record<string, number> = {
      register: 200, 'verify-email': 200, badCode: 400, root: 200, health: 200, verifyKey: 200, convert: 200, convertNoKey: 401,
      annotate: 200, annotateBad: 400, sign: 200, signBad: 400, verify: 200, verifyBad: 400,
      ...Object.fromEntries(Object.keys(examples).map((name) => [`example:${name}`, 200])),
    };
    expect(Object.fromEntries(answers.map((a) => [a.op, a.status]))).toEqual(expected);

    const ajv = new Ajv({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema(spec, 'superdoc');
    for (const answer of answers) {
      const validate = validatorFor(ajv, answer);
      if (answer.json === undefined) {
        expect(answer.bytes, answer.op).toBeGreaterThan(0);
        continue;
      }
      expect(validate, `${answer.op}: SuperDoc declares a schema for this answer`).toBeDefined();
      // docproc's one addition to SuperDoc's closed annotate answer: `warnings` (README, SuperDoc compatibility).
      // It must be the documented list; everything else must match SuperDoc's schema exactly.
      const { warnings, ...superdocPart } = answer.json as Record<string, unknown>;
      const json = answer.status === 200 && Array.isArray(warnings) ? superdocPart : answer.json;
      if (json !== answer.json) expect((warnings as object[]).every((w) => typeof (w as { code?: unknown }).code === 'string' && typeof (w as { message?: unknown }).message === 'string'), answer.op).toBe(true);
      expect(validate!(json), `${answer.op}: ${JSON.stringify(validate!.errors)}\n${JSON.stringify(answer.json).slice(0, 500)}`).toBe(true);
    }
    // The examples really filled the SuperDoc-style controls they name.
    const filled = (op: string, part: string) => {
      const json = answers.find((a) => a.op === op)!.json as { document: { base64: string } };
      return plainText(readPart(Buffer.from(json.document.base64, 'base64'), part));
    };
    expect(filled('example:text-field', 'word/document.xml')).toContain('Customer: John Doe');
    expect(filled('example:mixed-fields', 'word/document.xml')).toContain('Company: Acme Corporation');
    expect(filled('example:mixed-fields', 'word/header1.xml')).toContain('Acme Corporation');
    expect(filled('example:mixed-fields', 'word/document.xml')).toMatch(/Product A\s*\$100\s*Product B\s*\$200/);
    expect(filled('example:group-field', 'word/footer1.xml')).toContain('© 2024 Acme Corporation. All rights reserved.');
    expect(filled('example:table-field', 'word/document.xml')).toMatch(/SuperDoc\s*Frontend\s*SuperDoc Services\s*Backend/);
    const verify = answers.find((a) => a.op === 'verify')!.json as { valid: boolean };
    expect(verify.valid).toBe(true);
  }, 180_000);
});
