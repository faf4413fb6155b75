import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CORPUS_DIR } from '../../support/corpus.js';
import { ALL_ATTACKS, QpdfReader, appendRevision } from '../../support/pdf-attacks.js';
import { PdfView } from '../../../src/documents/pdf/document.js';
import { expectAgreementWithQpdf } from '../../support/qpdf-agreement.js';
import { makeTestPki } from '../../unit/verify/helpers/pki.js';
import { TestPdf } from '../../unit/verify/helpers/pdf.js';

/**
 * Differential test of the verifier's PDF reader against qpdf, an independent reader: for every
 * corpus PDF and every generated attack file, each revision (the file cut just after that revision's
 * %%EOF, and the whole file) must resolve to the same objects in both. Objects are compared in
 * qpdf's JSON v2 form; any disagreement fails with the object number and both renderings.
 */

let reader: QpdfReader;
const corpusFiles = ['pdf-signed', 'pdf-unsigned'].flatMap((dir) =>
  readdirSync(path.join(CORPUS_DIR, dir)).filter((f) => f.endsWith('.pdf')).map((f) => path.join(dir, f)),
);

beforeAll(() => {
  reader = new QpdfReader();
});
afterAll(() => reader?.cleanup());

describe('the verifier reads PDFs as qpdf does', () => {
  it('covers the corpus', () => {
    expect(corpusFiles.length).toBeGreaterThanOrEqual(10);
  });

  it('a Word-style hybrid file (objects in object streams free in the table, listed by /XRefStm) agrees', () => {
    expectAgreementWithQpdf(reader, 'hybrid', TestPdf.hybridBase().bytes);
    expect(reader.show(TestPdf.hybridBase().bytes, 5)).toMatch(/Fields/);
  });

  it('names with escapes and non-ASCII bytes and strings in every encoding read the same', () => {
    const pdf = TestPdf.base().update({
      20: '<< /A#20B /C#2FD /X#e9 (caf\\351) /Y#23z /F#c3#a9 /K [/G#e3#81#82 (\\222\\223) <FEFF00E9> <EFBBBF63C3A9> <FFFE6500>] /Empty () >>',
    }).bytes;
    expectAgreementWithQpdf(reader, 'names and strings', pdf);
  });

  it('damaged dictionaries (a value where a key belongs, a last key without a value) are recovered as qpdf does', () => {
    const pdf = TestPdf.base().update({
      20: '<< /A 1 2 /B (two) [/stray] /C << /D 4 /E >> /F >>',
      21: '<< /Type /Annot 99 /Subtype /Text /Rect [0 0 1 1] (x) >>',
    }).bytes;
    expectAgreementWithQpdf(reader, 'damaged dictionaries', pdf);
  });

  it('an update whose xref table has no subsection is rebuilt by scanning, as qpdf does, and says so', () => {
    const signed = readFileSync(path.join(CORPUS_DIR, 'pdf-signed', 'signpdf-signed.pdf'));
    const pdf = appendRevision(signed, reader, {});
    expect(pdf.toString('latin1')).toMatch(/xref\ntrailer/);
    expectAgreementWithQpdf(reader, 'empty xref table', pdf);
    const view = new PdfView(pdf, pdf.length);
    expect(view.reconstructed).toBe(true);
    expect(view.recovery.join(' ')).toMatch(/scanning/);
  });

  it.each(corpusFiles)('%s: every revision agrees', (file) => {
    expectAgreementWithQpdf(reader, file, readFileSync(path.join(CORPUS_DIR, file)));
  });

  it('every generated attack file agrees, on a test-signed PDF and on a third-party signed PDF', () => {
    const { signer } = makeTestPki();
    const certifiedHybrid = TestPdf.hybridBase();
    certifiedHybrid.sign({ cms: { signer }, docMdp: 1, trailerExtra: `/XRefStm ${certifiedHybrid.firstXrefStm}` });
    const targets = [
      ['test-signed', TestPdf.base().sign({ cms: { signer } }).bytes],
      ['Word-style hybrid, certified, last trailer repeating the old /XRefStm', certifiedHybrid.bytes],
      ['signpdf-signed-twice.pdf', readFileSync(path.join(CORPUS_DIR, 'pdf-signed', 'signpdf-signed-twice.pdf'))],
    ] as const;
    for (const [name, pdf] of targets) {
      for (const attack of ALL_ATTACKS) expectAgreementWithQpdf(reader, `${name} + ${attack.name}`, attack.apply(pdf, reader));
    }
  }, 300_000);
});
