import { expect } from 'vitest';
import { PdfView } from '../../src/documents/pdf/document.js';
import { pdfEqual } from '../../src/documents/pdf/objects.js';
import { findSignatureFields } from '../../src/documents/pdf/structure.js';
import type { QpdfReader } from './pdf-attacks.js';
import { expectAgreementWithQpdf } from './qpdf-agreement.js';

/**
 * A signed output re-read by the one PDF reader (documents/pdf, the reader verification trusts):
 * the input bytes are kept, one sound section of the input's kind is appended whose /Prev is the
 * input's startxref, objects the update did not set read exactly as before, and the newest
 * signature's /ByteRange covers the whole file but its /Contents. With a qpdf reader, every
 * revision also reads the same in qpdf (test/support/qpdf-agreement.ts).
 */
export function expectSoundSignedUpdate(input: Buffer, output: Buffer, qpdf?: QpdfReader): PdfView {
  expect(output.subarray(0, input.length).equals(input), 'the input bytes are kept').toBe(true);
  const before = new PdfView(input, input.length);
  const after = new PdfView(output, output.length);
  expect(after.reconstructed).toBe(false);
  expect(after.recovery).toEqual([]);
  const added = after.sectionOffsets.length - before.sectionOffsets.length;
  expect(added).toBeGreaterThanOrEqual(1);
  expect(after.sectionOffsets.slice(added)).toEqual(before.sectionOffsets);
  expect(after.sectionKinds.slice(0, added).every((kind) => kind === before.sectionKinds[0])).toBe(true);

  const changed = new Set<number>();
  for (const [num, entry] of after.entries) {
    const old = before.entries.get(num);
    if (!old || JSON.stringify(old) !== JSON.stringify(entry)) changed.add(num);
  }
  for (const num of before.entries.keys()) {
    if (!changed.has(num)) expect(pdfEqual(after.getObject(num), before.getObject(num)), `object ${num} reads as before`).toBe(true);
  }

  const ranges = findSignatureFields(after)
    .map((field) => after.array(after.dict(field.value)?.get('ByteRange')))
    .filter((range): range is number[] => range?.length === 4 && range.every((n) => typeof n === 'number'));
  const whole = ranges.filter((range) => range[0] === 0 && range[2]! + range[3]! === output.length);
  expect(whole, 'exactly one signature the reader finds through the form covers the whole file').toHaveLength(1);
  const [, gapStart, gapEnd] = whole[0]!;
  expect(gapStart).toBeGreaterThanOrEqual(input.length);
  expect([output[gapStart!], output[gapEnd! - 1]]).toEqual([0x3c, 0x3e]);
  if (qpdf) expectAgreementWithQpdf(qpdf, 'signed output', output);
  return after;
}
