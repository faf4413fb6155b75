import { beforeAll, describe, expect, it } from 'vitest';
import { verifyPdf } from '../../../src/documents/verify/index.js';
import { makeTestPki, type TestIdentity } from './helpers/pki.js';
import { TestPdf } from './helpers/pdf.js';

/**
 * Channels for changing what a page shows without it counting as a change: DSS (validation data may
 * grow after a signature, even under DocMDP P1, but must not carry page content), lenient categories
 * aliasing page content, and object streams rewritten in place.
 */

let root: TestIdentity;
let signer: TestIdentity;
beforeAll(() => {
  ({ root, signer } = makeTestPki());
});

const first = (pdf: TestPdf) => verifyPdf(pdf.bytes, { trustRoots: [root.pem] }).signatures[0]!;
const VOID = 'BT /F1 36 Tf 72 400 Td (CONTRACT VOID) Tj ET';
const voidStream = `<< /Length ${VOID.length} >>\nstream\n${VOID}\nendstream`;
const catalogWithDss = (dss: string, perms = '') => `<< /Type /Catalog /Pages 2 0 R /AcroForm 5 0 R /DSS ${dss}${perms} >>`;

describe('verifyPdf: DSS updates after signing', () => {
  it('a DSS whose certificate list grows (new streams, arrays rewritten) stays an LTV update under P1', () => {
    const pdf = TestPdf.base().sign({ cms: { signer }, docMdp: 1 });
    const sigNum = pdf.size - 1;
    const perms = ` /Perms << /DocMDP ${sigNum} 0 R >>`;
    const [certs, dss, cert1, cert2] = [pdf.size, pdf.size + 1, pdf.size + 2, pdf.size + 3];
    const certStream = (n: number) => `<< /Length 4 >>\nstream\nder${n}\nendstream`;
    pdf.update({ [cert1]: certStream(1), [certs]: `[${cert1} 0 R]`, [dss]: `<< /Certs ${certs} 0 R >>`, 1: catalogWithDss(`${dss} 0 R`, perms) });
    pdf.update({ [cert2]: certStream(2), [certs]: `[${cert1} 0 R ${cert2} 0 R]`, [dss]: `<< /Certs ${certs} 0 R /VRI << >> >>` });
    expect(first(pdf)).toMatchObject({ modificationsAfter: 'archival', indication: 'TOTAL_PASSED', docMdp: { permission: 1, respected: true } });
  });

  it('a font rewritten to claim /Type /DSS is still a forbidden change', () => {
    const pdf = TestPdf.base().sign({ cms: { signer } });
    pdf.update({ 6: '<< /Type /DSS /Subtype /Type1 /BaseFont /ZapfDingbats >>' });
    expect(first(pdf)).toMatchObject({ modificationsAfter: 'other', indication: 'TOTAL_FAILED' });
  });

  it('the page content stream listed in the DSS before signing, rewritten afterwards, is a forbidden change', () => {
    const pdf = TestPdf.base();
    pdf.update({ 1: catalogWithDss('<< /Certs 4 0 R >>') });
    pdf.sign({ cms: { signer } });
    pdf.update({ 4: voidStream });
    expect(first(pdf)).toMatchObject({ modificationsAfter: 'other', indication: 'TOTAL_FAILED' });
  });

  it('an array both the page (/Contents) and the DSS (/Certs) use, rewritten afterwards, is a forbidden change', () => {
    const pdf = TestPdf.base();
    pdf.update({
      30: '[4 0 R]',
      31: '<< /Certs 30 0 R >>',
      3: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 30 0 R /Resources << /Font << /F1 6 0 R >> >> /Annots [7 0 R 8 0 R 9 0 R] >>',
      1: catalogWithDss('31 0 R'),
    });
    pdf.sign({ cms: { signer } });
    pdf.update({ 40: voidStream, 30: '[40 0 R]' });
    expect(first(pdf)).toMatchObject({ modificationsAfter: 'other', indication: 'TOTAL_FAILED' });
  });
});

describe('verifyPdf: lenient categories cannot alias page content', () => {
  it('a widget appearance (/AP /N) that is also the page content stream, rewritten afterwards, is a forbidden change', () => {
    const pdf = TestPdf.base();
    pdf.update({ 8: '<< /FT /Tx /T (Name) /V (Alice) /Type /Annot /Subtype /Widget /Rect [72 600 300 620] /P 3 0 R /AP << /N 4 0 R >> >>' });
    pdf.sign({ cms: { signer } });
    pdf.update({ 4: voidStream });
    expect(first(pdf)).toMatchObject({ modificationsAfter: 'other', indication: 'TOTAL_FAILED' });
  });

  it('catalog /Metadata pointing at the page content stream: rewriting it is a forbidden change, not a metadata warning', () => {
    const pdf = TestPdf.base();
    pdf.update({ 1: '<< /Type /Catalog /Pages 2 0 R /AcroForm 5 0 R /Metadata 4 0 R >>' });
    pdf.sign({ cms: { signer } });
    pdf.update({ 4: voidStream });
    expect(first(pdf)).toMatchObject({ modificationsAfter: 'other', indication: 'TOTAL_FAILED' });
  });

  it('an annotation dictionary that is also the page font, rewritten afterwards, is a forbidden change', () => {
    const pdf = TestPdf.base();
    pdf.update({
      6: '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Rect [0 0 0 0] >>',
      3: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 6 0 R >> >> /Annots [7 0 R 8 0 R 9 0 R 6 0 R] >>',
    });
    pdf.sign({ cms: { signer } });
    pdf.update({ 6: '<< /Type /Font /Subtype /Type1 /BaseFont /ZapfDingbats /Rect [0 0 0 0] >>' });
    expect(first(pdf)).toMatchObject({ modificationsAfter: 'other', indication: 'TOTAL_FAILED' });
  });

  it('a real annotation, appearance stream and metadata change stay allowed', () => {
    const pdf = TestPdf.base();
    const [annot, ap, meta] = [pdf.size, pdf.size + 1, pdf.size + 2];
    pdf.update({
      [ap]: '<< /Type /XObject /Subtype /Form /BBox [0 0 20 20] /Length 0 >>\nstream\n\nendstream',
      [annot]: `<< /Type /Annot /Subtype /Text /Rect [10 10 30 30] /Contents (note) /AP << /N ${ap} 0 R >> >>`,
      [meta]: '<< /Type /Metadata /Subtype /XML /Length 3 >>\nstream\nxmp\nendstream',
      3: `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 6 0 R >> >> /Annots [7 0 R 8 0 R 9 0 R ${annot} 0 R] >>`,
      1: `<< /Type /Catalog /Pages 2 0 R /AcroForm 5 0 R /Metadata ${meta} 0 R >>`,
    });
    pdf.sign({ cms: { signer } });
    pdf.update({
      [annot]: `<< /Type /Annot /Subtype /Text /Rect [10 10 30 30] /Contents (edited note) /AP << /N ${ap} 0 R >> >>`,
      [ap]: '<< /Type /XObject /Subtype /Form /BBox [0 0 20 20] /Length 2 >>\nstream\nq Q\nendstream',
      [meta]: '<< /Type /Metadata /Subtype /XML /Length 4 >>\nstream\nxmp2\nendstream',
    });
    expect(first(pdf)).toMatchObject({ modificationsAfter: 'annotations', indication: 'TOTAL_PASSED' });
  });
});

describe('verifyPdf: object streams rewritten in place', () => {
  /** Rewrites object stream 10 of a hybridBase() document with `edit` applied to its objects' text. */
  function rewriteObjectStream(pdf: TestPdf, edit: (body: string) => string): void {
    const text = pdf.bytes.toString('latin1');
    const m = /\n10 0 obj\n<< \/Type \/ObjStm \/N \d+ \/First (\d+) \/Length \d+ >>\nstream\n([^]*?)\nendstream/.exec(text)!;
    const objects = m[2]!.slice(Number(m[1])).split('\n').filter(Boolean).map(edit);
    let header = '';
    let content = '';
    objects.forEach((body, i) => {
      header += `${[5, 6, 7, 8, 9][i]} ${content.length} `;
      content += `${body}\n`;
    });
    const stream = `${header}\n${content}`;
    pdf.update({ 10: `<< /Type /ObjStm /N ${objects.length} /First ${header.length + 1} /Length ${stream.length} >>\nstream\n${stream}\nendstream` });
  }

  it('a font swapped by rewriting the object stream that holds it (its own entry unchanged) is a forbidden change', () => {
    const pdf = TestPdf.hybridBase().sign({ cms: { signer } });
    rewriteObjectStream(pdf, (body) => body.replace('/BaseFont /Helvetica', '/BaseFont /ZapfDingbats'));
    expect(first(pdf)).toMatchObject({ modificationsAfter: 'other', indication: 'TOTAL_FAILED' });
  });

  it('the same object stream written again with the same objects changes nothing', () => {
    const pdf = TestPdf.hybridBase().sign({ cms: { signer } });
    rewriteObjectStream(pdf, (body) => body);
    expect(first(pdf)).toMatchObject({ indication: 'TOTAL_PASSED' });
  });
});

describe('verifyPdf: the appearance of a signature already made', () => {
  it('giving a signed field a new /AP afterwards is a forbidden change', () => {
    const apStream = (text: string) => `<< /Type /XObject /Subtype /Form /BBox [0 0 200 50] /Length ${text.length} >>\nstream\n${text}\nendstream`;
    const pdf = TestPdf.base();
    const ap = pdf.size;
    pdf.update({ [ap]: apStream('BT /F1 12 Tf 0 20 Td (Signed by Alice) Tj ET') });
    pdf.sign({ cms: { signer } });
    const sigNum = pdf.size - 1;
    const withAp = `<< /FT /Sig /T (Signature1) /Type /Annot /Subtype /Widget /Rect [0 0 0 0] /P 3 0 R /F 132 /V ${sigNum} 0 R /AP << /N ${ap} 0 R >> >>`;
    // The signature's own update did not set /AP; setting it now changes a signature already made.
    pdf.update({ 7: withAp });
    expect(first(pdf)).toMatchObject({ modificationsAfter: 'other', indication: 'TOTAL_FAILED' });
    expect(first(pdf).errors.join(' ')).toMatch(/appearance \(\/AP\) of a signature already made/);
  });

  it('the appearance stream of a signed field rewritten in place is a forbidden change', () => {
    const pdf = TestPdf.base();
    const ap = pdf.size;
    const apStream = (text: string) => `<< /Type /XObject /Subtype /Form /BBox [0 0 200 50] /Length ${text.length} >>\nstream\n${text}\nendstream`;
    pdf.update({
      [ap]: apStream('BT /F1 12 Tf 0 20 Td (Signed by Alice) Tj ET'),
      7: `<< /FT /Sig /T (Signature1) /Type /Annot /Subtype /Widget /Rect [72 100 272 150] /P 3 0 R /F 4 /AP << /N ${ap} 0 R >> >>`,
    });
    pdf.sign({ cms: { signer }, extraFieldEntries: `/AP << /N ${ap} 0 R >>` });
    expect(first(pdf)).toMatchObject({ indication: 'TOTAL_PASSED' });
    pdf.update({ [ap]: apStream('BT /F1 36 Tf 0 10 Td (CONTRACT VOID) Tj ET') });
    expect(first(pdf)).toMatchObject({ modificationsAfter: 'other', indication: 'TOTAL_FAILED' });
    expect(first(pdf).errors.join(' ')).toMatch(/appearance stream of a signature already made/);
  });
});
