import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { PDFDocument, PDFName, PDFString, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePkcs12, type SigningIdentity } from '../../../src/documents/sign/identity.js';
import { signPdf, signPdfReport } from '../../../src/documents/sign/sign-pdf.js';
import type { SignRequest } from '../../../src/documents/sign/types.js';
import { createTestPki, pdfsig, qpdfCheck, type TestPki } from './pki.js';
import { PdfView } from '../../../src/documents/pdf/document.js';
import { PdfRef } from '../../../src/documents/pdf/objects.js';
import { QpdfReader } from '../../support/pdf-attacks.js';
import { expectSoundSignedUpdate } from '../../support/signed-output.js';
import { startTsa } from './tsa-server.js';
import { TestPdf } from '../../unit/verify/helpers/pdf.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { answering } from '../../support/domain-error.js';

const CORPUS = `${CORPUS_DIR}`;
const corpus = (p: string) => readFileSync(path.join(CORPUS, p));

const request = (extra: Partial<SignRequest> = {}): SignRequest => ({
  signer: { name: 'Jane Q. Signer', email: 'jane@example.com', ip: '203.0.113.7', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/128.0' },
  auditTrail: [
    { type: 'ready', timestamp: '2025-03-01T09:00:00Z' },
    { type: 'field_change', timestamp: '2025-03-01T09:00:30Z', data: { field: 'company', value: 'ACME Ltd' } },
    { type: 'submit', timestamp: '2025-03-01T09:01:00Z' },
  ],
  eventId: 'evt-4711',
  reason: 'I approve this document',
  location: 'Brussels',
  requestId: 'req-abc-123',
  ...extra,
});

let pki: TestPki;
let qpdf: QpdfReader;
const file = (name: string, bytes: Buffer) => {
  const p = path.join(pki.dir, name);
  writeFileSync(p, bytes);
  return p;
};
const text = (pdf: Buffer) => execFileSync('pdftotext', ['-layout', file('text.pdf', pdf), '-'], { encoding: 'utf8' });
const pageCount = (pdf: Buffer) => Number(/Pages:\s+(\d+)/.exec(execFileSync('pdfinfo', [file('info.pdf', pdf)], { encoding: 'utf8' }))![1]);

/** The CMS in the last signature's /Contents, and the bytes its ByteRange covers. */
function lastSignature(pdf: Buffer): { cms: Buffer; signed: Buffer } {
  const s = pdf.toString('latin1');
  const at = s.lastIndexOf('/ByteRange [');
  const [a, b, c, d] = /\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/.exec(s.slice(at))!.slice(1).map(Number);
  const hex = s.slice(a + b + 1, c - 1);
  const contents = Buffer.from(hex, 'hex');
  const parsed = asn1js.fromBER(contents); // the CMS, without the zero padding after it
  return { cms: contents.subarray(0, parsed.offset), signed: Buffer.concat([pdf.subarray(a, a + b), pdf.subarray(c, c + d)]) };
}

function opensslCmsVerify(pdf: Buffer): string {
  const { cms, signed } = lastSignature(pdf);
  return execFileSync('openssl', ['cms', '-verify', '-binary', '-inform', 'DER', '-in', file('sig.p7s', cms), '-content', file('content.bin', signed),
    '-CAfile', path.join(pki.dir, 'root.pem'), '-purpose', 'any', '-out', '/dev/null'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

const cmsPrint = (pdf: Buffer) =>
  execFileSync('openssl', ['cms', '-cmsout', '-print', '-inform', 'DER', '-in', file('print.p7s', lastSignature(pdf).cms)], { encoding: 'utf8' });

beforeAll(() => {
  pki = createTestPki();
  qpdf = new QpdfReader();
});
afterAll(() => {
  pki?.cleanup();
  qpdf?.cleanup();
});

describe('signPdf (PAdES) checked by pdfsig, qpdf and openssl', () => {
  it('signs an unsigned PDF with RSA as an incremental update, with an audit page and audit-trail.json', async () => {
    const input = corpus('pdf-unsigned/signpdf-w3dummy.pdf');
    const { document: out, warnings, audit } = await signPdfReport(input, request(), pki.rsa);
    expect(warnings).toEqual([]);
    expectSoundSignedUpdate(input, out, qpdf);

    const sigs = pdfsig(pki, out);
    expect(sigs).toHaveLength(1);
    expect(sigs[0]).toMatchObject({ valid: true, total: true, certificateTrusted: true, subFilter: 'ETSI.CAdES.detached' });
    expect(sigs[0].raw).toContain('Total document signed');
    const update = out.subarray(input.length).toString('latin1');
    expect(update).toContain('/Name (Jane Q. Signer)');
    expect(update).toContain('/Reason (I approve this document)');
    expect(update).toMatch(/\/M \(D:\d{14}\+00'00'\)/);
    expect(qpdfCheck(pki, out)).toContain('No syntax or stream encoding errors');
    expect(opensslCmsVerify(out)).toBe('');

    const printed = cmsPrint(out);
    expect(printed).toContain('signingCertificateV2');
    expect(printed).toContain('messageDigest');
    expect(printed).not.toContain('signingTime');

    expect(pageCount(out)).toBe(pageCount(input) + 1);
    const pageText = text(out);
    expect(pageText).toContain('Electronic signature audit trail');
    expect(pageText).toContain('jane@example.com');
    expect(pageText).toContain('203.0.113.7');
    expect(pageText).toContain('evt-4711');
    expect(pageText).toContain('req-abc-123');
    expect(pageText).toContain(createHash('sha256').update(input).digest('hex'));
    expect(pageText.replace(/\s+/g, '')).toContain(pki.rsa.certificate.fingerprint256);
    expect(pageText).toContain('docproc');

    const listed = execFileSync('qpdf', ['--list-attachments', file('att.pdf', out)], { encoding: 'utf8' });
    expect(listed).toContain('audit-trail.json');
    const json = JSON.parse(execFileSync('qpdf', ['--show-attachment=audit-trail.json', file('att.pdf', out)], { encoding: 'utf8' }));
    expect(json).toEqual(JSON.parse(JSON.stringify(audit)));
    expect(json.events.map((e: { type: string }) => e.type)).toEqual(['ready', 'field_change', 'submit']);
  });

  it('stores a typical audit-trail.json as is and a large one (over 64 KB) with FlateDecode; qpdf reads both back', async () => {
    const input = corpus('pdf-unsigned/signpdf-w3dummy.pdf');
    const many = Array.from({ length: 600 }, (_, i) => ({ type: 'field_change' as const, timestamp: '2025-03-01T09:00:30Z', data: { field: `field ${i}`, value: 'x'.repeat(100) } }));
    for (const [auditTrail, compressed] of [[request().auditTrail, false], [[...many, { type: 'submit' as const, timestamp: '2025-03-01T09:01:00Z' }], true]] as const) {
      const { document: out, audit } = await signPdfReport(input, request({ auditTrail: [...auditTrail], certificate: { enabled: false } }), pki.rsa);
      expect(JSON.stringify(audit, null, 2).length > 64 * 1024).toBe(compressed);
      const fileSpec = /\/Type \/EmbeddedFile[^>]*/.exec(out.subarray(input.length).toString('latin1'))![0];
      expect(fileSpec.includes('/Filter /FlateDecode')).toBe(compressed);
      expect(qpdfCheck(pki, out)).toContain('No syntax or stream encoding errors');
      const json = JSON.parse(execFileSync('qpdf', ['--show-attachment=audit-trail.json', file('att.pdf', out)], { encoding: 'utf8', maxBuffer: 1 << 24 }));
      expect(json).toEqual(JSON.parse(JSON.stringify(audit)));
    }
  });

  it('signs with ECDSA and signs its own output again: first signature valid but not total, second total', async () => {
    const input = corpus('pdf-unsigned/signpdf-formexample.pdf');
    const once = await signPdf(input, request(), pki.ec);
    expectSoundSignedUpdate(input, once, qpdf);
    const twiceReport = await signPdfReport(once, request({ signer: { name: 'Second Signer', email: 'two@example.com' } }), pki.rsa);
    expectSoundSignedUpdate(once, twiceReport.document, qpdf);
    const sigs = pdfsig(pki, twiceReport.document);
    expect(sigs.map((s) => [s.valid, s.total, s.certificateTrusted])).toEqual([[true, false, true], [true, true, true]]);
    expect(twiceReport.document.subarray(0, once.length).equals(once)).toBe(true);
    expect(twiceReport.warnings.map((w) => w.message).join(' ')).toMatch(/already carries signatures/);
    expect(pageCount(twiceReport.document)).toBe(pageCount(once));
    expect(qpdfCheck(pki, twiceReport.document)).toContain('No syntax or stream encoding errors');
  });

  it('keeps an existing third-party signature valid (corpus signed-once) and adds no page', async () => {
    const input = corpus('pdf-signed/signpdf-signed-once.pdf');
    const { document: out, warnings } = await signPdfReport(input, request(), pki.rsa);
    expectSoundSignedUpdate(input, out, qpdf);
    const sigs = pdfsig(pki, out);
    expect(sigs).toHaveLength(2);
    expect(sigs[0].valid).toBe(true);
    expect(sigs[0].total).toBe(false);
    expect(sigs[1]).toMatchObject({ valid: true, total: true, certificateTrusted: true });
    expect(pageCount(out)).toBe(pageCount(input));
    expect(warnings.some((w) => w.message.includes('no audit page'))).toBe(true);
  });

  it('appends an xref stream to a PDF that uses xref and object streams', async () => {
    const doc = await PDFDocument.create();
    const font = await doc.embedFont(StandardFonts.Helvetica);
    for (let i = 0; i < 3; i++) doc.addPage().drawText(`Page ${i + 1} body text`, { x: 50, y: 700, font });
    const input = Buffer.from(await doc.save({ useObjectStreams: true }));
    expect(input.toString('latin1')).toContain('/XRef');
    const out = await signPdf(input, request(), pki.rsa);
    expectSoundSignedUpdate(input, out, qpdf);
    const tail = out.subarray(input.length).toString('latin1');
    expect(tail).toContain('/Type /XRef');
    expect(tail).not.toMatch(/^xref$/m);
    expect(pdfsig(pki, out)[0]).toMatchObject({ valid: true, total: true });
    expect(qpdfCheck(pki, out)).toContain('No syntax or stream encoding errors');
    expect(pageCount(out)).toBe(4);
    expect(text(out)).toContain('Page 3 body text');
  });

  it('draws a visible signature box where asked', async () => {
    const input = corpus('pdf-unsigned/signpdf-w3dummy.pdf');
    const out = await signPdf(input, request({ appearance: { page: 1, x: 300, y: 80, width: 220, height: 60 }, certificate: { enabled: false } }), pki.ec);
    expectSoundSignedUpdate(input, out, qpdf);
    expect(pdfsig(pki, out)[0]).toMatchObject({ valid: true, total: true });
    // Render the box region with poppler: the appearance must put ink there.
    const ppm = execFileSync('pdftoppm', ['-r', '72', '-f', '1', '-l', '1', '-gray', '-x', '300', '-W', '220', '-y', String(842 - 140), '-H', '60', file('vis.pdf', out)]);
    const pixels = ppm.subarray(ppm.length - 220 * 60);
    const dark = pixels.filter((p) => p < 128).length;
    expect(dark).toBeGreaterThan(200);
  });

  it('fills an existing empty signature field by name', async () => {
    const doc = await PDFDocument.create();
    const page = doc.addPage([595, 842]);
    const widget = doc.context.register(doc.context.obj({
      Type: 'Annot', Subtype: 'Widget', FT: 'Sig', T: PDFString.of('ApproverSignature'), Rect: [50, 50, 250, 110], F: 4, P: page.ref,
    }));
    page.node.set(PDFName.of('Annots'), doc.context.obj([widget]));
    doc.catalog.set(PDFName.of('AcroForm'), doc.context.obj({ Fields: [widget] }));
    const input = Buffer.from(await doc.save({ useObjectStreams: false }));
    const out = await signPdf(input, request({ appearance: { field: 'ApproverSignature' } }), pki.rsa);
    expectSoundSignedUpdate(input, out, qpdf);
    const sigs = pdfsig(pki, out);
    expect(sigs).toHaveLength(1);
    expect(sigs[0]).toMatchObject({ valid: true, total: true });
    expect(sigs[0].raw).toContain('ApproverSignature');
    await expect(signPdf(out, request({ appearance: { field: 'ApproverSignature' } }), pki.rsa)).rejects.toMatchObject({ code: 'FIELD_NOT_FOUND' });
    await expect(signPdf(input, request({ appearance: { field: 'Nope' } }), pki.rsa)).rejects.toMatchObject({ code: 'FIELD_NOT_FOUND' });
  });

  it('adds an RFC 3161 signature timestamp from a TSA (PAdES B-T) that openssl ts -verify accepts', async () => {
    const tsa = await startTsa(pki);
    try {
      // The TSA is reached through the outbound guard: a loopback TSA needs OUTBOUND_ALLOW_PRIVATE_ADDRESSES.
      await expect(signPdf(corpus('pdf-unsigned/signpdf-w3dummy.pdf'), request(), pki.rsa, { tsa: { url: tsa.url } })).rejects.toMatchObject(answering(502, 'SIGNING_ERROR'));
      expect(tsa.requests()).toBe(0);
      const out = await signPdf(corpus('pdf-unsigned/signpdf-w3dummy.pdf'), request(), pki.rsa, { tsa: { url: tsa.url, allowPrivateAddresses: true } });
      expectSoundSignedUpdate(corpus('pdf-unsigned/signpdf-w3dummy.pdf'), out, qpdf);
      expect(pdfsig(pki, out)[0]).toMatchObject({ valid: true, total: true });
      const { cms } = lastSignature(out);
      const signedData = new pkijs.SignedData({ schema: pkijs.ContentInfo.fromBER(cms).content });
      const [signerInfo] = signedData.signerInfos;
      const signatureValue = signerInfo.signature.getValue();
      expect(signerInfo.unsignedAttrs?.attributes.map((a) => a.type)).toEqual(['1.2.840.113549.1.9.16.2.14']);
      const token = (signerInfo.unsignedAttrs!.attributes[0].values[0] as asn1js.BaseBlock).valueBeforeDecodeView;
      const verified = execFileSync('openssl', ['ts', '-verify', '-data', file('sigvalue.bin', Buffer.from(signatureValue)), '-in', file('token.der', Buffer.from(token)), '-token_in',
        '-CAfile', path.join(pki.dir, 'root.pem'), '-untrusted', pki.tsaCert], { encoding: 'utf8' });
      expect(verified).toContain('Verification: OK');
      expect(opensslCmsVerify(out)).toBe('');
    } finally {
      await tsa.close();
    }
  });
});

describe('signing reads the document through the xref chain, as verification does', () => {
  it('edits the page the xref names, not the last body of that number in the file (pdf-lib\'s body scan took that one)', async () => {
    // Revision 2 writes a new body for page 3 (other text) and revision 3 points object 3 back at
    // revision 1's body: the document shows "Pay 100 EUR"; a reader that scans bodies sees "Pay 999 EUR".
    const input = TestPdf.base().update({
      3: '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 10 0 R /Resources << /Font << /F1 6 0 R >> >> >>',
      10: '<< /Length 43 >>\nstream\nBT /F1 24 Tf 72 700 Td (Pay 999 EUR) Tj ET\nendstream',
    }).bytes;
    const firstPageAt = /\n3 0 obj/.exec(input.toString('latin1'))!.index + 1;
    const pointedBack = appendXrefEntry(input, 3, firstPageAt);
    expect(text(pointedBack)).toContain('Pay 100 EUR');
    const out = await signPdf(pointedBack, request({ appearance: { page: 1, x: 300, y: 80, width: 200, height: 50 } }), pki.rsa);
    expectSoundSignedUpdate(pointedBack, out, qpdf);
    const shown = text(out);
    expect(shown).toContain('Pay 100 EUR');
    expect(shown).not.toContain('Pay 999 EUR');
    const view = new PdfView(out, out.length);
    const page = view.dict(view.refTo(3))!;
    expect(page.get('Contents')).toEqual(new PdfRef(4, 0));
    expect(view.array(page.get('Annots'))).toHaveLength(4);
  });
});

/** An update that only points object `num` at `offset` (an existing body) in a new xref section. */
function appendXrefEntry(pdf: Buffer, num: number, offset: number): Buffer {
  const view = new PdfView(pdf, pdf.length);
  const trailer = `<< /Size ${view.nextObjectNumber} /Root 1 0 R /Prev ${view.startxref} >>`;
  const xref = `xref\n${num} 1\n${String(offset).padStart(10, '0')} 00000 n\r\ntrailer\n${trailer}\nstartxref\n${pdf.length}\n%%EOF\n`;
  return Buffer.concat([pdf, Buffer.from(xref, 'latin1')]);
}

describe('signPdf with PKCS#12 files from the corpus', () => {
  const cases: [string, string, number][] = [
    ['certs/signpdf-certificate.p12', '', 0],
    ['certs/signpdf-withpass.p12', 'node-signpdf', 0],
    ['certs/signpdf-bundle.p12', '', 4],
  ];
  for (const [p12, passphrase, chainLength] of cases) {
    it(`signs with ${p12}`, async () => {
      const identity: SigningIdentity = parsePkcs12(corpus(p12), passphrase);
      expect(identity.chain).toHaveLength(chainLength);
      const out = await signPdf(corpus('pdf-unsigned/signpdf-w3dummy.pdf'), request(), identity);
      const sigs = pdfsig(pki, out);
      expect(sigs[0]).toMatchObject({ valid: true, total: true });
      expect(cmsPrint(out).match(/cert_info:/g)?.length).toBe(chainLength + 1);
    });
  }

  it('refuses a wrong passphrase and a file that is not PKCS#12 with 422 INVALID_CERTIFICATE', () => {
    expect(() => parsePkcs12(corpus('certs/signpdf-withpass.p12'), 'wrong')).toThrow(answering(422, 'INVALID_CERTIFICATE'));
    expect(() => parsePkcs12(Buffer.from('not a p12 at all'), '')).toThrow(expect.objectContaining({ code: 'INVALID_CERTIFICATE' }));
  });

  it('reads a PBES2/AES PKCS#12 made by OpenSSL 3 with an ECDSA key', () => {
    const p12 = path.join(pki.dir, 'ec.p12');
    execFileSync('openssl', ['pkcs12', '-export', '-inkey', path.join(pki.dir, 'ec.key'), '-in', path.join(pki.dir, 'ec.pem'), '-certfile', path.join(pki.dir, 'root.pem'), '-passout', 'pass:s3cret', '-out', p12]);
    const identity = parsePkcs12(readFileSync(p12), 's3cret');
    rmSync(p12);
    expect(identity.privateKey.asymmetricKeyType).toBe('ec');
    expect(identity.certificate.fingerprint256).toBe(pki.ec.certificate.fingerprint256);
    expect(identity.chain).toHaveLength(1);
  });
});

describe('signPdf refuses what it cannot sign with a clear 4xx', () => {
  it('non-PDF, truncated, encrypted, broken xref, no submit event', async () => {
    const w3 = corpus('pdf-unsigned/signpdf-w3dummy.pdf');
    await expect(signPdf(Buffer.from('hello, not a pdf'), request(), pki.rsa)).rejects.toMatchObject(answering(400, 'INVALID_FILE_FORMAT'));
    await expect(signPdf(w3.subarray(0, w3.length / 2), request(), pki.rsa)).rejects.toMatchObject(answering(422, 'UNPROCESSABLE_DOCUMENT'));
    const broken = Buffer.from(w3.toString('latin1').replace(/startxref\s+\d+/, 'startxref\n999999999'), 'latin1');
    await expect(signPdf(broken, request(), pki.rsa)).rejects.toMatchObject(answering(422, 'UNPROCESSABLE_DOCUMENT'));

    const plain = file('plain.pdf', w3);
    const locked = path.join(pki.dir, 'locked.pdf');
    execFileSync('qpdf', ['--encrypt', 'user', 'owner', '256', '--', plain, locked]);
    await expect(signPdf(readFileSync(locked), request(), pki.rsa)).rejects.toMatchObject(answering(422, 'ENCRYPTED_DOCUMENT'));

    await expect(signPdf(w3, request({ auditTrail: [{ type: 'ready', timestamp: '2025-01-01T00:00:00Z' }] }), pki.rsa))
      .rejects.toMatchObject(answering(400, 'VALIDATION_ERROR'));
    await expect(signPdf(w3, request({ appearance: { page: 9, x: 0, y: 0, width: 10, height: 10 } }), pki.rsa))
      .rejects.toMatchObject(answering(400, 'VALIDATION_ERROR'));
  });
});
