import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import PizZip from 'pizzip';
import { issueTestKey } from '../support/api-key.js';
import { compileClient, generateClientTypes, runClient } from '../support/client-types.js';
import { buildTestApp, type TestApp } from '../support/test-app.js';
import { CORPUS_DIR } from '../support/corpus.js';
import { currentCallerP12 } from '../integration/sign/pki.js';

/**
 * Clients from the two most used generators, made here from the committed openapi/openapi.json the
 * way a platform team makes them — openapi-typescript + openapi-fetch, and @hey-api/openapi-ts with
 * its fetch client — compile under strict tsc and call convert, annotate (JSON and multipart), sign
 * (JSON, and multipart with the caller's PKCS#12) and verify (JSON and multipart) on a listening
 * app. Their error types are the operation's codes (a union, not `string`), checked at compile time,
 * and a wrong request answers a typed error at run time. @hey-api keeps one body per operation (the
 * JSON one), so it reaches the multipart forms through the `<path>/multipart` operations.
 */
const root = path.resolve(import.meta.dirname, '../..');
const work = path.join(root, 'test/client/.generated/two-generators');
const bin = (name: string) => path.join(root, 'node_modules/.bin', name);
let t: TestApp;
let baseUrl: string;
let key: string;
let callerP12: string;

const SHARED = String.raw`
import { readFileSync } from 'node:fs';
import path from 'node:path';
export const [baseUrl, key, corpus, callerP12] = process.argv.slice(2) as [string, string, string, string];
export const read = (rel: string) => readFileSync(path.join(corpus, rel));
export const upload = (rel: string, type: string) => new File([read(rel)], path.basename(rel), { type });
export const base64Of = async (blob: Blob) => Buffer.from(await blob.arrayBuffer()).toString('base64');
export const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
export const signer = { email: 'ada@example.com', name: 'Ada Lovelace' };
export const auditTrail = [{ type: 'ready', timestamp: '2025-05-01T10:00:00Z' }, { type: 'submit', timestamp: '2025-05-01T10:02:00Z' }];
export const template = 'templates/docxtemplater-tag-example.docx';
export const unsigned = 'pdf-unsigned/signpdf-w3dummy.pdf';
export const fields = [{ id: 'first_name', type: 'text' as const, value: 'Ada' }];
export const fail = (what: string, error: unknown): never => { throw new Error(what + ': ' + JSON.stringify(error)); };
/** Compiles only when T is a union of literal codes, not plain string. */
export type Narrow<T> = string extends T ? never : T;
`;

const OPENAPI_FETCH_PROGRAM = String.raw`
import createClient from 'openapi-fetch';
import type { paths } from './schema.js';
import { auditTrail, base64Of, callerP12, DOCX, fail, fields, key, read, signer, template, unsigned, upload, baseUrl, type Narrow } from './shared.js';
import { readFileSync } from 'node:fs';

const api = createClient<paths>({ baseUrl, headers: { authorization: 'Bearer ' + key } });
function formData(body: object): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(body as Record<string, string | Blob | undefined>)) if (value !== undefined) form.append(name, value);
  return form;
}
const out: Record<string, unknown> = {};

const converted = await api.POST('/v1/convert', { params: { query: { from: 'md', to: 'docx' } }, body: { file: upload('md/pandoc-planets.md', 'text/markdown') }, bodySerializer: formData, parseAs: 'blob' });
out.convert = await base64Of(converted.data ?? fail('convert', converted.error));

const annotatedJson = await api.POST('/v1/annotate', { body: { document: { base64: read(template).toString('base64') }, fields } });
const annotated = annotatedJson.data ?? fail('annotate JSON', annotatedJson.error);
if (!('document' in annotated)) throw new Error('annotate JSON answered a file');
out.annotateJson = { base64: annotated.document.base64, warnings: annotated.warnings.map((w) => w.code) };
const annotatedForm = await api.POST('/v1/annotate', { body: { file: upload(template, DOCX), fields: JSON.stringify(fields) }, bodySerializer: formData, parseAs: 'blob' });
out.annotateMultipart = await base64Of(annotatedForm.data ?? fail('annotate multipart', annotatedForm.error));

const signedJson = await api.POST('/v1/sign', { body: { document: { base64: read(unsigned).toString('base64') }, signer, auditTrail } });
const signed = signedJson.data ?? fail('sign JSON', signedJson.error);
if (!('document' in signed)) throw new Error('sign JSON answered a file');
const signedForm = await api.POST('/v1/sign', {
  body: { file: upload(unsigned, 'application/pdf'), p12: new File([readFileSync(callerP12)], 'caller.p12'), passphrase: 'two-generators', signer: JSON.stringify(signer), auditTrail: JSON.stringify(auditTrail) },
  bodySerializer: formData, parseAs: 'blob',
});
const signedBlob = signedForm.data ?? fail('sign multipart', signedForm.error);

const verifiedJson = await api.POST('/v1/verify', { body: { document: { base64: signed.document.base64 } } });
const reportJson = verifiedJson.data ?? fail('verify JSON', verifiedJson.error);
const verifiedForm = await api.POST('/v1/verify', { body: { file: new File([signedBlob], 'signed.pdf') }, bodySerializer: formData });
const reportForm = verifiedForm.data ?? fail('verify multipart', verifiedForm.error);
out.verify = { json: { valid: reportJson.valid, signatures: reportJson.signatures.length }, multipart: { signer: reportForm.signer?.name ?? null, intact: reportForm.signatures.map((s) => s.intact) } };

// Typed errors: the error's code is the operation's codes, not string.
const wrongPassphrase = await api.POST('/v1/sign', {
  body: { file: upload(unsigned, 'application/pdf'), p12: new File([readFileSync(callerP12)], 'caller.p12'), passphrase: 'wrong', signer: JSON.stringify(signer), auditTrail: JSON.stringify(auditTrail) },
  bodySerializer: formData, parseAs: 'blob',
});
const signCode: Narrow<NonNullable<typeof wrongPassphrase.error>['code']> | undefined = wrongPassphrase.error?.code;
const notPdf = await api.POST('/v1/verify', { body: { document: { base64: Buffer.from('not a document').toString('base64') } } });
const verifyCode: Narrow<NonNullable<typeof notPdf.error>['code']> | undefined = notPdf.error?.code;
out.errors = { sign: [wrongPassphrase.response.status, signCode], verify: [notPdf.response.status, verifyCode] };
console.log(JSON.stringify(out));
`;

const HEY_API_PROGRAM = String.raw`
import { client } from './hey/client.gen.js';
import { annotate, annotateMultipart, convertMultipart, sign, signMultipart, verify, verifyMultipart } from './hey/sdk.gen.js';
import { auditTrail, base64Of, baseUrl, callerP12, DOCX, fail, fields, key, read, signer, template, unsigned, upload, type Narrow } from './shared.js';
import { readFileSync } from 'node:fs';

client.setConfig({ baseUrl, auth: key });
const out: Record<string, unknown> = {};

const converted = await convertMultipart({ query: { from: 'md', to: 'docx' }, body: { file: upload('md/pandoc-planets.md', 'text/markdown') }, parseAs: 'blob' });
out.convert = await base64Of((converted.data as Blob | undefined) ?? fail('convert', converted.error));

const annotatedJson = await annotate({ body: { document: { base64: read(template).toString('base64') }, fields } });
const annotated = annotatedJson.data ?? fail('annotate JSON', annotatedJson.error);
if (annotated instanceof Blob) throw new Error('annotate JSON answered a file');
out.annotateJson = { base64: annotated.document.base64, warnings: annotated.warnings.map((w) => w.code) };
const annotatedForm = await annotateMultipart({ body: { file: upload(template, DOCX), fields: JSON.stringify(fields) }, parseAs: 'blob' });
out.annotateMultipart = await base64Of((annotatedForm.data as Blob | undefined) ?? fail('annotate multipart', annotatedForm.error));

const signedJson = await sign({ body: { document: { base64: read(unsigned).toString('base64') }, signer, auditTrail } });
const signed = signedJson.data ?? fail('sign JSON', signedJson.error);
if (signed instanceof Blob) throw new Error('sign JSON answered a file');
const signedForm = await signMultipart({
  body: { file: upload(unsigned, 'application/pdf'), p12: new File([readFileSync(callerP12)], 'caller.p12'), passphrase: 'two-generators', signer: JSON.stringify(signer), auditTrail: JSON.stringify(auditTrail) },
  parseAs: 'blob',
});
const signedBlob = (signedForm.data as Blob | undefined) ?? fail('sign multipart', signedForm.error);

const verifiedJson = await verify({ body: { document: { base64: signed.document.base64 } } });
const reportJson = verifiedJson.data ?? fail('verify JSON', verifiedJson.error);
const verifiedForm = await verifyMultipart({ body: { file: new File([signedBlob], 'signed.pdf') } });
const reportForm = verifiedForm.data ?? fail('verify multipart', verifiedForm.error);
out.verify = { json: { valid: reportJson.valid, signatures: reportJson.signatures.length }, multipart: { signer: reportForm.signer?.name ?? null, intact: reportForm.signatures.map((s) => s.intact) } };

const wrongPassphrase = await signMultipart({
  body: { file: upload(unsigned, 'application/pdf'), p12: new File([readFileSync(callerP12)], 'caller.p12'), passphrase: 'wrong', signer: JSON.stringify(signer), auditTrail: JSON.stringify(auditTrail) },
});
const signCode: Narrow<NonNullable<typeof wrongPassphrase.error>['code']> | undefined = wrongPassphrase.error?.code;
const notPdf = await verify({ body: { document: { base64: Buffer.from('not a document').toString('base64') } } });
const verifyCode: Narrow<NonNullable<typeof notPdf.error>['code']> | undefined = notPdf.error?.code;
out.errors = { sign: [wrongPassphrase.response.status, signCode], verify: [notPdf.response.status, verifyCode] };
console.log(JSON.stringify(out));
`;

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  callerP12 = path.join(work, 'caller.p12');
  writeFileSync(callerP12, currentCallerP12('two-generators'));
  t = await buildTestApp({ REDIS_URL: inject('redisUrl'), API_KEY_PEPPER: 'two-generators-pepper-0123', RATE_LIMIT_MAX: '1000' });
  key = await issueTestKey(t.app);
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await t?.app.close();
  rmSync(work, { recursive: true, force: true });
});

const docxText = (base64: string) => new PizZip(Buffer.from(base64, 'base64')).file('word/document.xml')!.asText().replace(/<[^>]+>/g, '');

function expectSameResults(result: Record<string, any>) {
  expect(docxText(result.convert)).toMatch(/Mercury[\s\S]*Neptune/);
  expect(docxText(result.annotateJson.base64)).toContain('Ada');
  expect(result.annotateJson.warnings).toContain('TAG_EMPTY');
  expect(docxText(result.annotateMultipart)).toContain('Ada');
  expect(result.verify.json).toEqual({ valid: true, signatures: 1 });
  // The caller's PKCS#12 is self-signed: its signature is intact, by its own name, and not trusted.
  expect(result.verify.multipart).toEqual({ signer: 'SignPdf caller', intact: [true] });
  expect(result.errors.sign).toEqual([422, 'INVALID_CERTIFICATE']);
  expect(result.errors.verify).toEqual([400, 'INVALID_FILE_FORMAT']);
}

describe('clients generated by the two most used generators', () => {
  it('openapi-typescript + openapi-fetch: compiles (codes typed) and calls every form', async () => {
    const dir = path.join(work, 'openapi-fetch');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'shared.ts'), SHARED);
    await generateClientTypes(path.join(root, 'openapi/openapi.json'), path.join(dir, 'schema.d.ts'));
    compileClient(dir, OPENAPI_FETCH_PROGRAM, ['ES2023', 'DOM']);
    const run = await runClient(dir, [baseUrl, key, CORPUS_DIR, callerP12], Promise.resolve(''));
    expect(run.exit, run.stderr).toBe(0);
    expectSameResults(run.result as Record<string, any>);
  }, 240_000);

  it('@hey-api/openapi-ts (fetch client): compiles (codes typed) and calls every form, multipart through the /multipart operations', async () => {
    const dir = path.join(work, 'hey-api');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'shared.ts'), SHARED);
    execFileSync(bin('openapi-ts'), ['-i', path.join(root, 'openapi/openapi.json'), '-o', path.join(dir, 'hey'), '-c', '@hey-api/client-fetch'], { stdio: 'pipe' });
    compileClient(dir, HEY_API_PROGRAM, ['ES2023', 'DOM']);
    const run = await runClient(dir, [baseUrl, key, CORPUS_DIR, callerP12], Promise.resolve(''));
    expect(run.exit, run.stderr).toBe(0);
    expectSameResults(run.result as Record<string, any>);
  }, 240_000);
});
