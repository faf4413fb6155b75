import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PdfView } from '../../../src/documents/pdf/document.js';
import { PdfRef } from '../../../src/documents/pdf/objects.js';
import type { SigningIdentity } from '../../../src/documents/sign/identity.js';
import { signPdf } from '../../../src/documents/sign/sign-pdf.js';
import { verifyPdf } from '../../../src/documents/verify/verify-pdf.js';
import { AMBIGUITY_CLASSES } from '../../support/pdf-ambiguity.js';
import { QpdfReader } from '../../support/pdf-attacks.js';
import { pdfText } from '../../support/pdf-text.js';
import { TestPdf } from '../../unit/verify/helpers/pdf.js';
import { makeTestPki } from '../../unit/verify/helpers/pki.js';
import { answering } from '../../support/domain-error.js';

/**
 * One test per ambiguity class (test/support/pdf-ambiguity.ts) against qpdf's reading: what qpdf
 * shows for the page as the file is, and when it rebuilds the cross-reference table (the file with
 * its last startxref damaged); what poppler prints. Whatever they show, the reader reports the
 * ambiguity, verification answers TOTAL_FAILED/FORMAT_FAILURE, and signing refuses with a 422.
 */

type Reading = 'signed' | 'forged' | 'none';

/** What each reader shows of page 3, per class, in AMBIGUITY_CLASSES order. */
const READINGS: Array<{ qpdf: Reading; qpdfRebuilt: Reading; ours: Reading }> = [
  { qpdf: 'signed', qpdfRebuilt: 'signed', ours: 'signed' }, // object stream lists the page twice
  { qpdf: 'forged', qpdfRebuilt: 'signed', ours: 'none' }, // xref index holds another object
  { qpdf: 'signed', qpdfRebuilt: 'forged', ours: 'signed' }, // defined twice in one revision
  { qpdf: 'signed', qpdfRebuilt: 'forged', ours: 'signed' }, // object stream and direct body in one revision
  { qpdf: 'signed', qpdfRebuilt: 'forged', ours: 'signed' }, // table lists the page twice
  { qpdf: 'signed', qpdfRebuilt: 'forged', ours: 'signed' }, // xref stream lists the page twice
  { qpdf: 'signed', qpdfRebuilt: 'signed', ours: 'signed' }, // xref offset at another object
  { qpdf: 'signed', qpdfRebuilt: 'signed', ours: 'signed' }, // repeated /Contents key
];

let qpdf: QpdfReader;
const { root, signer } = makeTestPki();
const signed = TestPdf.base().sign({ cms: { signer } }).bytes;

beforeAll(() => {
  qpdf = new QpdfReader();
});
afterAll(() => qpdf?.cleanup());

/** Which page a page dictionary's /Contents shows: the signed stream (4) or the forged one. */
function reading(contents: string | undefined): Reading {
  if (contents === undefined) return 'none';
  return contents === '4' ? 'signed' : 'forged';
}

const qpdfReading = (pdf: Buffer): Reading => {
  let shown: string;
  try {
    shown = qpdf.show(pdf, 3);
  } catch {
    return 'none';
  }
  return reading(/\/Contents (\d+) 0 R/.exec(shown)?.[1]);
};

/** The file with its last startxref pointing nowhere: qpdf rebuilds the table by scanning the bodies. */
const damaged = (pdf: Buffer) => Buffer.from(pdf.toString('latin1').replace(/startxref\s+\d+\s+%%EOF\s*$/, 'startxref\n1\n%%EOF\n'), 'latin1');

describe('files readers can read in more than one way', () => {
  it('the signed base verifies (so any refusal below comes from the added revision)', () => {
    expect(verifyPdf(signed, { trustRoots: [root.pem] }).signatures.map((s) => s.indication)).toEqual(['TOTAL_PASSED']);
    expect(READINGS).toHaveLength(AMBIGUITY_CLASSES.length);
  });

  it.each(AMBIGUITY_CLASSES.map((c, i) => [c.name, c, READINGS[i]!] as const))('%s', (_name, ambiguity, expected) => {
    const pdf = ambiguity.apply(signed);
    expect(qpdfReading(pdf), 'qpdf, as the file is').toBe(expected.qpdf);
    expect(qpdfReading(damaged(pdf)), 'qpdf, rebuilding the table').toBe(expected.qpdfRebuilt);

    const view = new PdfView(pdf, pdf.length);
    const page = view.dict(new PdfRef(3, 0));
    const contents = page?.get('Contents');
    expect(reading(contents instanceof PdfRef ? String(contents.num) : undefined), 'our reader').toBe(expected.ours);
    expect(view.ambiguities.length, 'the reader names the ambiguity').toBeGreaterThan(0);

    const report = verifyPdf(pdf, { trustRoots: [root.pem] });
    expect(report.valid).toBe(false);
    expect(report.signatures.map((s) => [s.indication, s.subIndication])).toEqual([['TOTAL_FAILED', 'FORMAT_FAILURE']]);
    expect(report.signatures[0]!.errors[0]).toMatch(/can be read in more than one way/);
    expect(report.document.warnings.join(' ')).toMatch(/more than one way/);
    // poppler prints one of the two pages; which one does not matter to the verdict.
    expect(pdfText(pdf)).toMatch(/Pay 100 EUR|PAY 999 EUR|^\s*$/);
  });

  it.each(AMBIGUITY_CLASSES.map((c) => [c.name, c] as const))('signing refuses it with a 422: %s', async (_name, ambiguity) => {
    const identity: SigningIdentity = { privateKey: signer.key, certificate: signer.cert, chain: [root.cert], isDevelopment: false };
    await expect(signPdf(ambiguity.apply(signed), {
      signer: { name: 'Second Signer', email: 'second@example.com' },
      auditTrail: [{ type: 'submit', timestamp: '2025-03-01T09:01:00Z' }],
    }, identity)).rejects.toMatchObject(answering(422, 'UNPROCESSABLE_DOCUMENT', { message: expect.stringMatching(/more than one way/) }));
  });
});
