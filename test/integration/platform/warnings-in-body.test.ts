import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';
import { Ajv } from 'ajv';
import { issueTestKey, multipart } from '../../support/api-key.js';
import { buildDocx, para } from '../../support/annotate/docx-builder.js';
import { buildTestApp } from '../../support/test-app.js';
import { CORPUS_DIR } from '../../support/corpus.js';

/**
 * Engine warnings are in every JSON body as `warnings: [{code, message, field?}]` (issue 25 item 1),
 * checked against the Warning schema of the committed OpenAPI document; binary answers carry the
 * same warnings in X-Docproc-Warnings.
 */
let app: FastifyInstance;
let auth: { authorization: string };
const openapi = JSON.parse(readFileSync(new URL('../../../openapi/openapi.json', import.meta.url), 'utf8'));
const ajv = new Ajv({ strict: false });
const validWarnings = ajv.compile({ type: 'array', items: openapi.components.schemas.Warning });
const headerWarnings = (value: unknown) => (typeof value === 'string' ? value.split(', ').map(decodeURIComponent) : []);

beforeAll(async () => {
  ({ app } = await buildTestApp({ REDIS_URL: inject('redisUrl'), API_KEY_PEPPER: 'warnings-body-pepper-0123', RATE_LIMIT_MAX: '1000' }));
  auth = { authorization: `Bearer ${await issueTestKey(app)}` };
});
afterAll(async () => app?.close());

const postJson = (url: string, body: unknown) =>
  app.inject({ method: 'POST', url, headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify(body) });

const template = buildDocx({ body: para('Dear {name}, your order {order} ships {date}.') });
const signer = { email: 'ada@example.com', name: 'Ada Lovelace' };
const auditTrail = [{ type: 'submit', timestamp: '2025-05-01T10:02:00Z' }];

describe('warnings in JSON bodies', () => {
  it('annotate without strict: 200 with each unfilled tag as TAG_EMPTY naming the tag, and the header says the same', async () => {
    const res = await postJson('/v1/annotate', { document: { base64: template.toString('base64') }, fields: [{ id: 'name', type: 'text', value: 'Ada' }] });
    expect(res.statusCode, res.body).toBe(200);
    const { warnings } = res.json() as { warnings: { code: string; message: string; field?: string }[] };
    expect(validWarnings(warnings), JSON.stringify(validWarnings.errors)).toBe(true);
    expect(warnings).toEqual([
      { code: 'TAG_EMPTY', message: 'Tag {order} had no value and was left empty.', field: 'order' },
      { code: 'TAG_EMPTY', message: 'Tag {date} had no value and was left empty.', field: 'date' },
    ]);
    expect(headerWarnings(res.headers['x-docproc-warnings'])).toEqual(warnings.map((w) => w.message));
  });

  it('a JSON answer without warnings has an empty list (clients need not test for absence)', async () => {
    const res = await postJson('/v1/annotate', { document: { base64: template.toString('base64') }, fields: [{ id: 'name', type: 'text', value: 'A' }, { id: 'order', type: 'text', value: '1' }, { id: 'date', type: 'text', value: 'today' }] });
    expect(res.json().warnings).toEqual([]);
    expect(res.headers['x-docproc-warnings']).toBeUndefined();
  });

  it('sign (JSON) of an already signed PDF: the signing notes as codes', async () => {
    const first = await postJson('/v1/sign', { document: { base64: readFileSync(`${CORPUS_DIR}/pdf-unsigned/signpdf-w3dummy.pdf`).toString('base64') }, signer, auditTrail });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().warnings).toEqual([]);
    const second = await postJson('/v1/sign', { document: { base64: first.json().document.base64 }, signer, auditTrail });
    expect(second.statusCode, second.body).toBe(200);
    const { warnings } = second.json() as { warnings: { code: string }[] };
    expect(validWarnings(warnings)).toBe(true);
    expect(warnings.map((w) => w.code)).toEqual(expect.arrayContaining(['AUDIT_PAGE_OMITTED', 'AUDIT_RECORD_PLACEMENT']));
  });

  it('verify: the report carries `warnings`, one list of its document and signature notes', async () => {
    const signed = await postJson('/v1/sign', { document: { base64: readFileSync(`${CORPUS_DIR}/pdf-unsigned/signpdf-w3dummy.pdf`).toString('base64') }, signer, auditTrail });
    const res = await postJson('/v1/verify', { document: { base64: signed.json().document.base64 } });
    expect(res.statusCode, res.body).toBe(200);
    const report = res.json() as { warnings: { code: string; field?: string; message: string }[]; document: { warnings: string[] }; signatures: { field: string; warnings: string[] }[] };
    expect(validWarnings(report.warnings)).toBe(true);
    const expected = [
      ...report.document.warnings.map((message) => ({ code: 'DOCUMENT_STRUCTURE', message })),
      ...report.signatures.flatMap((s) => s.warnings.map((message) => ({ code: 'SIGNATURE_NOTE', message, field: s.field }))),
    ];
    expect(report.warnings).toEqual(expected);
  });
});

describe('binary answers keep the header', () => {
  it('convert (multipart, binary): an image not embedded is in X-Docproc-Warnings', async () => {
    const { payload, contentType } = await multipart({ file: { data: Buffer.from('# Hi\n\n![logo](http://192.0.2.1/logo.png)\n'), filename: 'a.md' } });
    const res = await app.inject({ method: 'POST', url: '/v1/convert?to=docx', headers: { ...auth, 'content-type': contentType }, payload });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/wordprocessingml/);
    expect(headerWarnings(res.headers['x-docproc-warnings']).join(' ')).toMatch(/Remote image "http:\/\/192\.0\.2\.1\/logo\.png" was not fetched/);
  });
});
