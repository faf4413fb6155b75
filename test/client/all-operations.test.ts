import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import PizZip from 'pizzip';
import { REGISTER_REPLY } from '../../src/routes/v1/auth.js';
import { compileClient, generateClientTypes, runClient } from '../support/client-types.js';
import { pdfText } from '../support/pdf-text.js';
import { SmtpPeer } from '../support/smtp-peer.js';
import { buildTestApp, uniqueEmail, type TestApp } from '../support/test-app.js';
import { CORPUS_DIR } from '../support/corpus.js';
import { currentCallerP12 } from '../integration/sign/pki.js';

/**
 * A client generated from the committed openapi/openapi.json (openapi-typescript types with
 * binary as Blob + openapi-fetch) compiles under strict tsc and calls EVERY operation of a
 * listening server, multipart bodies included. The program prints what it got; the checks here
 * read the documents with independent tools (pdftotext, pizzip).
 */
const root = path.resolve(import.meta.dirname, '../..');
const corpus = CORPUS_DIR;
const work = path.join(root, 'test/client/.generated/all-operations');
let smtp: SmtpPeer;
let t: TestApp;
let baseUrl: string;
let callerP12: string;
const METRICS_TOKEN = 'metrics-token-for-the-client-test';

const CLIENT_PROGRAM = String.raw`
import { readFileSync } from 'node:fs';
import path from 'node:path';
import createClient from 'openapi-fetch';
import type { paths } from './schema.js';

const [baseUrl, email, corpus, callerP12, metricsToken] = process.argv.slice(2);
const read = (rel: string) => readFileSync(path.join(corpus, rel));
const upload = (rel: string, type: string) => new File([read(rel)], path.basename(rel), { type });
const base64Of = async (blob: Blob) => Buffer.from(await blob.arrayBuffer()).toString('base64');
const fail = (what: string, r: { response: Response; error?: unknown }): never => {
  throw new Error(what + ': HTTP ' + r.response.status + ' ' + JSON.stringify(r.error));
};

/**
 * multipart/form-data from a typed body: Blob members become file parts, strings text parts.
 * (Enum text parts below are written 'true' as const: a widened string would make TypeScript fall
 * back to the generic init type, and parseAs: 'blob' would no longer type data as Blob.)
 */
function formData(body: object): FormData {
  const form = new FormData();
  for (const [name, value] of Object.entries(body as Record<string, string | Blob | undefined>)) {
    if (value !== undefined) form.append(name, value);
  }
  return form;
}

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';
const signer = { email: 'ada@example.com', name: 'Ada Lovelace' };
const auditTrail: paths['/v1/sign']['post']['requestBody']['content']['application/json']['auditTrail'] = [
  { type: 'ready', timestamp: '2025-05-01T10:00:00Z' },
  { type: 'submit', timestamp: '2025-05-01T10:02:00Z' },
];
const out: Record<string, unknown> = {};

// Account: register, then the code from the mail (stdin) for a key.
const client = createClient<paths>({ baseUrl });
const reg = await client.GET('/v1/auth/register', { params: { query: { email } } });
out.register = reg.data ?? fail('register', reg);
const code: string = await new Promise((resolve) => process.stdin.once('data', (d) => resolve(String(d).trim())));
const ver = await client.GET('/v1/auth/verify', { params: { query: { email, code } } });
const key: string = ver.data ?? fail('verify email', ver);
out.key = key;
const api = createClient<paths>({ baseUrl, headers: { authorization: 'Bearer ' + key } });

// Health, readiness, metrics, signing key.
const health = await client.GET('/v1/health');
out.health = (health.data ?? fail('health', health)).status;
const ready = await client.GET('/v1/health/ready');
const readiness = ready.data ?? fail('readiness', ready);
out.readiness = { status: readiness.status, checks: Object.fromEntries(Object.entries(readiness.checks).map(([name, c]) => [name, c.status])) };
const signingKey = await api.GET('/v1/verify/key');
const keyInfo = signingKey.data ?? fail('verify/key', signingKey);
out.signingKey = { fingerprint: keyInfo.fingerprint, algorithm: keyInfo.algorithm, chain: keyInfo.chain.length };

// Convert in every direction, multipart bodies serialized to FormData.
type ConvertQuery = NonNullable<paths['/v1/convert']['post']['parameters']['query']>;
async function convert(file: File, query: ConvertQuery, reference?: File) {
  const r = await api.POST('/v1/convert', { params: { query }, body: { file, reference }, bodySerializer: formData, parseAs: 'blob' });
  const data = r.data ?? fail('convert ' + file.name + ' ' + JSON.stringify(query), r);
  return { contentType: r.response.headers.get('content-type'), base64: await base64Of(data) };
}
out.convert = {
  docxToPdf: await convert(upload('docx/pandoc-tables.docx', DOCX), { to: 'pdf', trackedChanges: 'accept' }),
  mdToDocx: await convert(upload('md/pandoc-planets.md', 'text/markdown'), { from: 'md', to: 'docx' }),
  mdToDocxWithReference: await convert(upload('md/remark-gfm-table.md', 'text/markdown'), { to: 'docx' }, upload('docx/pandoc-tables.docx', DOCX)),
  mdToPdf: await convert(upload('md/remark-gfm-table.md', 'text/markdown'), { from: 'md', to: 'pdf' }),
  htmlToDocx: await convert(upload('html/email-inlined.html', 'text/html'), { from: 'html', to: 'docx' }),
  htmlToPdf: await convert(upload('html/html-to-docx-test_browser.html', 'text/html'), { to: 'pdf' }),
};

// Annotate: JSON (DocumentResult back) and multipart (the file back, here as PDF).
const template = 'templates/docxtemplater-tag-example.docx';
const annotateJson = await api.POST('/v1/annotate', {
  body: {
    document: { base64: read(template).toString('base64') },
    fields: [
      { id: 'first_name', type: 'text', value: 'Ada' },
      { id: 'last_name', type: 'text', value: 'Lovelace' },
      { id: 'phone', type: 'text', value: '+44 20 7946 0000' },
      { id: 'description', type: 'text', value: 'Analytical Engine programmer' },
    ],
  },
});
const annotated = annotateJson.data ?? fail('annotate JSON', annotateJson);
if (!('document' in annotated)) throw new Error('annotate JSON answered a file, not DocumentResult');
out.annotateJson = annotated.document;
const annotateForm = await api.POST('/v1/annotate', {
  params: { query: { to: 'pdf' } },
  body: { file: upload(template, DOCX), fields: JSON.stringify([{ id: 'first_name', type: 'text', value: 'Grace' }, { id: 'last_name', type: 'text', value: 'Hopper' }]), ignoreUnknownFields: 'true' as const },
  bodySerializer: formData,
  parseAs: 'blob',
});
out.annotateMultipart = { contentType: annotateForm.response.headers.get('content-type'), base64: await base64Of(annotateForm.data ?? fail('annotate multipart', annotateForm)) };

// Sign: JSON with the service certificate, multipart with the caller's PKCS#12 file part.
const unsigned = 'pdf-unsigned/signpdf-w3dummy.pdf';
const signJson = await api.POST('/v1/sign', {
  body: { document: { base64: read(unsigned).toString('base64') }, signer, auditTrail, eventId: 'client-test', reason: 'Approved' },
});
const signedJson = signJson.data ?? fail('sign JSON', signJson);
if (!('document' in signedJson)) throw new Error('sign JSON answered a file, not DocumentResult');
out.signJson = signedJson.document;
const signForm = await api.POST('/v1/sign', {
  body: {
    file: upload(unsigned, 'application/pdf'),
    p12: new File([readFileSync(callerP12!)], 'caller.p12', { type: 'application/x-pkcs12' }),
    passphrase: 'node-signpdf',
    signer: JSON.stringify(signer),
    auditTrail: JSON.stringify(auditTrail),
    auditCertificate: 'false' as const,
  },
  bodySerializer: formData,
  parseAs: 'blob',
});
const signedForm = signForm.data ?? fail('sign multipart', signForm);
out.signMultipart = { contentType: signForm.response.headers.get('content-type'), base64: await base64Of(signedForm) };

// Verify: JSON (the service-signed PDF) and multipart (the PKCS#12-signed PDF).
const verifyJson = await api.POST('/v1/verify', { body: { document: { base64: signedJson.document.base64 } } });
const reportJson = verifyJson.data ?? fail('verify JSON', verifyJson);
out.verifyJson = { valid: reportJson.valid, format: reportJson.document.format, signer: reportJson.signer?.name ?? null, signatures: reportJson.signatures.length };
const verifyForm = await api.POST('/v1/verify', { body: { file: new File([signedForm], 'signed.pdf', { type: 'application/pdf' }) }, bodySerializer: formData });
const reportForm = verifyForm.data ?? fail('verify multipart', verifyForm);
out.verifyMultipart = { valid: reportForm.valid, signer: reportForm.signer?.name ?? null, intact: reportForm.signatures.map((s) => s.intact) };

// Metrics last, so it has counted the calls above; they need the operators' METRICS_TOKEN, and a
// wrong token gets the Problem shape.
const metrics = await api.GET('/metrics', { parseAs: 'text', headers: { authorization: 'Bearer ' + metricsToken } });
out.metrics = metrics.data ?? fail('metrics', metrics);
const denied = await client.GET('/metrics', { headers: { authorization: 'Bearer dps_wrong' } });
out.deniedCode = denied.error?.code ?? null;

console.log(JSON.stringify(out));
`;

beforeAll(async () => {
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  callerP12 = path.join(work, 'caller.p12');
  writeFileSync(callerP12, currentCallerP12('node-signpdf'));
  smtp = new SmtpPeer();
  const smtpUrl = await smtp.start();
  t = await buildTestApp({
    REDIS_URL: inject('redisUrl'), SMTP_URL: smtpUrl, API_KEY_PEPPER: 'all-operations-pepper-0123', RATE_LIMIT_MAX: '1000',
    OFFICE_ENABLED: 'true', OFFICE_POOL_SIZE: '1', METRICS_TOKEN,
  });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await t?.app.close();
  await smtp?.stop();
  rmSync(work, { recursive: true, force: true });
});

const docxText = (base64: string) => {
  const zip = new PizZip(Buffer.from(base64, 'base64'));
  return zip.file('word/document.xml')!.asText().replace(/<[^>]+>/g, '');
};
const docxParts = (base64: string) => Object.keys(new PizZip(Buffer.from(base64, 'base64')).files).join('\n');
const pdfOf = (base64: string) => {
  const pdf = Buffer.from(base64, 'base64');
  expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
  return pdf;
};

describe('generated client: every operation', () => {
  let result: Record<string, any>;

  it('compiles under strict tsc against the generated types', async () => {
    await generateClientTypes(path.join(root, 'openapi/openapi.json'), path.join(work, 'schema.d.ts'));
    compileClient(work, CLIENT_PROGRAM, ['ES2023', 'DOM']);
  });

  it('runs against a listening server', async () => {
    const email = uniqueEmail('all-ops');
    const run = await runClient(work, [baseUrl, email, corpus, callerP12, METRICS_TOKEN], smtp.codeFor(email, 15_000));
    expect(run.exit, run.stderr).toBe(0);
    result = run.result as Record<string, any>;
  }, 180_000);

  it('account, health, readiness, signing key and metrics', () => {
    expect(result.register).toBe(REGISTER_REPLY);
    expect(result.key).toMatch(/^dps_/);
    expect(result.health).toBe('healthy');
    expect(result.readiness.status).toBe('ready');
    expect(Object.values(result.readiness.checks).every((s) => s === 'up')).toBe(true);
    expect(result.signingKey.fingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/i);
    expect(result.signingKey.chain).toBeGreaterThan(0);
    expect(result.metrics).toMatch(/docproc_http_requests_total\{[^}]*route="\/v1\/convert"/);
    expect(result.deniedCode).toBe('AUTHENTICATION_ERROR');
  });

  it('convert: docx→pdf, md→docx (with and without reference), md→pdf, html→docx, html→pdf', () => {
    const c = result.convert;
    expect(c.docxToPdf.contentType).toBe('application/pdf');
    expect(pdfText(pdfOf(c.docxToPdf.base64))).toMatch(/Lebron James[\s\S]*Russell Wilson/);
    expect(c.mdToDocx.contentType).toMatch(/wordprocessingml/);
    expect(docxText(c.mdToDocx.base64)).toMatch(/Mercury[\s\S]*Neptune/);
    expect(docxParts(c.mdToDocxWithReference.base64)).toContain('word/styles.xml');
    expect(docxText(c.mdToDocxWithReference.base64)).toMatch(/a[\s\S]*b[\s\S]*e[\s\S]*f/);
    expect(pdfText(pdfOf(c.mdToPdf.base64), true)).toMatch(/g\s+h\s+i\s+j/);
    expect(docxText(c.htmlToDocx.base64)).toContain('Hi there');
    expect(pdfText(pdfOf(c.htmlToPdf.base64))).toContain('HTML to DOCX Browser Test');
  });

  it('annotate: JSON answers a DocumentResult, multipart the file (to=pdf)', () => {
    expect(result.annotateJson.contentType).toMatch(/wordprocessingml/);
    const docx = new PizZip(Buffer.from(result.annotateJson.base64, 'base64'));
    expect(docx.file('word/document.xml')!.asText().replace(/<[^>]+>/g, '')).toMatch(/Lovelace[\s\S]*Ada/);
    expect(docx.file('word/header1.xml')!.asText().replace(/<[^>]+>/g, '')).toContain('Analytical Engine programmer');
    expect(result.annotateMultipart.contentType).toBe('application/pdf');
    expect(pdfText(pdfOf(result.annotateMultipart.base64))).toMatch(/Hopper[\s\S]*Grace/);
  });

  it('sign and verify: JSON with the service key, multipart with a PKCS#12 part', () => {
    expect(result.signJson.contentType).toBe('application/pdf');
    expect(pdfOf(result.signJson.base64).toString('latin1')).toContain('/ByteRange');
    expect(result.verifyJson).toEqual({ valid: true, format: 'pdf', signer: expect.any(String), signatures: 1 });
    expect(result.signMultipart.contentType).toBe('application/pdf');
    pdfOf(result.signMultipart.base64);
    // The PKCS#12 is self-signed (not a trusted root): intact and by CN=SignPdf caller, but not valid.
    expect(result.verifyMultipart.signer).toBe('SignPdf caller');
    expect(result.verifyMultipart.intact).toEqual([true]);
    expect(result.verifyMultipart.valid).toBe(false);
  });
});

describe('OpenAPI request examples', () => {
  it('succeed as sent (annotate, sign, verify JSON examples)', async () => {
    const doc = JSON.parse(readFileSync(path.join(root, 'openapi/openapi.json'), 'utf8'));
    const { issueTestKey } = await import('../support/api-key.js');
    const key = await issueTestKey(t.app);
    for (const route of ['/v1/annotate', '/v1/sign', '/v1/verify']) {
      const example = doc.paths[route].post.requestBody.content['application/json'].example;
      expect(example, route).toBeDefined();
      const res = await fetch(`${baseUrl}${route}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(example) });
      expect(res.status, `${route}: ${await res.clone().text()}`).toBe(200);
      const body = (await res.json()) as { document?: { base64: string }; valid?: boolean };
      if (route === '/v1/verify') expect(body.valid).toBe(false);
      else expect(Buffer.from(body.document!.base64, 'base64').length).toBeGreaterThan(500);
    }
  });
});
