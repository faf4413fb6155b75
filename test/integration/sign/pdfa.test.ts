import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PDFDocument, PDFName, StandardFonts } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signPdfReport } from '../../../src/documents/sign/sign-pdf.js';
import type { SignRequest } from '../../../src/documents/sign/types.js';
import { verifyPdf } from '../../../src/documents/verify/verify-pdf.js';
import { createTestPki, pdfsig, type TestPki } from './pki.js';
import { expectSoundSignedUpdate } from '../../support/signed-output.js';

/**
 * PDF/A inputs stay within what their part allows: no JSON attachment in PDF/A-1/-2, an associated
 * file (/AF, /AFRelationship) in PDF/A-3, no untagged audit page in a level A document, and a warning
 * naming what was left out. (Conformance itself needs veraPDF, which this machine does not have;
 * these tests check the structure with qpdf and pdfdetach, and the signatures with pdfsig.)
 */
let pki: TestPki;
beforeAll(() => {
  pki = createTestPki();
});
afterAll(() => pki?.cleanup());

const request: SignRequest = {
  signer: { name: 'Ada PDF/A', email: 'ada@example.com' },
  auditTrail: [{ type: 'submit', timestamp: '2025-03-01T09:01:00Z' }],
};

async function pdfAClaiming(part: number, conformance: string, attributeForm = true): Promise<Buffer> {
  const doc = await PDFDocument.create();
  const page = doc.addPage([595, 842]);
  page.drawText('An archival document', { x: 72, y: 760, size: 18, font: await doc.embedFont(StandardFonts.Helvetica) });
  const id = attributeForm
    ? `<rdf:Description rdf:about="" xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/" pdfaid:part="${part}" pdfaid:conformance="${conformance}"/>`
    : `<rdf:Description rdf:about="" xmlns:pdfaid="http://www.aiim.org/pdfa/ns/id/"><pdfaid:part>${part}</pdfaid:part><pdfaid:conformance>${conformance}</pdfaid:conformance></rdf:Description>`;
  const xmp = `<?xpacket begin="\uFEFF" id="W5M0MpCehiHzreSzNTczkc9d"?><x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#">${id}</rdf:RDF></x:xmpmeta><?xpacket end="w"?>`;
  const stream = doc.context.stream(xmp, { Type: 'Metadata', Subtype: 'XML' });
  doc.catalog.set(PDFName.of('Metadata'), doc.context.register(stream));
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}

function inspect(pdf: Buffer): { pages: number; attachments: string[]; afRelationship: boolean } {
  const file = path.join(pki.dir, `pdfa-${process.hrtime.bigint()}.pdf`);
  writeFileSync(file, pdf);
  try {
    const pages = Number(execFileSync('qpdf', ['--show-npages', file], { encoding: 'utf8' }).trim());
    const attachments = execFileSync('pdfdetach', ['-list', file], { encoding: 'utf8' }).split('\n').slice(1).map((l) => l.replace(/^\s*\d+:\s*/, '').trim()).filter(Boolean);
    return { pages, attachments, afRelationship: /\/AFRelationship\s*\/Data/.test(pdf.toString('latin1')) };
  } finally {
    rmSync(file, { force: true });
  }
}

describe('signing PDF/A documents', () => {
  it.each([
    [1, 'B'],
    [2, 'B'],
  ])('PDF/A-%i%s: audit page, but no attachment, and a warning saying so', async (part, conformance) => {
    const input = await pdfAClaiming(part, conformance);
    const result = await signPdfReport(input, request, pki.rsa);
    expectSoundSignedUpdate(input, result.document);
    expect(inspect(result.document)).toMatchObject({ pages: 2, attachments: [] });
    expect(result.warnings.map((w) => w.message).join(' ')).toMatch(new RegExp(`PDF/A-${part}b.*audit-trail.json was left out; the audit record is in the signature dictionary`));
    expect(verifyPdf(result.document, { trustRoots: [pki.rootPem] }).signatures[0]!.auditTrail).toMatchObject({ signer: { name: 'Ada PDF/A' } });
    expect(pdfsig(pki, result.document)[0]).toMatchObject({ valid: true, total: true });
  });

  it('PDF/A-2a (tagged): neither an untagged audit page nor an attachment; the record is in the signature', async () => {
    const result = await signPdfReport(await pdfAClaiming(2, 'A', false), request, pki.rsa);
    expect(inspect(result.document)).toMatchObject({ pages: 1, attachments: [] });
    expect(verifyPdf(result.document, { trustRoots: [pki.rootPem] }).signatures[0]!.auditTrail).toMatchObject({ signer: { email: 'ada@example.com' } });
    expect(result.warnings.map((w) => w.message).join(' ')).toMatch(/no audit page was added, because an untagged page would break it/);
  });

  it('PDF/A-3b: the audit file is an associated file (/AF, /AFRelationship), and the page is added', async () => {
    const result = await signPdfReport(await pdfAClaiming(3, 'B'), request, pki.rsa);
    expect(inspect(result.document)).toEqual({ pages: 2, attachments: ['audit-trail.json'], afRelationship: true });
    expect(result.warnings).toEqual([]);
  });

  it('PDF/A-3b countersigned: no second attachment (the catalog stays as signed), the record is in the signature, both signatures valid', async () => {
    const once = (await signPdfReport(await pdfAClaiming(3, 'B'), request, pki.rsa)).document;
    const twice = await signPdfReport(once, request, pki.rsa);
    expect(inspect(twice.document).attachments).toEqual(['audit-trail.json']);
    expect(twice.warnings.map((w) => w.message).join(' ')).toMatch(/the audit record is in this signature's dictionary/);
    expect(verifyPdf(twice.document, { trustRoots: [pki.rootPem] }).signatures.map((s) => s.auditTrail !== null)).toEqual([true, true]);
    expect(pdfsig(pki, twice.document).map((s) => s.valid)).toEqual([true, true]);
  });

  it('a PDF without a PDF/A claim is unchanged in behaviour (page and attachment)', async () => {
    const doc = await PDFDocument.create();
    doc.addPage();
    const result = await signPdfReport(Buffer.from(await doc.save()), request, pki.rsa);
    expect(inspect(result.document)).toMatchObject({ pages: 2, attachments: ['audit-trail.json'] });
  });
});
