import { FormatRegistry } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../../src/errors/domain-error.js';
import { verifyPdf, type VerifyReport } from '../../../src/documents/verify/index.js';
import { VerifyResponseSchema } from '../../../src/routes/v1/schemas/verify.js';
import { makeLeaf, makeTestPki, type TestIdentity } from './helpers/pki.js';
import { buildCms } from './helpers/cms.js';
import { TestPdf } from './helpers/pdf.js';
import { httpStatusOf } from '../../../src/http/error-status.js';

let root: TestIdentity;
let signer: TestIdentity;
let ecSigner: TestIdentity;

beforeAll(() => {
  // Fastify validates formats with ajv-formats; TypeBox's Value needs them registered.
  if (!FormatRegistry.Has('date-time')) FormatRegistry.Set('date-time', (v) => /^\d{4}-\d\d-\d\dT/.test(v) && !Number.isNaN(Date.parse(v)));
  ({ root, signer, ecSigner } = makeTestPki());
});

const verify = (bytes: Uint8Array, trusted = true): VerifyReport => verifyPdf(bytes, { trustRoots: trusted ? [root.pem] : [] });
const signedOnce = () => TestPdf.base().sign({ cms: { signer } });

/** Rewrites the first /ByteRange array in place, keeping the file length. */
function rewriteByteRange(bytes: Buffer, values: Array<number | string>): Buffer {
  const copy = Buffer.from(bytes);
  const at = copy.indexOf('/ByteRange [', 0, 'latin1') + '/ByteRange '.length;
  const end = copy.indexOf(']', at, 'latin1') + 1;
  copy.write(`[${values.join(' ')}]`.padEnd(end - at, ' '), at, 'latin1');
  return copy;
}

function currentByteRange(bytes: Buffer): number[] {
  const m = /\/ByteRange \[(\d+) (\d+) (\d+) (\d+)\s*\]/.exec(bytes.toString('latin1'))!;
  return m.slice(1).map(Number);
}

function expectDomainError(fn: () => unknown, status: number, code: string) {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(DomainError);
    expect(httpStatusOf(err as DomainError)).toBe(status);
    expect((err as DomainError).code).toBe(code);
    return;
  }
  throw new Error('expected an DomainError');
}

describe('verifyPdf: good signatures', () => {
  it('passes a trusted RSA signature covering the whole file, and the report matches the schema', () => {
    const report = verify(signedOnce().bytes);
    expect(report.valid).toBe(true);
    expect(report.document).toMatchObject({ signatureCount: 1, pages: 1, revisions: 2, modifiedAfterLastSignature: false });
    expect(report.signer).toEqual({ name: 'Test Signer', email: 'signer@example.com', organization: 'Docproc Tests' });
    expect(report.signatures).toHaveLength(1);
    const [sig] = report.signatures;
    expect(sig).toMatchObject({ field: 'Signature1', intact: true, cryptoValid: true, trusted: true, coverage: 'entireFile', modificationsAfter: 'none', indication: 'TOTAL_PASSED', subIndication: null, reason: 'Approval' });
    expect(sig!.signer!.chain).toEqual(['CN=Test Signer, O=Docproc Tests, emailAddress=signer@example.com', 'CN=Docproc Test Root, O=Docproc Tests']);
    expect(report.unsignedFields).toEqual(['Signature2']);
    expect([...Value.Errors(VerifyResponseSchema, report)].map((e) => `${e.path}: ${e.message}`)).toEqual([]);
  });

  it('reports an untrusted chain as INDETERMINATE/NO_CERTIFICATE_CHAIN_FOUND while intact and cryptoValid', () => {
    const report = verify(signedOnce().bytes, false);
    expect(report.valid).toBe(false);
    expect(report.signatures[0]).toMatchObject({ intact: true, cryptoValid: true, trusted: false, indication: 'INDETERMINATE', subIndication: 'NO_CERTIFICATE_CHAIN_FOUND' });
    expect(report.reason).toMatch(/trusted root/);
  });

  it('verifies ECDSA and RSA-PSS signatures; the first covers its revision and only a signature followed', () => {
    const pdf = TestPdf.base().sign({ cms: { signer: ecSigner, scheme: 'ecdsa', digest: 'sha384' } }).sign({ fieldNum: 9, cms: { signer, scheme: 'pss', digest: 'sha512' } });
    const report = verify(pdf.bytes);
    expect(report.valid).toBe(true);
    expect(report.signers.map((s) => s.name)).toEqual(['EC Signer', 'Test Signer']);
    expect(report.signatures[0]).toMatchObject({ signatureAlgorithm: 'ECDSA with SHA-384', coverage: 'entireRevision', modificationsAfter: 'signatures', indication: 'TOTAL_PASSED' });
    expect(report.signatures[1]).toMatchObject({ signatureAlgorithm: 'RSA-PSS with SHA-512', coverage: 'entireFile', modificationsAfter: 'none', indication: 'TOTAL_PASSED' });
  });

  it('reports a certification signature with its DocMDP permission', () => {
    const report = verify(TestPdf.base().sign({ cms: { signer }, docMdp: 2 }).bytes);
    expect(report.signatures[0]).toMatchObject({ kind: 'certification', docMdp: { permission: 2, respected: true }, indication: 'TOTAL_PASSED' });
  });
});

describe('verifyPdf: is not fooled', () => {
  it('flags one flipped byte inside the signed range as HASH_FAILURE', () => {
    const bytes = Buffer.from(signedOnce().bytes);
    const at = bytes.indexOf('Pay 100 EUR', 0, 'latin1');
    bytes.write('Pay 900 EUR', at, 'latin1');
    const report = verify(bytes);
    expect(report.valid).toBe(false);
    expect(report.signatures[0]).toMatchObject({ intact: false, indication: 'TOTAL_FAILED', subIndication: 'HASH_FAILURE' });
  });

  it('rejects byte ranges that overlap, do not start at 0, or whose gap is not the /Contents string', () => {
    const bytes = signedOnce().bytes;
    const [, b, c, d] = currentByteRange(bytes) as [number, number, number, number];
    const overlap = verify(rewriteByteRange(bytes, [0, c + 10, c, d]));
    expect(overlap.signatures[0]).toMatchObject({ coverage: 'unclear', indication: 'TOTAL_FAILED', subIndication: 'FORMAT_FAILURE' });
    const notFromZero = verify(rewriteByteRange(bytes, [1, b - 1, c, d]));
    expect(notFromZero.signatures[0]).toMatchObject({ coverage: 'unclear', subIndication: 'FORMAT_FAILURE' });
    const wrongGap = verify(rewriteByteRange(bytes, [0, b + 2, c, d]));
    expect(wrongGap.signatures[0]).toMatchObject({ coverage: 'unclear', subIndication: 'FORMAT_FAILURE' });
    expect(wrongGap.signatures[0]!.errors.join(' ')).toMatch(/Contents/);
  });

  it('rejects a byte range past the end of the file as SIGNED_DATA_NOT_FOUND and malformed ones too', () => {
    const bytes = signedOnce().bytes;
    const [, b, c, d] = currentByteRange(bytes) as [number, number, number, number];
    expect(verify(rewriteByteRange(bytes, [0, b, c, d + 5000])).signatures[0]).toMatchObject({ coverage: 'unclear', indication: 'INDETERMINATE', subIndication: 'SIGNED_DATA_NOT_FOUND' });
    expect(verify(rewriteByteRange(bytes, [0, b, c])).signatures[0]).toMatchObject({ subIndication: 'SIGNED_DATA_NOT_FOUND' });
    expect(verify(rewriteByteRange(bytes, [0, -1, c, d])).signatures[0]).toMatchObject({ subIndication: 'SIGNED_DATA_NOT_FOUND' });
  });

  it('detects a signature dictionary rewritten in a later revision (replaced /Reason)', () => {
    const pdf = signedOnce();
    const text = pdf.bytes.toString('latin1');
    const sigNum = pdf.size - 1;
    const start = text.indexOf(`${sigNum} 0 obj\n`) + `${sigNum} 0 obj\n`.length;
    const body = text.slice(start, text.indexOf('\nendobj', start));
    pdf.update({ [sigNum]: body.replace('(Approval)', '(Forged reason)') });
    const report = verify(pdf.bytes);
    expect(report.valid).toBe(false);
    expect(report.document.modifiedAfterLastSignature).toBe(true);
    expect(report.signatures[0]).toMatchObject({ intact: true, cryptoValid: true, reason: 'Approval', modificationsAfter: 'other', indication: 'TOTAL_FAILED' });
    expect(report.signatures[0]!.errors.join(' ')).toMatch(/signature dictionary was changed/);
  });

  it('detects page content changed and pages added after signing', () => {
    const changed = signedOnce().update({ 4: '<< /Length 44 >>\nstream\nBT /F1 24 Tf 72 700 Td (Pay 900 EUR) Tj ET\nendstream' });
    expect(verify(changed.bytes).signatures[0]).toMatchObject({ modificationsAfter: 'other', indication: 'TOTAL_FAILED', subIndication: 'FORMAT_FAILURE' });
    const added = signedOnce();
    const pageNum = added.size;
    added.update({ [pageNum]: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>', 2: `<< /Type /Pages /Kids [3 0 R ${pageNum} 0 R] /Count 2 >>` });
    const report = verify(added.bytes);
    expect(report.document.pages).toBe(2);
    expect(report.signatures[0]).toMatchObject({ modificationsAfter: 'other', indication: 'TOTAL_FAILED' });
    expect(report.signatures[0]!.errors.join(' ')).toMatch(/page tree/);
  });

  it('detects shadow attacks: a redefined font and an overlay added to the page resources', () => {
    const font = signedOnce().update({ 6: '<< /Type /Font /Subtype /Type1 /BaseFont /Courier >>' });
    expect(verify(font.bytes).signatures[0]).toMatchObject({ modificationsAfter: 'other', indication: 'TOTAL_FAILED' });
    const overlay = signedOnce();
    const xo = overlay.size;
    overlay.update({
      [xo]: '<< /Type /XObject /Subtype /Form /BBox [0 0 612 792] /Length 8 >>\nstream\n0 0 m S\n\nendstream',
      3: `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 6 0 R >> /XObject << /X1 ${xo} 0 R >> >> /Annots [7 0 R 8 0 R 9 0 R] >>`,
    });
    const report = verify(overlay.bytes);
    expect(report.signatures[0]).toMatchObject({ modificationsAfter: 'other', indication: 'TOTAL_FAILED' });
    expect(report.signatures[0]!.errors.join(' ')).toMatch(/Resources/);
  });

  it('classifies form filling and annotations, and enforces DocMDP', () => {
    const fill = (pdf: TestPdf) => pdf.update({ 8: '<< /FT /Tx /T (Name) /V (Bob) /Type /Annot /Subtype /Widget /Rect [72 600 300 620] /P 3 0 R >>' });
    const approval = verify(fill(signedOnce()).bytes);
    expect(approval.signatures[0]).toMatchObject({ modificationsAfter: 'formFilling', indication: 'TOTAL_PASSED' });
    expect(approval.document.modifiedAfterLastSignature).toBe(true);
    const p2 = verify(fill(TestPdf.base().sign({ cms: { signer }, docMdp: 2 })).bytes);
    expect(p2.signatures[0]).toMatchObject({ modificationsAfter: 'formFilling', docMdp: { permission: 2, respected: true }, indication: 'TOTAL_PASSED' });
    const p1 = verify(fill(TestPdf.base().sign({ cms: { signer }, docMdp: 1 })).bytes);
    expect(p1.signatures[0]).toMatchObject({ docMdp: { permission: 1, respected: false }, indication: 'TOTAL_FAILED' });

    const annotate = (pdf: TestPdf) => {
      const n = pdf.size;
      return pdf.update({
        [n]: '<< /Type /Annot /Subtype /Text /Rect [10 10 30 30] /Contents (note) >>',
        3: `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 6 0 R >> >> /Annots [7 0 R 8 0 R 9 0 R ${n} 0 R] >>`,
      });
    };
    expect(verify(annotate(signedOnce()).bytes).signatures[0]).toMatchObject({ modificationsAfter: 'annotations', indication: 'TOTAL_PASSED' });
    expect(verify(annotate(TestPdf.base().sign({ cms: { signer }, docMdp: 2 })).bytes).signatures[0]).toMatchObject({ modificationsAfter: 'annotations', indication: 'TOTAL_FAILED', docMdp: { respected: false } });
    expect(verify(annotate(TestPdf.base().sign({ cms: { signer }, docMdp: 3 })).bytes).signatures[0]).toMatchObject({ indication: 'TOTAL_PASSED', docMdp: { respected: true } });
  });

  it('flags bytes appended after the signature outside any revision', () => {
    const bytes = Buffer.concat([signedOnce().bytes, Buffer.from('garbage appended here\n')]);
    const report = verify(bytes);
    expect(report.document.modifiedAfterLastSignature).toBe(true);
    expect(report.signatures[0]).toMatchObject({ modificationsAfter: 'other', indication: 'TOTAL_FAILED' });
  });

  it('rejects a CMS without message digest, with an unsupported algorithm, or without certificates', () => {
    expect(verify(TestPdf.base().sign({ cms: { signer, withoutMessageDigest: true } }).bytes).signatures[0]).toMatchObject({ intact: false, indication: 'TOTAL_FAILED', subIndication: 'FORMAT_FAILURE' });
    const md5 = verify(TestPdf.base().sign({ cms: { signer, digestOidOverride: '1.2.840.113549.2.5' } }).bytes).signatures[0]!;
    expect(md5).toMatchObject({ indication: 'INDETERMINATE', subIndication: 'CRYPTO_CONSTRAINTS_FAILURE_NO_POE' });
    expect(md5.errors.join(' ')).toMatch(/md5/);
    expect(verify(TestPdf.base().sign({ cms: { signer, certificates: [] } }).bytes).signatures[0]).toMatchObject({ signer: null, indication: 'INDETERMINATE', subIndication: 'NO_SIGNING_CERTIFICATE_FOUND' });
  });

  it('does not pass SHA-1 signatures or certificates outside their validity', () => {
    expect(verify(TestPdf.base().sign({ cms: { signer, digest: 'sha1' } }).bytes).signatures[0]).toMatchObject({ intact: true, cryptoValid: true, indication: 'INDETERMINATE', subIndication: 'CRYPTO_CONSTRAINTS_FAILURE_NO_POE' });
    const later = verifyPdf(signedOnce().bytes, { trustRoots: [root.pem], now: new Date('2100-01-01') });
    expect(later.signatures[0]).toMatchObject({ trusted: true, indication: 'INDETERMINATE', subIndication: 'OUT_OF_BOUNDS_NO_POE' });
  });

  it('a certificate already expired at the claimed signing time is TOTAL_FAILED/EXPIRED; one expired since is OUT_OF_BOUNDS_NO_POE', () => {
    const expired = makeLeaf(root, { expired: true, subject: '/CN=Expired Signer/O=Docproc Tests' });
    const after = verify(TestPdf.base().sign({ cms: { signer: expired, signingTime: new Date('2010-01-01') } }).bytes).signatures[0]!;
    expect(after).toMatchObject({ intact: true, cryptoValid: true, certificateValidAtSigningTime: false, indication: 'TOTAL_FAILED', subIndication: 'EXPIRED' });
    expect(after.errors.join(' ')).toMatch(/had expired .* at the claimed signing time/);
    const during = verify(TestPdf.base().sign({ cms: { signer: expired, signingTime: new Date('2001-06-01') } }).bytes).signatures[0]!;
    expect(during).toMatchObject({ certificateValidAtSigningTime: true, indication: 'INDETERMINATE', subIndication: 'OUT_OF_BOUNDS_NO_POE' });
  });

  it('reports a document with only empty signature fields as not signed', () => {
    const report = verify(TestPdf.base().bytes);
    expect(report).toMatchObject({ valid: false, signer: null, signers: [], document: { signatureCount: 0 } });
    expect(report.signatures).toEqual([]);
    expect(report.unsignedFields).toEqual(['Signature1', 'Signature2']);
    expect(report.reason).toMatch(/no signatures/);
  });
});

describe('verifyPdf: signers and algorithms as the other validators read them', () => {
  const passes = (report: VerifyReport) => report.signatures[0]!;

  it('finds the signer identified by SubjectKeyIdentifier', () => {
    const sig = passes(verify(TestPdf.base().sign({ cms: { signer, sidBySubjectKeyId: true } }).bytes));
    expect(sig).toMatchObject({ intact: true, cryptoValid: true, indication: 'TOTAL_PASSED' });
    expect(sig.signer?.commonName).toBe('Test Signer');
  });

  it('finds the signer by the RFC 5280 key identifier when its certificate has no SubjectKeyIdentifier extension', () => {
    const bare = makeLeaf(root, { noSubjectKeyId: true, subject: '/CN=No SKI Signer/O=Docproc Tests' });
    expect(/Subject Key Identifier/.test(bare.cert.toString())).toBe(false);
    const sig = passes(verify(TestPdf.base().sign({ cms: { signer: bare, sidBySubjectKeyId: true } }).bytes));
    expect(sig).toMatchObject({ intact: true, cryptoValid: true, indication: 'TOTAL_PASSED' });
    expect(sig.signer?.commonName).toBe('No SKI Signer');
  });

  it('RSA-PSS with absent parameters is RFC 4055\'s SHA-1 default (verified, then refused as weak)', () => {
    const content = (signed: Buffer) => buildCms(signed, { signer, scheme: 'pss', digest: 'sha1', pssDefaultParams: true });
    const sig = passes(verify(TestPdf.base().sign({ cms: content }).bytes));
    expect(sig).toMatchObject({ intact: true, cryptoValid: true, indication: 'INDETERMINATE', subIndication: 'CRYPTO_CONSTRAINTS_FAILURE_NO_POE' });
  });

  it.each([
    ['P-256', 'prime256v1', 'sha256'],
    ['brainpoolP256r1', 'brainpoolP256r1', 'sha256'],
    ['brainpoolP384r1', 'brainpoolP384r1', 'sha384'],
  ] as const)('plain ECDSA (BSI TR-03111, r‖s) on %s verifies', (_label, curve, digest) => {
    const plainSigner = makeLeaf(root, { curve, subject: `/CN=Plain ${curve}/O=Docproc Tests` });
    const sig = passes(verify(TestPdf.base().sign({ cms: { signer: plainSigner, scheme: 'ecdsa-plain', digest } }).bytes));
    expect(sig).toMatchObject({ intact: true, cryptoValid: true, trusted: true, indication: 'TOTAL_PASSED' });
    expect(sig.signatureAlgorithm).toMatch(/plain r‖s, BSI TR-03111/);
  });

  it.each([['ED25519', 'Ed25519'], ['ED448', 'Ed448']] as const)('%s signatures verify', (algorithm, name) => {
    const edSigner = makeLeaf(root, { eddsa: algorithm, subject: `/CN=${name} Signer/O=Docproc Tests` });
    const sig = passes(verify(TestPdf.base().sign({ cms: { signer: edSigner, scheme: 'eddsa' } }).bytes));
    expect(sig).toMatchObject({ intact: true, cryptoValid: true, indication: 'TOTAL_PASSED', signatureAlgorithm: name });
  });

  it('a signature made with another key of the same curve does not verify', () => {
    const a = makeLeaf(root, { curve: 'brainpoolP256r1' });
    const b = makeLeaf(root, { curve: 'brainpoolP256r1' });
    const cms = (signed: Buffer) => buildCms(signed, { signer: b, scheme: 'ecdsa-plain', certificates: [a] });
    const sig = passes(verify(TestPdf.base().sign({ cms }).bytes));
    expect(sig.indication).not.toBe('TOTAL_PASSED');
  });

  it('an algorithm nobody can check: INDETERMINATE with the reason, intact still reports the digest', () => {
    const sig = passes(verify(TestPdf.base().sign({ cms: { signer, signatureOidOverride: '1.2.3.4.5.6.7' } }).bytes));
    expect(sig).toMatchObject({ intact: true, cryptoValid: false, indication: 'INDETERMINATE', subIndication: 'CRYPTO_CONSTRAINTS_FAILURE_NO_POE' });
    expect(sig.errors.join(' ')).toMatch(/unsupported algorithm.*1\.2\.3\.4\.5\.6\.7/);
    const tampered = TestPdf.base().sign({ cms: { signer, signatureOidOverride: '1.2.3.4.5.6.7' } });
    const at = tampered.find('Pay 100 EUR');
    tampered.bytes.write('9', at + 4, 'latin1');
    // Altered content is known to be altered whatever the signature algorithm (ETSI: HASH_FAILURE).
    const altered = passes(verify(tampered.bytes));
    expect(altered).toMatchObject({ intact: false, indication: 'TOTAL_FAILED', subIndication: 'HASH_FAILURE' });
    expect(altered.errors.join(' ')).toMatch(/unsupported algorithm.*1\.2\.3\.4\.5\.6\.7/);
  });
});

describe('verifyPdf: changes after signing as EU DSS and pyHanko classify them', () => {
  const first = (pdf: TestPdf) => verify(pdf.bytes).signatures[0]!;

  it('/DA and /DR added to the AcroForm with a new signature are signature changes', () => {
    const pdf = signedOnce();
    pdf.update({ 5: '<< /Fields [7 0 R 8 0 R 9 0 R] /SigFlags 3 /DA (/Helv 0 Tf 0 g) /DR << /Font << /Helv 6 0 R >> >> >>' });
    pdf.sign({ cms: { signer }, fieldNum: 9 });
    const report = verify(pdf.bytes);
    expect(report.signatures.map((s) => [s.modificationsAfter, s.indication])).toEqual([['signatures', 'TOTAL_PASSED'], ['none', 'TOTAL_PASSED']]);
  });

  it('/DR losing or redefining a resource is not a signature change', () => {
    const withDr = () => TestPdf.base().sign({ cms: { signer }, acroFormExtra: '/DR << /Font << /Helv 6 0 R >> >>' });
    const grown = withDr().update({ 5: '<< /Fields [7 0 R 8 0 R 9 0 R] /SigFlags 3 /DR << /Font << /Helv 6 0 R /ZaDb 6 0 R >> >> >>' });
    expect(first(grown)).toMatchObject({ modificationsAfter: 'archival', indication: 'TOTAL_PASSED' });
    const redefined = withDr().update({ 5: '<< /Fields [7 0 R 8 0 R 9 0 R] /SigFlags 3 /DR << /Font << /Helv 2 0 R >> >> >>' });
    expect(first(redefined).modificationsAfter).toBe('formFilling');
  });

  it('an annotation-appearance name tree added with an annotation is an annotation change', () => {
    const pdf = signedOnce();
    const [annot, ap, tree] = [pdf.size, pdf.size + 1, pdf.size + 2];
    pdf.update({
      [ap]: '<< /Type /XObject /Subtype /Form /BBox [0 0 20 20] /Length 0 >>\nstream\n\nendstream',
      [tree]: `<< /Names [(stamp1) ${ap} 0 R] >>`,
      [annot]: `<< /Type /Annot /Subtype /Stamp /Rect [10 10 30 30] /AP << /N ${ap} 0 R >> >>`,
      3: `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 6 0 R >> >> /Annots [7 0 R 8 0 R 9 0 R ${annot} 0 R] >>`,
      1: `<< /Type /Catalog /Pages 2 0 R /AcroForm 5 0 R /Names << /AP ${tree} 0 R >> >>`,
    });
    expect(first(pdf)).toMatchObject({ modificationsAfter: 'annotations', indication: 'TOTAL_PASSED' });
  });

  it('an object a signed page referenced before it existed, defined after signing, is a forbidden change', () => {
    const text = 'BT /F1 36 Tf 72 400 Td (CONTRACT VOID) Tj ET';
    const prepared = TestPdf.base().update({ 3: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents [4 0 R 50 0 R] /Resources << /Font << /F1 6 0 R >> >> /Annots [7 0 R 8 0 R 9 0 R] >>' });
    const signed = prepared.sign({ cms: { signer } });
    expect(first(signed)).toMatchObject({ indication: 'TOTAL_PASSED' });
    signed.update({ 50: `<< /Length ${text.length} >>\nstream\n${text}\nendstream` });
    expect(first(signed)).toMatchObject({ modificationsAfter: 'other', indication: 'TOTAL_FAILED' });
    expect(first(signed).errors.join(' ')).toMatch(/object 50, referenced by signed object 3 .*absent when it was signed/);
  });

  it('DSS with VRI and a document time-stamp after a P1 certification: LTV updates, still passing', () => {
    const pdf = TestPdf.base().sign({ cms: { signer }, docMdp: 1 });
    const sigNum = pdf.size - 1;
    const [dss, vri, cert, crl] = [pdf.size, pdf.size + 1, pdf.size + 2, pdf.size + 3];
    pdf.update({
      [cert]: `<< /Length ${signer.der.length} >>\nstream\n${signer.der.toString('latin1')}\nendstream`,
      [crl]: '<< /Length 4 >>\nstream\n0000\nendstream',
      [vri]: `<< /0123456789ABCDEF0123456789ABCDEF01234567 << /Type /VRI /Cert [${cert} 0 R] /CRL [${crl} 0 R] /TU (D:20240102000000Z) >> >>`,
      [dss]: `<< /Type /DSS /Certs [${cert} 0 R] /CRLs [${crl} 0 R] /VRI ${vri} 0 R >>`,
      1: `<< /Type /Catalog /Pages 2 0 R /AcroForm 5 0 R /Perms << /DocMDP ${sigNum} 0 R >> /DSS ${dss} 0 R /Extensions << /ESIC << /BaseVersion /1.7 /ExtensionLevel 5 >> >> >>`,
    });
    expect(first(pdf)).toMatchObject({ modificationsAfter: 'archival', indication: 'TOTAL_PASSED', docMdp: { permission: 1, respected: true } });
    pdf.sign({ fieldNum: 9, type: 'DocTimeStamp', subFilter: 'ETSI.RFC3161', cms: { signer } });
    expect(first(pdf)).toMatchObject({ modificationsAfter: 'archival', indication: 'TOTAL_PASSED', docMdp: { permission: 1, respected: true } });
    // An approval signature is not an LTV update: P1 forbids it.
    const approved = TestPdf.base().sign({ cms: { signer }, docMdp: 1 }).sign({ fieldNum: 9, cms: { signer } });
    expect(first(approved)).toMatchObject({ modificationsAfter: 'signatures', indication: 'TOTAL_FAILED', docMdp: { permission: 1, respected: false } });
  });

  it('a new invisible signature field after a P2 certification is archival, signing it a signature change; a new text field is not allowed', () => {
    const pdf = TestPdf.base().sign({ cms: { signer }, docMdp: 2 });
    const field = pdf.addSignatureField('Witness');
    expect(first(pdf)).toMatchObject({ modificationsAfter: 'archival', indication: 'TOTAL_PASSED' });
    pdf.sign({ fieldNum: field, fieldName: 'Witness', cms: { signer } });
    const report = verify(pdf.bytes);
    expect(report.signatures.map((s) => [s.field, s.modificationsAfter, s.indication])).toEqual([['Signature1', 'signatures', 'TOTAL_PASSED'], ['Witness', 'none', 'TOTAL_PASSED']]);
    const text = TestPdf.base().sign({ cms: { signer }, docMdp: 2 });
    const n = text.size;
    text.update({ [n]: '<< /FT /Tx /T (Injected) /V (CONTRACT VOID) /Type /Annot /Subtype /Widget /Rect [72 400 500 440] /P 3 0 R >>', 5: `<< /Fields [7 0 R 8 0 R 9 0 R ${n} 0 R] /SigFlags 3 >>` });
    expect(first(text)).toMatchObject({ modificationsAfter: 'other', indication: 'TOTAL_FAILED' });
  });

  it('an embedded file added to the name tree after signing stays a forbidden change', () => {
    const pdf = signedOnce();
    const spec = pdf.size;
    pdf.update({ [spec]: '<< /Type /Filespec /F (x.txt) >>', 1: `<< /Type /Catalog /Pages 2 0 R /AcroForm 5 0 R /Names << /EmbeddedFiles << /Names [(x.txt) ${spec} 0 R] >> >> >>` });
    expect(first(pdf)).toMatchObject({ modificationsAfter: 'other', indication: 'TOTAL_FAILED' });
  });

  it('the page tree does not change after signing: no rule explains /Kids, /Count, inherited attributes or any other entry of a node', () => {
    for (const extra of ['/Rotate 90', '/MediaBox [0 0 100 100]', '/Resources << /Font << /F1 2 0 R >> >>', '/PieceInfo << /docproc << /LastModified (D:20240101) >> >>']) {
      const shown = signedOnce().update({ 2: `<< /Type /Pages /Kids [3 0 R] /Count 1 ${extra} >>` });
      expect(first(shown), extra).toMatchObject({ modificationsAfter: 'other', indication: 'TOTAL_FAILED' });
    }
  });
});

describe('verifyPdf: hybrid-reference files (ISO 32000-1 §7.5.8.4)', () => {
  /** Appends a hybrid update: the table maps `tableObjects`, its hidden xref stream maps `streamPointers`. */
  function hybridUpdate(pdf: TestPdf, tableObjects: Record<number, string>, streamPointers: Record<number, number>): Buffer {
    const parts: string[] = [pdf.bytes.toString('latin1')];
    const length = () => parts.reduce((n, p) => n + p.length, 0);
    const offsets = new Map<number, number>();
    for (const [num, body] of Object.entries(tableObjects)) {
      offsets.set(Number(num), length());
      parts.push(`${num} 0 obj\n${body}\nendobj\n`);
    }
    const streamNum = pdf.size + 10;
    const rows = Object.entries(streamPointers).map(([num, at]) => [Number(num), at] as const);
    const be = (v: number, w: number) => Array.from({ length: w }, (_, i) => String.fromCharCode(Math.floor(v / 256 ** (w - 1 - i)) % 256)).join('');
    const data = rows.map(([, at]) => be(1, 1) + be(at, 4) + be(0, 2)).join('');
    const streamAt = length();
    parts.push(`${streamNum} 0 obj\n<< /Type /XRef /W [1 4 2] /Index [${rows.map(([n]) => `${n} 1`).join(' ')}] /Size ${streamNum + 1} /Length ${data.length} >>\nstream\n${data}\nendstream\nendobj\n`);
    const xrefAt = length();
    const prev = Number([...pdf.bytes.toString('latin1').matchAll(/startxref\s+(\d+)/g)].at(-1)![1]);
    let xref = 'xref\n';
    for (const [num, at] of [...offsets].sort((a, b) => a[0] - b[0])) xref += `${num} 1\n${String(at).padStart(10, '0')} 00000 n\r\n`;
    parts.push(`${xref}trailer\n<< /Size ${streamNum + 1} /Root 1 0 R /Prev ${prev} /XRefStm ${streamAt} >>\nstartxref\n${xrefAt}\n%%EOF\n`);
    return Buffer.from(parts.join(''), 'latin1');
  }

  it('a Word-style hybrid file (compressed objects free in the table, listed by /XRefStm) shows its fields', () => {
    const report = verify(TestPdf.hybridBase().bytes);
    expect(report.unsignedFields).toEqual(['Signature1', 'Signature2']);
    expect(report.document.warnings).toEqual([]);
    const signed = verify(TestPdf.hybridBase().sign({ cms: { signer } }).bytes);
    expect(signed.signatures.map((s) => [s.field, s.indication, s.modificationsAfter])).toEqual([['Signature1', 'TOTAL_PASSED', 'none']]);
  });

  it('a certified PDF whose last trailer repeats the old /XRefStm is still signed (the table wins)', () => {
    const pdf = TestPdf.hybridBase();
    pdf.sign({ cms: { signer }, docMdp: 1, trailerExtra: `/XRefStm ${pdf.firstXrefStm}` });
    const report = verify(pdf.bytes);
    expect(report.reason).not.toMatch(/no signatures/);
    expect(report.signatures).toHaveLength(1);
    expect(report.signatures[0]).toMatchObject({ field: 'Signature1', kind: 'certification', docMdp: { permission: 1, respected: true }, indication: 'TOTAL_PASSED' });
    expect(report.valid).toBe(true);
  });

  it('the table points the page content at "CONTRACT VOID", the /XRefStm at the original: forged', () => {
    for (const pdf of [signedOnce(), TestPdf.hybridBase().sign({ cms: { signer } }), TestPdf.base().sign({ cms: { signer }, docMdp: 2 })]) {
      const original = pdf.find('4 0 obj\n');
      const text = 'BT /F1 36 Tf 72 400 Td (CONTRACT VOID) Tj ET';
      const forged = hybridUpdate(pdf, { 4: `<< /Length ${text.length} >>\nstream\n${text}\nendstream` }, { 4: original });
      const report = verify(forged);
      expect(report.valid).toBe(false);
      expect(report.signatures[0]).toMatchObject({ modificationsAfter: 'other', indication: 'TOTAL_FAILED' });
    }
  });

  it('an /XRefStm that only restates an unchanged object leaves the signature passing', () => {
    const pdf = signedOnce();
    const original = pdf.find('4 0 obj\n');
    // The /XRefStm only restates object 4 as it was: nothing changed, so nothing is reported.
    const restated = verify(hybridUpdate(pdf, {}, { 4: original }));
    expect(restated.signatures[0]).toMatchObject({ indication: 'TOTAL_PASSED' });
    // Only an xref stream nothing references was written.
    expect(['none', 'archival']).toContain(restated.signatures[0]!.modificationsAfter);
  });
});

describe('verifyPdf: damaged cross-reference chains', () => {
  /** Six signatures, each in its own revision, on fields Sig1..Sig6. */
  function sixSignatures(): TestPdf {
    const pdf = TestPdf.base();
    for (let i = 1; i <= 6; i++) {
      const field = pdf.addSignatureField(`Sig${i}`);
      pdf.sign({ cms: { signer }, fieldNum: field, fieldName: `Sig${i}` });
    }
    return pdf;
  }

  it.each([
    ['/Prev 0', 0],
    ['/Prev pointing into the middle of an object', 40],
    ['/Prev past the end of the file', 10_000_000],
  ])('a broken chain (%s) in the last update still finds all six signatures, with a warning', (_label, prev) => {
    const pdf = sixSignatures();
    const n = pdf.size;
    pdf.breakNextPrev(prev).update({ [n]: '<< /Type /Annot /Subtype /Text /Rect [10 10 30 30] /Contents (note) >>' });
    const report = verify(pdf.bytes);
    expect(report.document.signatureCount).toBe(6);
    expect(report.signatures.map((s) => s.field)).toEqual(['Sig1', 'Sig2', 'Sig3', 'Sig4', 'Sig5', 'Sig6']);
    expect(report.signatures.every((s) => s.intact && s.cryptoValid)).toBe(true);
    expect(report.document.warnings.join(' ')).toMatch(/cross-reference chain is broken/);
  });

  it.each([2, 4, 6])('a /Prev 0 in the update that made signature %i still finds all six, with a warning', (broken) => {
    const pdf = TestPdf.base();
    for (let i = 1; i <= 6; i++) {
      const field = pdf.addSignatureField(`Sig${i}`);
      if (i === broken) pdf.breakNextPrev(0);
      pdf.sign({ cms: { signer }, fieldNum: field, fieldName: `Sig${i}` });
    }
    const report = verify(pdf.bytes);
    expect(report.signatures.map((s) => s.field)).toEqual(['Sig1', 'Sig2', 'Sig3', 'Sig4', 'Sig5', 'Sig6']);
    expect(report.signatures.every((s) => s.intact && s.cryptoValid)).toBe(true);
    expect(report.signatures.every((s) => s.modificationsAfter === 'none' || s.modificationsAfter === 'signatures'), JSON.stringify(report.signatures.map((s) => [s.modificationsAfter, s.errors]))).toBe(true);
    expect(report.document.warnings.join(' ')).toMatch(/cross-reference chain is broken/);
  });

  it('a sound file has no structural warnings', () => {
    expect(verify(sixSignatures().bytes).document.warnings).toEqual([]);
  });
});

describe('verifyPdf: /Encrypt that encrypts nothing', () => {
  it.each([['/Encrypt null'], ['/Encrypt 99 0 R (a reference to no object, i.e. null)']])('%s is not encryption: the signature verifies', (extra) => {
    const entry = extra.split(' (')[0]!;
    const report = verify(TestPdf.base().sign({ cms: { signer }, trailerExtra: entry }).bytes);
    expect(report.valid, report.reason).toBe(true);
    expect(report.signatures[0]).toMatchObject({ indication: 'TOTAL_PASSED', modificationsAfter: 'none' });
  });
});

describe('verifyPdf: bad input', () => {
  it('answers 4xx for non-PDF, unreadable, encrypted and oversized input', () => {
    expectDomainError(() => verify(Buffer.from('hello world')), 400, 'INVALID_FILE_FORMAT');
    expectDomainError(() => verify(Buffer.from('%PDF-1.7\n1 0 obj << /Type /Foo >> endobj\n')), 400, 'INVALID_FILE_FORMAT');
    const encrypted = TestPdf.base().update({ 20: '<< /Filter /Standard /V 2 /R 3 /O <00> /U <00> /P -4 >>' }, ' /Encrypt 20 0 R');
    expectDomainError(() => verify(encrypted.bytes), 422, 'ENCRYPTED_DOCUMENT');
    expectDomainError(() => verifyPdf(signedOnce().bytes, { trustRoots: [], maxBytes: 1000 }), 413, 'FILE_TOO_LARGE');
  });

  it('never crashes on mutated input: every outcome is a report or an DomainError', () => {
    const original = signedOnce().bytes;
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 150; i++) {
      const bytes = Buffer.from(original);
      const mode = i % 3;
      if (mode === 0) for (let k = 0; k < 20; k++) bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256);
      const input = mode === 1 ? bytes.subarray(0, Math.floor(random() * bytes.length)) : mode === 2 ? Buffer.concat([bytes.subarray(0, 500), bytes.subarray(500 + Math.floor(random() * 2000))]) : bytes;
      try {
        const report = verify(input);
        expect(typeof report.valid).toBe('boolean');
      } catch (err) {
        expect(err).toBeInstanceOf(DomainError);
      }
    }
  });
});

describe('verifyPdf: the whole-file SHA-256 continues from the signed ranges (the file is hashed once)', () => {
  it('document.sha256 is the SHA-256 of the whole file, with one signature, two, and an update after them', async () => {
    const { createHash } = await import('node:crypto');
    const { root, signer } = makeTestPki();
    const once = TestPdf.base().sign({ cms: { signer } });
    const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
    const first = verifyPdf(once.bytes, { trustRoots: [root.pem] });
    expect(first.valid, first.reason).toBe(true);
    expect(first.document.sha256).toBe(sha(once.bytes));
    const twice = once.sign({ fieldNum: 9, cms: { signer } });
    const second = verifyPdf(twice.bytes, { trustRoots: [root.pem] });
    expect(second.document.signatureCount).toBe(2);
    expect(second.document.sha256).toBe(sha(twice.bytes));
    const updated = twice.update({ 20: '<< /Title (later) >>' }).bytes;
    expect(verifyPdf(updated, { trustRoots: [root.pem] }).document.sha256).toBe(sha(updated));
    const sha1 = TestPdf.base().sign({ cms: { signer, digest: 'sha1' } }).bytes;
    expect(verifyPdf(sha1, { trustRoots: [root.pem] }).document.sha256).toBe(sha(sha1));
  });
});
