import { beforeAll, describe, expect, it } from 'vitest';
import { verifyPdf } from '../../../src/documents/verify/index.js';
import { makeTestPki, type TestIdentity } from './helpers/pki.js';
import { TestPdf } from './helpers/pdf.js';

/**
 * Signatures are never dropped silently: a signature the file holds but the final document no
 * longer shows (its field removed from the form by a later update, or its revision skipped by a
 * /Prev that jumps over it) is reported, and it cannot pass.
 */

let root: TestIdentity;
let signer: TestIdentity;

beforeAll(() => {
  ({ root, signer } = makeTestPki());
});

const verify = (bytes: Uint8Array) => verifyPdf(bytes, { trustRoots: [root.pem] });

function sixSignatures(): TestPdf {
  const pdf = TestPdf.base();
  for (let i = 1; i <= 6; i++) {
    const field = pdf.addSignatureField(`Sig${i}`);
    pdf.sign({ cms: { signer }, fieldNum: field, fieldName: `Sig${i}` });
  }
  return pdf;
}

const startxrefs = (pdf: TestPdf) => [...pdf.bytes.toString('latin1').matchAll(/startxref\s+(\d+)/g)].map((m) => Number(m[1]));

describe('verifyPdf: signatures a later update hides', () => {
  it.each([1, 3, 5])('a /Prev that skips back to the revision of signature %i: every later signature is still reported, and fails', (keep) => {
    const pdf = sixSignatures();
    // Revisions: base, then (field, signature) per signer; signature k ends revision 2k + 1.
    const target = startxrefs(pdf)[2 * keep]!;
    const n = pdf.size;
    pdf.breakNextPrev(target).update({ [n]: '<< /Type /Annot /Subtype /Text /Rect [10 10 30 30] /Contents (note) >>' });
    const report = verify(pdf.bytes);
    expect(report.valid).toBe(false);
    expect(report.document.signatureCount).toBe(6);
    expect(report.signatures.map((s) => s.field)).toEqual(['Sig1', 'Sig2', 'Sig3', 'Sig4', 'Sig5', 'Sig6']);
    for (const s of report.signatures.slice(keep)) {
      expect(s, s.field).toMatchObject({ intact: true, cryptoValid: true, modificationsAfter: 'other', indication: 'TOTAL_FAILED' });
      expect(s.errors.join(' ')).toMatch(/no longer part of the document/);
    }
    for (const s of report.signatures.slice(0, keep)) expect(s.indication, s.field).toBe('TOTAL_PASSED');
    expect(report.document.warnings.join(' ')).toMatch(/not shown by the final document/);
  });

  it('a signature whose field a later update removes from the form and the page is reported and fails', () => {
    const pdf = TestPdf.base().sign({ cms: { signer } }).sign({ cms: { signer }, fieldNum: 9 });
    expect(verify(pdf.bytes).valid).toBe(true);
    pdf.update({
      5: '<< /Fields [7 0 R 8 0 R] /SigFlags 3 >>',
      3: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 6 0 R >> >> /Annots [7 0 R 8 0 R] >>',
    });
    const report = verify(pdf.bytes);
    expect(report.valid).toBe(false);
    expect(report.signatures.map((s) => [s.field, s.indication])).toEqual([['Signature1', 'TOTAL_FAILED'], ['Signature2', 'TOTAL_FAILED']]);
    expect(report.signatures[1]!.errors.join(' ')).toMatch(/no longer part of the document/);
  });

  it('a sound multi-signature file reports each signature once, without warnings', () => {
    const report = verify(sixSignatures().bytes);
    expect(report.signatures).toHaveLength(6);
    expect(report.valid).toBe(true);
    expect(report.document.warnings).toEqual([]);
  });

  it('unfilled placeholders and ByteRange-like text elsewhere are not taken for signatures', () => {
    const pdf = TestPdf.base();
    pdf.update({ 20: '<< /Note (/ByteRange [0 10 20 30]) /ByteRange [0 1 2 3] >>' });
    const report = verify(pdf.bytes);
    expect(report.signatures).toEqual([]);
    expect(report.document.warnings).toEqual([]);
  });
});

describe('verifyPdf: more signature fields than one request checks', () => {
  it('is not reported valid, and says why', () => {
    const pdf = TestPdf.base().sign({ cms: { signer } });
    const fields: Record<number, string> = {};
    const refs: string[] = ['7 0 R', '8 0 R', '9 0 R'];
    for (let i = 0; i < 205; i++) {
      const num = pdf.size + i;
      fields[num] = `<< /FT /Sig /T (Extra${i}) >>`;
      refs.push(`${num} 0 R`);
    }
    pdf.update({ ...fields, 5: `<< /Fields [${refs.join(' ')}] /SigFlags 3 >>` });
    const report = verify(pdf.bytes);
    expect(report.valid).toBe(false);
    expect(report.reason).toMatch(/only the first 200 were checked/);
    expect(report.document.warnings.join(' ')).toMatch(/207 signature fields/);
  });
});
