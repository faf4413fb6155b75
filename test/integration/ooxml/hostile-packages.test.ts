import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { signDocx } from '../../../src/documents/sign/docx/sign-docx.js';
import type { SignRequest } from '../../../src/documents/sign/types.js';
import { OfficePool } from '../../../src/office/index.js';
import { issueTestKey, multipart } from '../../support/api-key.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { collidingSvg, duplicatedMainPart, entriesOf, extraFootnotes, extraOfficeDocument, shadowedMainPart } from '../../support/ooxml/docx-attacks.js';
import { rawZip } from '../../support/ooxml/raw-zip.js';
import { pdfText } from '../../support/pdf-text.js';
import { buildTestApp, type TestApp } from '../../support/test-app.js';
import { libreOfficeVerify, type LibreOfficeSignature } from '../sign/libreoffice-verify.js';
import { createTestPki, type TestPki } from '../sign/pki.js';

/**
 * Packages that make LibreOffice show something other than what a name-folding reader or a
 * signature checks (issue 22 item 7, issue 26 item 7). For each: LibreOffice, given the package
 * as it is (a bare pool: no guard, no scrub), really shows the forgery; docproc refuses the package
 * on every route, or finds the signature not valid.
 */
const corpus = (p: string) => readFileSync(path.join(CORPUS_DIR, p));
const FORGED = 'FORGED CONTENT';
const HOSTILE_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="500" height="100">' +
  '<text x="5" y="50" font-size="30">HOSTILE SVG</text><image x="0" y="60" width="10" height="10" xlink:href="file:///etc/hostname"/></svg>';
const request: SignRequest = {
  signer: { name: 'Jane Q. Signer', email: 'jane@example.com' },
  auditTrail: [{ type: 'submit', timestamp: '2025-03-01T09:01:00Z' }],
};

let t: TestApp;
let key: string;
let bare: OfficePool;
let pki: TestPki;
let signed: Buffer;

beforeAll(async () => {
  pki = createTestPki();
  signed = (await signDocx(corpus('docx/pandoc-notes.docx'), request, pki.rsa)).document;
  t = await buildTestApp({ REDIS_URL: inject('redisUrl'), OFFICE_ENABLED: 'true', OFFICE_POOL_SIZE: '1', RATE_LIMIT_MAX: '1000', TRUST_ROOTS: path.join(pki.dir, 'root.pem'), DATA_DIR: path.join(pki.dir, 'data') });
  key = await issueTestKey(t.app);
  bare = new OfficePool({ size: 1 });
  await bare.start();
}, 180_000);

afterAll(async () => {
  await bare?.close();
  await t?.app.close();
  pki?.cleanup();
});

/** What LibreOffice itself shows of a package (no guard, no scrub), as text. */
const shown = async (docx: Buffer) => pdfText(await bare.convertToPdf(docx)).replace(/\s+/g, ' ');

const auth = () => ({ authorization: `Bearer ${key}` });

async function onEveryRoute(docx: Buffer) {
  const upload = await multipart({ file: { data: docx, filename: 'hostile.docx' } });
  const base64 = docx.toString('base64');
  const answers = {
    convert: await t.app.inject({ method: 'POST', url: '/v1/convert', headers: { ...auth(), 'content-type': upload.contentType }, payload: upload.payload }),
    annotate: await t.app.inject({ method: 'POST', url: '/v1/annotate', headers: auth(), payload: { document: { base64 }, fields: [{ id: 'x', type: 'text', value: 'y' }] } }),
    signPdf: await t.app.inject({ method: 'POST', url: '/v1/sign', headers: auth(), payload: { document: { base64 }, ...request } }),
    signDocx: await t.app.inject({ method: 'POST', url: '/v1/sign?to=docx', headers: auth(), payload: { document: { base64 }, ...request } }),
    verify: await t.app.inject({ method: 'POST', url: '/v1/verify', headers: auth(), payload: { document: { base64 } } }),
  };
  return Object.fromEntries(Object.entries(answers).map(([route, res]) => [route, { ...(res.json() as { code?: string; detail?: string }), status: res.statusCode, contentType: res.headers['content-type'] }]));
}

const refusedEverywhere = (answers: Awaited<ReturnType<typeof onEveryRoute>>, detail: RegExp) => {
  for (const [route, answer] of Object.entries(answers)) {
    expect(answer, route).toMatchObject({ status: 400, contentType: expect.stringContaining('application/problem+json'), code: 'INVALID_FILE_FORMAT', detail: expect.stringMatching(detail) });
  }
};

describe('issue 26 item 7: a hostile SVG beside a benign one under an equivalent name', () => {
  it.each(['word/media/S.svg', 'word/media/s%2Esvg'])('%s: LibreOffice renders the hostile picture; every route refuses the package with 400', async (benignName) => {
    const docx = collidingSvg(corpus('docx/pandoc-tables.docx'), HOSTILE_SVG, benignName);
    expect(await shown(docx)).toContain('HOSTILE SVG');
    refusedEverywhere(await onEveryRoute(docx), /^The package is invalid: the part names "word\/media\/s\.svg" and ".*" are equivalent/);
  }, 120_000);

  it('a duplicate name and a local header that names another part are refused on every route too', async () => {
    const entries = entriesOf(corpus('docx/pandoc-tables.docx'));
    const duplicate = rawZip([...entries, { name: 'word/document.xml', data: entries.find((e) => e.name === 'word/document.xml')!.data }]);
    refusedEverywhere(await onEveryRoute(duplicate), /holds the part "word\/document\.xml" twice/);
    const mismatch = rawZip(entries.map((e) => (e.name === 'word/styles.xml' ? { ...e, local: { name: Buffer.from('word/stylez.xml') } } : e)));
    refusedEverywhere(await onEveryRoute(mismatch), /local and central names of "word\/styles\.xml" differ/);
  }, 120_000);
});

describe('issue 22 item 7: DOCX signature forgeries', () => {
  let libreOffice: LibreOfficeSignature[][];
  const attacks = () => ({
    honest: signed,
    caseShadow: shadowedMainPart(signed, 'word/Document.xml', FORGED),
    percentShadow: shadowedMainPart(signed, 'word/document%2Exml', FORGED),
    duplicate: duplicatedMainPart(signed, FORGED),
    officeDocument: extraOfficeDocument(signed, FORGED),
    footnotes: extraFootnotes(signed, FORGED),
  });

  beforeAll(async () => {
    libreOffice = await libreOfficeVerify(Object.values(attacks()), pki.nssDir);
  }, 240_000);

  const verify = async (docx: Buffer) => {
    const res = await t.app.inject({ method: 'POST', url: '/v1/verify', headers: auth(), payload: { document: { base64: docx.toString('base64') } } });
    return { status: res.statusCode, body: res.json() };
  };

  it('the honest signature: LibreOffice shows the document and its signature as valid, and so does docproc', async () => {
    const text = await shown(signed);
    expect(text).toContain('My note');
    expect(text).not.toContain(FORGED);
    expect(libreOffice[0]![0]).toMatchObject({ valid: true });
    const { status, body } = await verify(signed);
    expect(status).toBe(200);
    expect(body).toMatchObject({ valid: true });
  }, 120_000);

  it.each(['caseShadow', 'percentShadow', 'duplicate'] as const)('%s: LibreOffice shows the forgery; docproc refuses the package with 400', async (name) => {
    const docx = attacks()[name];
    expect(await shown(docx)).toContain(FORGED);
    // LibreOffice's own check digests what it shows, so it finds the signature broken; a name-folding verifier did not.
    expect(libreOffice[Object.keys(attacks()).indexOf(name)]![0]!.valid).toBe(false);
    const { status, body } = await verify(docx);
    expect(status).toBe(400);
    expect(body).toMatchObject({ code: 'INVALID_FILE_FORMAT', detail: expect.stringMatching(/^The package is invalid/) });
  }, 120_000);

  it.each(['officeDocument', 'footnotes'] as const)('an unsigned %s relationship in a signed relationships part: LibreOffice shows the forgery and calls the signature valid; docproc does not', async (name) => {
    const docx = attacks()[name];
    expect(await shown(docx)).toContain(FORGED);
    expect(libreOffice[Object.keys(attacks()).indexOf(name)]![0]).toMatchObject({ valid: true });
    const { status, body } = await verify(docx);
    expect(status).toBe(200);
    expect(body).toMatchObject({ valid: false, signatures: [{ intact: true, cryptoValid: true, indication: 'TOTAL_FAILED', subIndication: 'FORMAT_FAILURE' }] });
    expect(body.signatures[0].errors.join()).toMatch(new RegExp(`relationship rIdForged \\(${name}\\) in .* is not signed`));
  }, 120_000);
});
