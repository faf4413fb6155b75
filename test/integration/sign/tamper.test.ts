import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { pdfPageCount, pdfText } from '../../support/pdf-text.js';
import { buildTestApp } from '../../support/test-app.js';
import { libreOfficeVerifyPdf } from './libreoffice-verify.js';
import { flipByteInSignedRange, lastByteRange, PdfEditor } from './pdf-update.js';
import { createTestPki, pdfsig, type TestPki } from './pki.js';
import { signRoutesFor, type SignRoutes, trustInNss } from './route-signing.js';
import { CORPUS_DIR } from '../../support/corpus.js';

/**
 * A PDF from POST /v1/sign verifies as TOTAL_PASSED through POST /v1/verify, and stops passing
 * once it is tampered with. Every case is also put to poppler's pdfsig, which only checks the
 * signed bytes: it does not judge what later incremental updates changed, so it keeps calling
 * a signature valid after changes our verifier refuses (the test says where).
 */
const corpus = (p: string) => readFileSync(path.join(`${CORPUS_DIR}`, p));

let pki: TestPki;
let app: FastifyInstance;
let routes: SignRoutes;
let editor: PdfEditor;
let signed: Buffer;
let signedForm: Buffer;
/** Every tampered PDF, for one LibreOffice run at the end. */
const tamperedPdfs: Record<string, Buffer> = {};

beforeAll(async () => {
  pki = createTestPki();
  editor = new PdfEditor(pki.dir);
  ({ app } = await buildTestApp({ REDIS_URL: inject('redisUrl'), API_KEY_PEPPER: 'tamper-pepper-0123456789abcdef', RATE_LIMIT_MAX: '1000', DATA_DIR: path.join(pki.dir, 'data') }));
  routes = await signRoutesFor(app, 'tamper@example.com');
  trustInNss(pki, await routes.serviceChain());
  signed = await routes.sign(corpus('pdf-unsigned/signpdf-w3dummy.pdf'));
  signedForm = await routes.sign(corpus('pdf-unsigned/signpdf-formexample.pdf'));
}, 120_000);

afterAll(async () => {
  await app?.close();
  pki?.cleanup();
});

/** Appends a page (new page, content stream and font objects, a new /Pages with the extra kid). */
function addPage(pdf: Buffer): Buffer {
  const pagesNumber = PdfEditor.ref(editor.show(pdf, PdfEditor.ref(editor.show(pdf, 'trailer'), '/Root')), '/Pages');
  const pages = editor.show(pdf, pagesNumber);
  const [page, content, font] = [0, 1, 2].map((i) => editor.nextObjectNumber(pdf) + i);
  const text = 'BT /F1 24 Tf 72 700 Td (Added after signing) Tj ET';
  const newPages = pages
    .replace(/\/Kids\s*\[([^\]]*)\]/, (_m, kids: string) => `/Kids [${kids} ${page} 0 R]`)
    .replace(/\/Count\s+(\d+)/, (_m, n: string) => `/Count ${Number(n) + 1}`);
  return editor.appendUpdate(pdf, new Map([
    [pagesNumber, newPages],
    [page, `<< /Type /Page /Parent ${pagesNumber} 0 R /MediaBox [0 0 595 842] /Contents ${content} 0 R /Resources << /Font << /F1 ${font} 0 R >> >> >>`],
    [content, `<< /Length ${text.length} >>\nstream\n${text}\nendstream`],
    [font, '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'],
  ]));
}

/** Number of the object holding the last signature dictionary (the one with the last /ByteRange). */
function signatureObjectNumber(pdf: Buffer): number {
  const s = pdf.toString('latin1');
  const head = s.slice(0, s.lastIndexOf('/ByteRange'));
  return Number([...head.matchAll(/(\d+)\s+0\s+obj\b/g)].pop()![1]);
}

/** The root's AcroForm field with that partial name (/T), as [object number, dictionary text]. */
function formField(pdf: Buffer, name: string): [number, string] {
  const root = editor.show(pdf, PdfEditor.ref(editor.show(pdf, 'trailer'), '/Root'));
  const fields = /\/Fields\s*\[([^\]]*)\]/.exec(root)![1];
  for (const [, n] of fields.matchAll(/(\d+)\s+\d+\s+R/g)) {
    const field = editor.show(pdf, Number(n));
    if (field.includes(`/T (${name})`)) return [Number(n), field];
  }
  throw new Error(`no field ${name}`);
}

describe('POST /v1/sign → POST /v1/verify', () => {
  it('the signed PDF verifies: valid, TOTAL_PASSED, whole file covered, nothing modified after; pdfsig agrees', async () => {
    const report = await routes.verify(signed);
    expect(report.valid).toBe(true);
    expect(report.signatures).toHaveLength(1);
    expect(report.signatures[0]).toMatchObject({ indication: 'TOTAL_PASSED', subIndication: null, coverage: 'entireFile', modificationsAfter: 'none', intact: true, cryptoValid: true, trusted: true });
    expect(pdfsig(pki, signed)).toEqual([expect.objectContaining({ valid: true, total: true, certificateTrusted: true })]);
  });

  it('(a) one flipped byte inside the signed range → not valid, HASH_FAILURE; pdfsig agrees (digest mismatch)', async () => {
    const { tampered, offset } = flipByteInSignedRange(signed);
    const [start, length] = lastByteRange(signed);
    expect(offset).toBeGreaterThanOrEqual(start);
    expect(offset).toBeLessThan(start + length);
    tamperedPdfs.flipped = tampered;
    const report = await routes.verify(tampered);
    expect(report.valid).toBe(false);
    expect(report.signatures[0]).toMatchObject({ indication: 'TOTAL_FAILED', subIndication: 'HASH_FAILURE', intact: false });
    const [sig] = pdfsig(pki, tampered);
    expect(sig.valid).toBe(false);
    expect(sig.raw).toContain('Digest Mismatch');
  });

  it('(b) an incremental update adding a page → not valid, modificationsAfter other; pdfsig still says valid (disagrees)', async () => {
    const tampered = addPage(signed);
    tamperedPdfs.pageAdded = tampered;
    expect(tampered.subarray(0, signed.length).equals(signed)).toBe(true);
    // The update is real: independent readers see the extra page and its text.
    expect(pdfPageCount(tampered)).toBe(pdfPageCount(signed) + 1);
    expect(pdfText(tampered)).toContain('Added after signing');

    const report = await routes.verify(tampered);
    expect(report.valid).toBe(false);
    expect(report.document.modifiedAfterLastSignature).toBe(true);
    expect(report.signatures[0]).toMatchObject({ indication: 'TOTAL_FAILED', subIndication: 'FORMAT_FAILURE', coverage: 'entireRevision', modificationsAfter: 'other', intact: true, cryptoValid: true });

    // pdfsig: the signed bytes are intact, so "valid", only noting the signature no longer covers the whole file.
    const [sig] = pdfsig(pki, tampered);
    expect(sig).toMatchObject({ valid: true, total: false });
  });

  it('(c) an incremental update rewriting the signature dictionary (/Reason) → not valid; pdfsig still says valid (disagrees)', async () => {
    const number = signatureObjectNumber(signed);
    const dictionary = editor.show(signed, number);
    expect(dictionary).toContain('/Reason (I approve this document)');
    const tampered = editor.appendUpdate(signed, new Map([[number, dictionary.replace('/Reason (I approve this document)', '/Reason (I reject this document)')]]));

    tamperedPdfs.reasonRewritten = tampered;
    const report = await routes.verify(tampered);
    expect(report.valid).toBe(false);
    expect(report.signatures[0].indication).toBe('TOTAL_FAILED');
    expect(report.signatures[0].modificationsAfter).toBe('other');

    // The report shows the signed revision's reason, and says why it fails.
    expect(report.signatures[0]).toMatchObject({ reason: 'I approve this document', subIndication: 'FORMAT_FAILURE', intact: true, cryptoValid: true });
    expect(report.signatures[0].errors.join('\n')).toContain('a signature dictionary was changed after signing');
    // qpdf reads the forged dictionary as the current one; pdfsig (which does not print /Reason)
    // checks the unchanged signed bytes and calls the signature valid.
    expect(editor.show(tampered, number)).toContain('/Reason (I reject this document)');
    const [sig] = pdfsig(pki, tampered);
    expect(sig).toMatchObject({ valid: true, total: false });
  });

  // Allowed after an approval signature without DocMDP (verify README): form filling and annotations.
  it('(d1) an incremental update that only fills a form field value → still valid, TOTAL_PASSED, modificationsAfter formFilling; pdfsig: valid, not total', async () => {
    const [number, field] = formField(signedForm, 'Given Name Text Box');
    const filled = /\/V\s*(\([^)]*\)|<[^>]*>)/.test(field) ? field.replace(/\/V\s*(\([^)]*\)|<[^>]*>)/, '/V (Jane)') : field.replace(/>>\s*$/, ' /V (Jane) >>');
    const tampered = editor.appendUpdate(signedForm, new Map([[number, filled]]));
    expect(editor.show(tampered, number)).toContain('/V (Jane)');
    tamperedPdfs.formFilled = tampered;

    const before = await routes.verify(signedForm);
    expect(before.signatures[0]).toMatchObject({ indication: 'TOTAL_PASSED', modificationsAfter: 'none' });
    const report = await routes.verify(tampered);
    expect(report.valid).toBe(true);
    expect(report.document.modifiedAfterLastSignature).toBe(true);
    expect(report.signatures[0]).toMatchObject({ indication: 'TOTAL_PASSED', coverage: 'entireRevision', modificationsAfter: 'formFilling' });
    expect(pdfsig(pki, tampered)).toEqual([expect.objectContaining({ valid: true, total: false })]);
  });

  it('(d2) an incremental update that only adds a text annotation → still valid, TOTAL_PASSED, modificationsAfter annotations', async () => {
    const pageNumber = PdfEditor.ref(editor.show(signed, PdfEditor.ref(editor.show(signed, PdfEditor.ref(editor.show(signed, 'trailer'), '/Root')), '/Pages')), '/Kids \\[');
    const page = editor.show(signed, pageNumber);
    const annot = editor.nextObjectNumber(signed);
    const objects = new Map([[annot, `<< /Type /Annot /Subtype /Text /Rect [100 700 120 720] /Contents (A note added after signing) /P ${pageNumber} 0 R >>`]]);
    if (/\/Annots\s*\[/.test(page)) objects.set(pageNumber, page.replace(/\/Annots\s*\[/, `/Annots [ ${annot} 0 R `));
    else if (/\/Annots\s+\d+\s+\d+\s+R/.test(page)) {
      const annots = PdfEditor.ref(page, '/Annots');
      objects.set(annots, editor.show(signed, annots).replace('[', `[ ${annot} 0 R `));
    } else objects.set(pageNumber, page.replace(/>>\s*$/, ` /Annots [ ${annot} 0 R ] >>`));
    const tampered = editor.appendUpdate(signed, objects);
    tamperedPdfs.annotated = tampered;

    const report = await routes.verify(tampered);
    expect(report.valid).toBe(true);
    expect(report.signatures[0]).toMatchObject({ indication: 'TOTAL_PASSED', coverage: 'entireRevision', modificationsAfter: 'annotations' });
    expect(pdfsig(pki, tampered)).toEqual([expect.objectContaining({ valid: true, total: false })]);
  });

  // LibreOffice 7.4 marks a signature partial when a later revision is not covered by a later
  // signature, and calls it invalid when pages were added after it; the rewritten signature
  // dictionary, the filled field and the new annotation leave it "valid" (we refuse (c)).
  it('LibreOffice: the flipped byte and the added page are invalid; the other updates leave the signature valid but partial', async () => {
    const names = ['flipped', 'pageAdded', 'reasonRewritten', 'formFilled', 'annotated'];
    expect(Object.keys(tamperedPdfs).sort()).toEqual([...names].sort());
    const results = await libreOfficeVerifyPdf(names.map((n) => tamperedPdfs[n]));
    const verdicts = Object.fromEntries(names.map((n, i) => [n, results[i].map((sig) => ({ valid: sig.valid, partial: sig.partial }))]));
    expect(verdicts).toEqual({
      flipped: [{ valid: false, partial: false }],
      pageAdded: [{ valid: false, partial: true }],
      reasonRewritten: [{ valid: true, partial: true }],
      formFilled: [{ valid: true, partial: true }],
      annotated: [{ valid: true, partial: true }],
    });
  }, 120_000);
});
