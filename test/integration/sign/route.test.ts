import { execFileSync } from 'node:child_process';
import { createHash, X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateApiKey, hashApiKey } from '../../../src/accounts/api-keys.js';
import type { Services } from '../../../src/services.js';
import { multipartBody, type FormPart } from '../../support/annotate/multipart.js';
import { buildTestApp, type TestApp } from '../../support/test-app.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { currentCallerP12 } from './pki.js';

const corpus = (p: string) => readFileSync(path.join(`${CORPUS_DIR}`, p));
const PDF = corpus('pdf-unsigned/signpdf-w3dummy.pdf');
const DOCX = corpus('docx-signed/eid-hello-world-unsigned.docx');
const P12 = currentCallerP12('node-signpdf');
const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

const PEPPER = 'sign-route-pepper-0123456789abcdef';
let testApp: TestApp;
let app: FastifyInstance;
let key: string;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'docproc-sign-route-'));
  const pepper = PEPPER;
  testApp = await buildTestApp({ REDIS_URL: inject('redisUrl'), API_KEY_PEPPER: pepper, RATE_LIMIT_MAX: '1000', DATA_DIR: path.join(dir, 'data') });
  app = testApp.app;
  key = generateApiKey();
  const services = (app as unknown as { services: Services }).services;
  await services.store.putApiKey(hashApiKey(key, pepper), { email: 'sign-route@example.com', createdAt: new Date().toISOString() });
});

afterAll(async () => {
  await app?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const auth = () => ({ authorization: `Bearer ${key}` });

/** The sign request exactly as a SuperDoc client sends it. */
const superDocBody = (document: Buffer, extra: Record<string, unknown> = {}) => ({
  document: { base64: document.toString('base64') },
  signer: { name: 'Jane Q. Signer', email: 'jane@example.com', ip: '203.0.113.7', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0' },
  auditTrail: [
    { type: 'ready', timestamp: '2025-03-01T09:00:00.000Z' },
    { type: 'scroll', timestamp: '2025-03-01T09:00:10.000Z', data: { percent: 100 } },
    { type: 'field_change', timestamp: '2025-03-01T09:00:30.000Z', data: { fieldId: 'company', value: 'ACME Ltd' } },
    { type: 'submit', timestamp: '2025-03-01T09:01:00.000Z' },
  ],
  eventId: 'evt-route-1',
  certificate: { enabled: true },
  metadata: { contractId: 'C-42' },
  ...extra,
});

const postJson = (body: unknown, headers: Record<string, string> = {}, query = '') =>
  app.inject({ method: 'POST', url: `/v1/sign${query}`, headers: { ...auth(), 'content-type': 'application/json', ...headers }, payload: JSON.stringify(body) });

const postMultipart = (parts: FormPart[], query = '') => {
  const { payload, headers } = multipartBody(parts);
  return app.inject({ method: 'POST', url: `/v1/sign${query}`, headers: { ...auth(), ...headers }, payload });
};

const formFields = (extra: FormPart[] = []): FormPart[] => {
  const body = superDocBody(PDF);
  return [
    { name: 'file', value: PDF, filename: 'contract.pdf', contentType: 'application/pdf' },
    { name: 'signer', value: JSON.stringify(body.signer) },
    { name: 'auditTrail', value: JSON.stringify(body.auditTrail) },
    { name: 'eventId', value: 'evt-multipart' },
    ...extra,
  ];
};

function expectProblem(res: { statusCode: number; body: string; headers: Record<string, unknown>; json: () => any }, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(String(res.headers['content-type'])).toMatch(/^application\/problem\+json/);
  expect(res.json()).toMatchObject({ status, code });
  return res.json();
}

function pdfsig(pdf: Buffer): { valid: boolean; total: boolean; count: number; raw: string } {
  const file = path.join(dir, `check-${process.hrtime.bigint()}.pdf`);
  writeFileSync(file, pdf);
  let out = '';
  try {
    out = execFileSync('pdfsig', [file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    out = String((err as { stdout?: string }).stdout ?? '');
  } finally {
    rmSync(file, { force: true });
  }
  const last = out.split(/^Signature #\d+:$/m).slice(1).pop() ?? '';
  return { valid: last.includes('Signature is Valid.'), total: last.includes('Total document signed'), count: (out.match(/^Signature #\d+:$/gm) ?? []).length, raw: out };
}

function pdfText(pdf: Buffer): string {
  const file = path.join(dir, `text-${process.hrtime.bigint()}.pdf`);
  writeFileSync(file, pdf);
  try {
    return execFileSync('pdftotext', ['-layout', file, '-'], { encoding: 'utf8' });
  } finally {
    rmSync(file, { force: true });
  }
}

async function verify(document: Buffer) {
  const res = await app.inject({ method: 'POST', url: '/v1/verify', headers: { ...auth(), 'content-type': 'application/json' }, payload: JSON.stringify({ document: { base64: document.toString('base64') } }) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** Certificates in the CMS of the last PDF signature, via openssl (not our parser). */
function cmsCertificates(pdf: Buffer): X509Certificate[] {
  const s = pdf.toString('latin1');
  const [a, b, c] = /\[\s*(\d+)\s+(\d+)\s+(\d+)\s+\d+\s*\]/.exec(s.slice(s.lastIndexOf('/ByteRange [')))!.slice(1).map(Number);
  const der = Buffer.from(s.slice(a + b + 1, c - 1).replace(/(00)+$/, ''), 'hex');
  const file = path.join(dir, `cms-${process.hrtime.bigint()}.der`);
  writeFileSync(file, der);
  try {
    const pems = execFileSync('openssl', ['pkcs7', '-inform', 'DER', '-in', file, '-print_certs'], { encoding: 'utf8' });
    return [...pems.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g)].map((m) => new X509Certificate(m[0]));
  } finally {
    rmSync(file, { force: true });
  }
}

describe('POST /v1/sign (PDF)', () => {
  let signed: Buffer;

  it('SuperDoc JSON → JSON reply with a PAdES-signed PDF carrying the audit page', async () => {
    const res = await postJson(superDocBody(PDF));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const body = res.json();
    expect(body.document.contentType).toBe('application/pdf');
    signed = Buffer.from(body.document.base64, 'base64');
    expect(signed.subarray(0, PDF.length).equals(PDF)).toBe(true);
    expect(pdfsig(signed)).toMatchObject({ valid: true, total: true, count: 1 });
    const text = pdfText(signed);
    expect(text).toContain('Jane Q. Signer');
    expect(text).toContain('evt-route-1');
    const report = await verify(signed);
    expect(report.valid).toBe(true);
    expect(report.signatures).toHaveLength(1);
    expect(report.signatures[0].trusted).toBe(true);
  });

  it('accepts every request SuperDoc’s schema allows: extra signer details are kept and printed, null optional objects are absent, other event types are recorded as given', async () => {
    const body = superDocBody(PDF, {
      signer: { name: 'Jane Q. Signer', email: 'jane@example.com', title: 'Head of Legal', company: 'ACME Ltd', employeeNumber: 4711, verified: true },
      auditTrail: [
        { type: 'ready', timestamp: '2025-03-01T09:00:00.000Z' },
        { type: 'document_opened', timestamp: '2025-03-01T09:00:05.000Z', data: { device: 'tablet' } },
        { type: 'submit', timestamp: '2025-03-01T09:01:00.000Z' },
      ],
      metadata: null,
      certificate: null,
      appearance: null,
      p12: null,
    });
    const res = await postJson(body);
    expect(res.statusCode, res.body).toBe(200);
    const pdf = Buffer.from(res.json().document.base64, 'base64');
    expect(pdfsig(pdf)).toMatchObject({ valid: true, total: true, count: 1 });
    const text = pdfText(pdf);
    for (const printed of ['Title', 'Head of Legal', 'Company', 'ACME Ltd', 'Employee number', '4711', 'document_opened']) expect(text).toContain(printed);
    // certificate: null is absent, so the audit page is there (its default).
    expect(text).toContain('Electronic signature audit trail');
    // Wrong shapes are still refused, naming the field.
    const numeric = await postJson(superDocBody(PDF, { auditTrail: [{ type: 'submit', timestamp: 1735689600 }] }));
    expect(numeric.statusCode).toBe(400);
    expect(JSON.stringify(numeric.json().details)).toContain('auditTrail');
    const nested = await postJson(superDocBody(PDF, { signer: { name: 'Jane Q. Signer', email: 'jane@example.com', address: { city: 'Ghent' } } }));
    expect(nested.statusCode).toBe(400);
    // signer and auditTrail stay required to sign (only an `extend` request goes without them).
    const { signer: _signer, auditTrail: _trail, ...bare } = superDocBody(PDF, {}) as Record<string, unknown>;
    const missing = await postJson(bare);
    expect(missing.statusCode, missing.body).toBe(400);
    expect(missing.json().details.map((d: { field: string }) => d.field)).toEqual(['body.signer', 'body.auditTrail']);
    // An empty certificate object takes its default (enabled), as SuperDoc's schema gives it.
    const empty = await postJson(superDocBody(PDF, { certificate: {} }));
    expect(empty.statusCode, empty.body).toBe(200);
    expect(pdfText(Buffer.from(empty.json().document.base64, 'base64'))).toContain('Electronic signature audit trail');
  });

  it('GET /v1/verify/key returns the certificate that signed it', async () => {
    const res = await app.inject({ method: 'GET', url: '/v1/verify/key', headers: auth() });
    expect(res.statusCode).toBe(200);
    const described = res.json();
    const leaf = new X509Certificate(described.chain[0]);
    expect(leaf.fingerprint256).toBe(described.fingerprint);
    expect(described.publicKey).toBe(leaf.publicKey.export({ type: 'spki', format: 'pem' }).toString());
    expect(described.version).toBe(described.fingerprint.replace(/:/g, '').slice(0, 16).toLowerCase());
    const inCms = cmsCertificates(signed).map((c) => c.fingerprint256);
    expect(inCms).toContain(described.fingerprint);
    const report = await verify(signed);
    expect(report.signatures[0].signer.serialNumber).toBe(leaf.serialNumber.toLowerCase());
  });

  it('Accept: application/pdf → the binary PDF', async () => {
    const res = await postJson(superDocBody(PDF, { certificate: { enabled: false } }), { accept: 'application/pdf' });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(String(res.headers['content-disposition'])).toContain('attachment');
    expect(pdfsig(res.rawPayload)).toMatchObject({ valid: true, total: true });
  });

  it('multipart: file + JSON-string fields → the signed PDF', async () => {
    const res = await postMultipart(formFields([{ name: 'certificate', value: '{"enabled":true}' }, { name: 'reason', value: 'Approved by form' }]));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(String(res.headers['content-disposition'])).toContain('contract.pdf');
    expect(pdfsig(res.rawPayload)).toMatchObject({ valid: true, total: true });
    const text = pdfText(res.rawPayload);
    expect(text).toContain('evt-multipart');
    expect(text).toContain('Approved by form');
  });

  it('multipart certificate TEXT part {"enabled":false} → no audit page', async () => {
    const withPage = await postMultipart(formFields([{ name: 'certificate', value: '{"enabled":true}' }]));
    const without = await postMultipart(formFields([{ name: 'certificate', value: '{"enabled":false}' }]));
    expect(without.statusCode, without.body).toBe(200);
    const pages = (pdf: Buffer) => (pdfText(pdf).match(/\f/g) ?? []).length;
    expect(pages(without.rawPayload)).toBe(pages(PDF));
    expect(pages(withPage.rawPayload)).toBeGreaterThan(pages(PDF));
    expect(pdfText(without.rawPayload)).not.toContain('evt-multipart');
  });

  it("multipart with the caller's PKCS#12 as a certificate FILE part + passphrase, audit page set by auditCertificate", async () => {
    const res = await postMultipart(formFields([
      { name: 'certificate', value: P12, filename: 'signer.p12', contentType: 'application/x-pkcs12' },
      { name: 'passphrase', value: 'node-signpdf' },
      { name: 'auditCertificate', value: 'false' },
    ]));
    expect(res.statusCode, res.body).toBe(200);
    const sig = pdfsig(res.rawPayload);
    expect(sig).toMatchObject({ valid: true, total: true });
    expect(sig.raw).toContain('SignPdf');
    expect((pdfText(res.rawPayload).match(/\f/g) ?? []).length).toBe((pdfText(PDF).match(/\f/g) ?? []).length);
    const report = await verify(res.rawPayload);
    expect(report.signatures[0].signer.commonName).toBe('SignPdf caller');
    expect(report.signatures[0].trusted).toBe(false);
  });

  it('a wrong PKCS#12 passphrase → 422 INVALID_CERTIFICATE', async () => {
    const res = await postMultipart(formFields([
      { name: 'certificate', value: P12, filename: 'signer.p12' },
      { name: 'passphrase', value: 'wrong' },
    ]));
    expectProblem(res, 422, 'INVALID_CERTIFICATE');
    const json = await postJson(superDocBody(PDF, { p12: { base64: P12.toString('base64'), passphrase: 'wrong' } }));
    expectProblem(json, 422, 'INVALID_CERTIFICATE');
  });
});

describe('POST /v1/sign errors', () => {
  it('no submit event → 400', async () => {
    const body = superDocBody(PDF, { auditTrail: [{ type: 'ready', timestamp: '2025-03-01T09:00:00Z' }] });
    expectProblem(await postJson(body), 400, 'VALIDATION_ERROR');
    expectProblem(await postMultipart(formFields().map((p) => (p.name === 'auditTrail' ? { ...p, value: JSON.stringify(body.auditTrail) } : p))), 400, 'VALIDATION_ERROR');
  });

  it('signer: extra text details are accepted (JSON and multipart), a nested one or a name of 1 character → 400', async () => {
    expectProblem(await postJson(superDocBody(PDF, { signer: { name: 'J', email: 'jane@example.com' } })), 400, 'VALIDATION_ERROR');
    expectProblem(await postJson(superDocBody(PDF, { signer: { name: 'Jane', email: 'jane@example.com', role: { admin: true } } })), 400, 'VALIDATION_ERROR');
    const multipartExtra = formFields().map((p) => (p.name === 'signer' ? { ...p, value: JSON.stringify({ name: 'Jane', email: 'jane@example.com', role: 'Approver' }) } : p));
    const res = await postMultipart(multipartExtra);
    expect(res.statusCode, res.body).toBe(200);
    expect(pdfText(res.rawPayload)).toContain('Approver');
  });

  it('not a PDF or DOCX → 400 naming the two (SuperDoc’s contract has no 415 here)', async () => {
    expect(expectProblem(await postJson(superDocBody(Buffer.from('just some text, not a document'))), 400, 'INVALID_FILE_FORMAT').acceptedFormats).toEqual(['pdf', 'docx']);
    expectProblem(await postJson(superDocBody(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]))), 400, 'INVALID_FILE_FORMAT');
  });

  it('an encrypted PDF → 422', async () => {
    const plain = path.join(dir, 'plain.pdf');
    const encrypted = path.join(dir, 'encrypted.pdf');
    writeFileSync(plain, PDF);
    execFileSync('qpdf', ['--encrypt', 'user-pw', 'owner-pw', '256', '--', plain, encrypted]);
    const res = await postJson(superDocBody(readFileSync(encrypted)));
    rmSync(plain);
    rmSync(encrypted);
    expect(expectProblem(res, 422, 'ENCRYPTED_DOCUMENT').detail).toMatch(/password|encrypt/i);
  });

  it('to=docx with a PDF → 400', async () => {
    expectProblem(await postJson(superDocBody(PDF), {}, '?to=docx'), 400, 'INVALID_FILE_FORMAT');
  });

  it('without an API key → 401', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/sign', headers: { 'content-type': 'application/json' }, payload: JSON.stringify(superDocBody(PDF)) });
    expectProblem(res, 401, 'AUTHENTICATION_ERROR');
  });
});

describe('POST /v1/sign (DOCX)', () => {
  it('to=docx keeps the DOCX and adds an OOXML package signature with the audit part', async () => {
    const res = await postJson(superDocBody(DOCX), {}, '?to=docx');
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.document.contentType).toBe(DOCX_TYPE);
    const docx = Buffer.from(body.document.base64, 'base64');
    const PizZip = (await import('pizzip')).default;
    const zip = new PizZip(docx);
    expect(zip.file('_xmlsignatures/sig1.xml')?.asText()).toContain('<SignatureMethod Algorithm="http://www.w3.org/2001/04/xmldsig-more#rsa-sha256">');
    const audit = JSON.parse(zip.file('docproc/audit-trail.json')!.asText());
    expect(audit).toMatchObject({ eventId: 'evt-route-1', signer: { email: 'jane@example.com' }, metadata: { contractId: 'C-42' } });
    expect(decodeURIComponent(String(res.headers['x-docproc-warnings']))).toContain('no audit page');
    const report = await verify(docx);
    expect(report.valid, report.reason).toBe(true);
    expect(report.signatures).toHaveLength(1);
    expect(report.signatures[0]).toMatchObject({ intact: true, cryptoValid: true, trusted: true, xades: true });
    expect(report.document.uncoveredParts).toEqual(['/docProps/app.xml', '/docProps/core.xml']);
  });

  it('multipart to=docx → the binary DOCX', async () => {
    const parts = formFields().map((p) => (p.name === 'file' ? { ...p, value: DOCX, filename: 'contract.docx', contentType: DOCX_TYPE } : p));
    const res = await postMultipart(parts, '?to=docx');
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe(DOCX_TYPE);
    expect(String(res.headers['content-disposition'])).toContain('contract.docx');
  });

  it('DOCX with to=pdf needs the office renderer: 503 while it is disabled', async () => {
    expectProblem(await postJson(superDocBody(DOCX)), 503, 'SERVICE_BUSY');
  });

  it('DOCX with to=pdf on the office pool: rendered, audit page added, PAdES-signed; the audit names the DOCX as received', async () => {
    const office = await buildTestApp({
      REDIS_URL: inject('redisUrl'), API_KEY_PEPPER: PEPPER, RATE_LIMIT_MAX: '1000', DATA_DIR: path.join(dir, 'data'), OFFICE_ENABLED: 'true', OFFICE_POOL_SIZE: '1',
    });
    try {
      const word = corpus('docx/superdoc-advanced-text.docx');
      const res = await office.app.inject({
        method: 'POST', url: '/v1/sign', headers: { ...auth(), 'content-type': 'application/json', accept: 'application/pdf' },
        payload: JSON.stringify(superDocBody(word)),
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['content-type']).toBe('application/pdf');
      const pdf = res.rawPayload;
      expect(pdfsig(pdf)).toMatchObject({ valid: true, total: true, count: 1 });
      const text = pdfText(pdf);
      expect(text).toContain('SuperDoc Advanced Text Formatting');
      expect(text).toContain('evt-route-1');
      const report = await verify(pdf);
      expect(report.valid, report.reason).toBe(true);

      const out = path.join(dir, 'detached');
      execFileSync('mkdir', ['-p', out]);
      const saved = path.join(out, 'audit-trail.json');
      writeFileSync(path.join(dir, 'rendered.pdf'), pdf);
      execFileSync('pdfdetach', ['-savefile', 'audit-trail.json', '-o', saved, path.join(dir, 'rendered.pdf')]);
      const audit = JSON.parse(readFileSync(saved, 'utf8'));
      expect(audit.document.sha256).toBe(createHash('sha256').update(word).digest('hex'));
      expect(audit.signer.email).toBe('jane@example.com');
    } finally {
      await office.app.close();
    }
  }, 120_000);
});
