import fc from 'fast-check';
import { PDFDocument } from 'pdf-lib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signPdfReport } from '../../../src/documents/sign/sign-pdf.js';
import type { SignRequest } from '../../../src/documents/sign/types.js';
import { createTestPki, pdfsig, type TestPki } from './pki.js';
import { expectSoundSignedUpdate } from '../../support/signed-output.js';

/**
 * Signing with the audit page on any page size, 1 to 14 400 pt, portrait or landscape, with long
 * words in every script: the layout always ends (a receipt-sized PDF once ended the process).
 */
let pki: TestPki;
beforeAll(() => {
  pki = createTestPki();
});
afterAll(() => pki?.cleanup());

async function pdfOfSize(width: number, height: number): Promise<Buffer> {
  const doc = await PDFDocument.create();
  doc.addPage([width, height]);
  return Buffer.from(await doc.save());
}

const request = (name: string, reason: string): SignRequest => ({
  signer: { name, email: 'receipt@example.com' },
  reason,
  auditTrail: [{ type: 'submit', timestamp: '2025-03-01T09:01:00Z', data: { note: reason } }],
});

describe('audit page on every page size', () => {
  it.each([
    [164, 400],
    [200, 600],
    [227, 800],
    [1, 1],
    [14_400, 14_400],
  ])('a %i × %i pt page signs, with a valid signature', async (width, height) => {
    const input = await pdfOfSize(width, height);
    const result = await signPdfReport(input, request('Receipt Signer', 'Payment received'), pki.rsa);
    expectSoundSignedUpdate(input, result.document);
    expect(pdfsig(pki, result.document)[0]).toMatchObject({ valid: true, total: true });
  });

  it('property: any size and any text ends in a signed PDF', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 14_400 }),
        fc.integer({ min: 1, max: 14_400 }),
        fc.oneof(fc.string({ unit: 'grapheme', maxLength: 80 }), fc.constantFrom('مرحبا بالعالم', '中文文本', '👩‍👩‍👧‍👦', 'W'.repeat(10_000))),
        async (width, height, text) => {
          const input = await pdfOfSize(width, height);
          const result = await signPdfReport(input, request(text.slice(0, 200) || 'x', text || 'reason'), pki.rsa);
          expectSoundSignedUpdate(input, result.document);
        },
      ),
      { seed: 2026, numRuns: 25 },
    );
  }, 120_000);

  it('property: rotated, inverted and offset page boxes with a visible signature anywhere end in a valid signature', async () => {
    const box = fc.record({
      x: fc.integer({ min: -2_000, max: 2_000 }),
      y: fc.integer({ min: -2_000, max: 2_000 }),
      width: fc.integer({ min: 1, max: 14_400 }),
      height: fc.integer({ min: 1, max: 14_400 }),
      inverted: fc.boolean(),
      rotate: fc.constantFrom(0, 90, 180, 270, -90, 450),
    });
    const visible = fc.record({ x: fc.integer({ min: -500, max: 15_000 }), y: fc.integer({ min: -500, max: 15_000 }), width: fc.integer({ min: 1, max: 2_000 }), height: fc.integer({ min: 1, max: 2_000 }) });
    const names = fc.oneof(fc.string({ unit: 'grapheme', minLength: 2, maxLength: 60 }), fc.constantFrom('מרים כהן', '王小明', 'e\u0301\u0301 Zoë 👩‍👩‍👧‍👦', 'W'.repeat(200)));
    await fc.assert(
      fc.asyncProperty(box, visible, names, async (page, rect, name) => {
        const doc = await PDFDocument.create();
        const p = doc.addPage([612, 792]);
        const { x, y, width, height } = page;
        if (page.inverted) p.setMediaBox(x + width, y + height, -width, -height);
        else p.setMediaBox(x, y, width, height);
        p.setRotation({ type: 'degrees', angle: page.rotate } as never);
        const pdf = Buffer.from(await doc.save());
        const signed = await signPdfReport(pdf, { ...request(name.trim().length >= 2 ? name : 'Ann Signer', 'Layout'), appearance: { page: 1, ...rect } }, pki.rsa);
        expectSoundSignedUpdate(pdf, signed.document);
        expect(signed.document.toString('latin1')).not.toMatch(/NaN|Infinity/);
      }),
      { seed: 2027, numRuns: 20 },
    );
    // One of them checked end to end by an independent verifier.
    const doc = await PDFDocument.create();
    doc.addPage([612, 792]).setMediaBox(612, 792, -612, -792);
    const signed = await signPdfReport(Buffer.from(await doc.save()), { ...request('Inverted Box', 'Layout'), appearance: { page: 1, x: 10, y: 10, width: 150, height: 40 } }, pki.rsa);
    expect(pdfsig(pki, signed.document)[0]).toMatchObject({ valid: true, total: true });
  }, 180_000);
});
