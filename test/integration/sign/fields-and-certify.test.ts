import { execFileSync } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CORPUS_DIR } from '../../support/corpus.js';
import { QpdfReader } from '../../support/pdf-attacks.js';
import { Pyhanko } from '../../support/pyhanko.js';
import { expectSoundSignedUpdate } from '../../support/signed-output.js';
import { buildTestApp } from '../../support/test-app.js';
import { generateApiKey, hashApiKey } from '../../../src/accounts/api-keys.js';
import type { Services } from '../../../src/services.js';
import { multipartBody } from '../../support/annotate/multipart.js';
import { PdfView } from '../../../src/documents/pdf/document.js';
import { PdfRef } from '../../../src/documents/pdf/objects.js';
import { signPdfReport } from '../../../src/documents/sign/sign-pdf.js';
import type { CertifyPermission, SignRequest } from '../../../src/documents/sign/types.js';
import { verifyPdf } from '../../../src/documents/verify/verify-pdf.js';
import { createTestPki, pdfsig, type TestPki } from './pki.js';
import { answering } from '../../support/domain-error.js';

/**
 * Signing into empty signature fields other tools made (@signpdf's unfilled placeholder from the
 * corpus), and certification (DocMDP) signatures. Independent judges: pyHanko (its DocMDP level
 * and the catalog's certification), poppler's pdfsig, qpdf's reading of the catalog, our verify.
 */
const corpus = (p: string) => readFileSync(path.join(CORPUS_DIR, p));
const PLACEHOLDER = corpus('pdf-signed/signpdf-with-placeholder.pdf');
const UNSIGNED = corpus('pdf-unsigned/signpdf-w3dummy.pdf');

const request = (extra: Partial<SignRequest> = {}): SignRequest => ({
  signer: { name: 'Cora Certifier', email: 'cora@example.com' },
  auditTrail: [{ type: 'submit', timestamp: '2025-03-01T09:01:00Z' }],
  reason: 'Approved',
  ...extra,
});

let pki: TestPki;
let pyhanko: Pyhanko;
let qpdf: QpdfReader;

beforeAll(() => {
  pki = createTestPki();
  pyhanko = new Pyhanko();
  qpdf = new QpdfReader();
});
afterAll(() => {
  pyhanko?.close();
  qpdf?.cleanup();
  pki?.cleanup();
});

async function pyhankoReport(pdf: Buffer) {
  const file = path.join(pki.dir, `pyhanko-${process.hrtime.bigint()}.pdf`);
  writeFileSync(file, pdf);
  try {
    return await pyhanko.validate(file);
  } finally {
    rmSync(file, { force: true });
  }
}

const pyhankoValid = (s: { intact?: boolean; valid?: boolean; docmdp_ok?: boolean | null; level?: string | null; error?: string }) =>
  s.intact === true && s.valid === true && s.docmdp_ok !== false && s.level !== 'OTHER' && !s.error;

/** The /P of the catalog's /Perms /DocMDP signature reference, as qpdf reads the newest revision. */
function qpdfDocMdpPermission(pdf: Buffer): number | undefined {
  const objects = qpdf.json(pdf).qpdf[1] as Record<string, { value?: unknown }>;
  const resolve = (v: unknown): any => (typeof v === 'string' && / R$/.test(v) ? objects[`obj:${v}`]?.value : v);
  const trailer = objects.trailer!.value as Record<string, unknown>;
  const catalog = resolve(trailer['/Root']);
  const signature = resolve(resolve(resolve(catalog?.['/Perms'])?.['/DocMDP']));
  const reference = resolve(resolve(signature?.['/Reference'])?.[0]);
  if (resolve(reference?.['/TransformMethod']) !== '/DocMDP') return undefined;
  return resolve(resolve(reference?.['/TransformParams'])?.['/P']);
}

describe('signing into an empty field another tool made (@signpdf placeholder, corpus)', () => {
  it('the corpus file really is an unfilled placeholder: verify lists it as empty, pyHanko cannot read it', async () => {
    expect(verifyPdf(PLACEHOLDER, { trustRoots: [pki.rootPem] })).toMatchObject({ signatures: [], unsignedFields: ['Signature1'] });
    expect((await pyhankoReport(PLACEHOLDER)).signatures).toBeUndefined();
  });

  for (const [label, appearance] of [['without appearance (the placeholder is taken)', undefined], ['with appearance.field', { field: 'Signature1' }]] as const) {
    it(`${label}: one signature in Signature1, under the placeholder's own object number; verify, pdfsig and pyHanko accept it`, async () => {
      const { document: out, warnings } = await signPdfReport(PLACEHOLDER, request({ appearance }), pki.rsa);
      expect(warnings).toEqual([]);
      const view = expectSoundSignedUpdate(PLACEHOLDER, out, qpdf);

      const before = new PdfView(PLACEHOLDER, PLACEHOLDER.length);
      const placeholderRef = before.dict(before.refTo(10))!.get('V') as PdfRef;
      const field = view.dict(view.refTo(10))!;
      expect((field.get('V') as PdfRef).num).toBe(placeholderRef.num);
      expect(view.dict(field.get('V'))!.get('SubFilter')).toMatchObject({ name: 'ETSI.CAdES.detached' });

      const report = verifyPdf(out, { trustRoots: [pki.rootPem] });
      expect(report.unsignedFields).toEqual([]);
      expect(report.signatures.map((s) => [s.field, s.indication])).toEqual([['Signature1', 'TOTAL_PASSED']]);
      expect(report.valid).toBe(true);

      const sigs = pdfsig(pki, out);
      expect(sigs).toHaveLength(1);
      expect(sigs[0]).toMatchObject({ valid: true, total: true, certificateTrusted: true });

      const hanko = await pyhankoReport(out);
      expect(hanko.signatures?.map((s) => [s.field, pyhankoValid(s), s.coverage])).toEqual([['Signature1', true, 'ENTIRE_FILE']]);
    });
  }

  it('a new box (appearance with a rectangle) leaves the placeholder and says so', async () => {
    const { document: out, warnings } = await signPdfReport(PLACEHOLDER, request({ appearance: { page: 1, x: 40, y: 40, width: 200, height: 50 } }), pki.rsa);
    expect(warnings.map((w) => w.message).join(' ')).toMatch(/unfilled signature placeholders \("Signature1"\).*appearance\.field/);
    expect(verifyPdf(out, { trustRoots: [pki.rootPem] }).unsignedFields).toEqual(['Signature1']);
  });
});

describe("signing into an empty visible field pyHanko made, with an image", () => {
  it('the field keeps its box; its appearance draws the image (pdfimages); verify, pdfsig and pyHanko accept it', async () => {
    const input = path.join(pki.dir, 'pyhanko-field-in.pdf');
    const withField = path.join(pki.dir, 'pyhanko-field.pdf');
    writeFileSync(input, UNSIGNED);
    await pyhanko.addField({ in: input, out: withField, field: 'ApproverSig', box: [50, 50, 350, 130] });
    const prepared = readFileSync(withField);
    rmSync(input, { force: true });
    rmSync(withField, { force: true });
    expect(verifyPdf(prepared, { trustRoots: [pki.rootPem] }).unsignedFields).toEqual(['ApproverSig']);

    const jpeg = corpus('md/lalune.jpg');
    const { document: out, warnings } = await signPdfReport(prepared, request({ appearance: { field: 'ApproverSig', image: jpeg } }), pki.rsa);
    expect(warnings).toEqual([]);
    expectSoundSignedUpdate(prepared, out, qpdf);
    const file = path.join(pki.dir, `images-${process.hrtime.bigint()}.pdf`);
    writeFileSync(file, out);
    try {
      expect(execFileSync('pdfimages', ['-list', file], { encoding: 'utf8' })).toMatch(/^\s*1\s+0\s+image\s+250\s+250\s+rgb\s+3\s+8\s+jpeg/m);
    } finally {
      rmSync(file, { force: true });
    }
    const report = verifyPdf(out, { trustRoots: [pki.rootPem] });
    expect(report.signatures.map((s) => [s.field, s.indication])).toEqual([['ApproverSig', 'TOTAL_PASSED']]);
    expect(report.unsignedFields).toEqual([]);
    expect(pdfsig(pki, out)).toMatchObject([{ valid: true, total: true }]);
    const hanko = await pyhankoReport(out);
    expect(hanko.signatures?.map((s) => [s.field, pyhankoValid(s), s.coverage])).toEqual([['ApproverSig', true, 'ENTIRE_FILE']]);
  });
});

describe('certification signatures (certify → DocMDP P=1/2/3)', () => {
  const levels: [CertifyPermission, 1 | 2 | 3][] = [['no-changes', 1], ['form-filling', 2], ['annotations', 3]];
  const certified = new Map<CertifyPermission, Buffer>();

  beforeAll(async () => {
    for (const [certify] of levels) certified.set(certify, (await signPdfReport(UNSIGNED, request({ certify }), pki.rsa)).document);
  });

  for (const [certify, p] of levels) {
    it(`certify=${certify}: pyHanko reads DocMDP P=${p} (the signature's and the catalog's), qpdf the same /Perms, pdfsig and verify accept it`, async () => {
      const out = certified.get(certify)!;
      expectSoundSignedUpdate(UNSIGNED, out, qpdf);
      const hanko = await pyhankoReport(out);
      expect(hanko.certification).toBe(p);
      expect(hanko.signatures?.map((s) => [s.docmdp, pyhankoValid(s), s.coverage])).toEqual([[p, true, 'ENTIRE_FILE']]);
      expect(qpdfDocMdpPermission(out)).toBe(p);
      expect(pdfsig(pki, out)).toMatchObject([{ valid: true, total: true, certificateTrusted: true }]);
      const report = verifyPdf(out, { trustRoots: [pki.rootPem] });
      expect(report.signatures).toHaveLength(1);
      expect(report.signatures[0]).toMatchObject({ kind: 'certification', indication: 'TOTAL_PASSED', docMdp: { permission: p } });
    });
  }

  it('uncertified signatures carry no DocMDP reference and the catalog no /Perms', async () => {
    const { document: out } = await signPdfReport(UNSIGNED, request(), pki.rsa);
    const hanko = await pyhankoReport(out);
    expect(hanko.certification).toBeNull();
    expect(hanko.signatures?.[0]?.docmdp).toBeNull();
    expect(verifyPdf(out, { trustRoots: [pki.rootPem] }).signatures[0]).toMatchObject({ kind: 'approval', docMdp: null });
  });

  it('P=2 and P=3 take a later approval signature; pyHanko keeps the certification VALID', async () => {
    for (const certify of ['form-filling', 'annotations'] as const) {
      const { document: twice } = await signPdfReport(certified.get(certify)!, request({ signer: { name: 'Second Signer', email: 's@example.com' } }), pki.rsa);
      const hanko = await pyhankoReport(twice);
      expect(hanko.signatures?.map((s) => [s.field, pyhankoValid(s)]), certify).toEqual([['Signature1', true], ['Signature2', true]]);
      expect(verifyPdf(twice, { trustRoots: [pki.rootPem] }).signatures.map((s) => s.indication)).toEqual(['TOTAL_PASSED', 'TOTAL_PASSED']);
    }
  });

  it('P=1 refuses any later signature; certifying a signed PDF is refused (certification must be first)', async () => {
    await expect(signPdfReport(certified.get('no-changes')!, request(), pki.rsa)).rejects.toMatchObject(answering(422, undefined));
    const { document: signed } = await signPdfReport(UNSIGNED, request(), pki.rsa);
    await expect(signPdfReport(signed, request({ certify: 'form-filling' }), pki.rsa)).rejects.toMatchObject(answering(422, undefined, {
      message: expect.stringMatching(/certification signature \(certify\) must be the first/),
    }));
    await expect(signPdfReport(certified.get('annotations')!, request({ certify: 'annotations' }), pki.rsa)).rejects.toMatchObject(answering(422, undefined));
  });

  it('certifying fills an unfilled placeholder too (it is not a signature yet)', async () => {
    const { document: out } = await signPdfReport(PLACEHOLDER, request({ certify: 'form-filling' }), pki.rsa);
    const hanko = await pyhankoReport(out);
    expect(hanko.certification).toBe(2);
    expect(hanko.signatures?.map((s) => [s.field, s.docmdp, pyhankoValid(s)])).toEqual([['Signature1', 2, true]]);
  });
});

describe('POST /v1/sign certify (JSON and multipart)', () => {
  let app: FastifyInstance;
  let key: string;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'docproc-sign-certify-'));
    const pepper = 'sign-certify-pepper-0123456789abcdef';
    ({ app } = await buildTestApp({ REDIS_URL: inject('redisUrl'), API_KEY_PEPPER: pepper, RATE_LIMIT_MAX: '1000', DATA_DIR: path.join(dir, 'data') }));
    key = generateApiKey();
    const services = (app as unknown as { services: Services }).services;
    // A loaded machine can take seconds to connect to Redis.
    if (!(await services.store.connected(30_000))) throw new Error('the key store (Redis) did not connect');
    await services.store.putApiKey(hashApiKey(key, pepper), { email: 'sign-certify@example.com', createdAt: new Date().toISOString() });
  });
  afterAll(async () => {
    await app?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const json = (extra: Record<string, unknown>, query = '') => app.inject({
    method: 'POST', url: `/v1/sign${query}`, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/pdf' },
    payload: JSON.stringify({ document: { base64: UNSIGNED.toString('base64') }, signer: request().signer, auditTrail: request().auditTrail, ...extra }),
  });

  it('JSON certify=annotations and multipart certify=no-changes give the DocMDP level pyHanko reads', async () => {
    const viaJson = await json({ certify: 'annotations' });
    expect(viaJson.statusCode, viaJson.body).toBe(200);
    expect((await pyhankoReport(viaJson.rawPayload)).certification).toBe(3);

    const { payload, headers } = multipartBody([
      { name: 'file', value: UNSIGNED, filename: 'contract.pdf', contentType: 'application/pdf' },
      { name: 'signer', value: JSON.stringify(request().signer) },
      { name: 'auditTrail', value: JSON.stringify(request().auditTrail) },
      { name: 'certify', value: 'no-changes' },
    ]);
    const viaMultipart = await app.inject({ method: 'POST', url: '/v1/sign', headers: { authorization: `Bearer ${key}`, accept: 'application/pdf', ...headers }, payload });
    expect(viaMultipart.statusCode, viaMultipart.body).toBe(200);
    expect((await pyhankoReport(viaMultipart.rawPayload)).certification).toBe(1);
  });

  it('an unknown level is a 400 naming the allowed values; certify with to=docx is a 400', async () => {
    const wrong = await json({ certify: 'everything' });
    expect(wrong.statusCode).toBe(400);
    expect(wrong.body).toMatch(/certify/);
    const docx = await app.inject({
      method: 'POST', url: '/v1/sign?to=docx', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ document: { base64: corpus('docx-signed/eid-hello-world-unsigned.docx').toString('base64') }, signer: request().signer, auditTrail: request().auditTrail, certify: 'no-changes' }),
    });
    expect(docx.statusCode, docx.body).toBe(400);
    expect(docx.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
  });
});
