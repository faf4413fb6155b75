import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { printable, printableWidth } from '../../../src/documents/sign/pdf/fonts.js';
import { wrapText } from '../../../src/documents/sign/pdf/text.js';
import { appearanceContent } from '../../../src/documents/sign/pdf/appearance.js';

/**
 * Text layout makes progress by construction: whatever the text and the width (negative included),
 * wrapping ends, keeps every character in order, and only a line of one character may overflow.
 */
const scripts = fc.oneof(
  fc.string({ maxLength: 300 }),
  fc.string({ unit: 'grapheme', maxLength: 200 }),
  fc.constantFrom('مرحبا بالعالم هذا نص عربي طويل', 'שלום עולם', '中文文本没有空格也能换行吗', '👩‍👩‍👧‍👦🎉🇧🇪 emoji', 'e\u0301\u0301\u0301 combining', ''),
  fc.integer({ min: 1, max: 10_000 }).map((n) => 'W'.repeat(n)),
);

describe('wrapText', () => {
  it('ends, keeps the text, and never overflows except with a single character', () => {
    fc.assert(
      fc.property(scripts, fc.double({ min: -200, max: 14_400, noNaN: true }), fc.constantFrom(6, 9, 16), (text, width, size) => {
        const lines = wrapText(text, 'regular', size, width);
        expect(lines.length).toBeGreaterThan(0);
        expect(lines.join('').replace(/ /g, '')).toBe(printable(text, 'regular').replace(/ /g, ''));
        for (const line of lines) {
          if ([...line].length > 1) expect(printableWidth(line, 'regular', size)).toBeLessThanOrEqual(Math.max(width, 0) + 1e-9);
        }
      }),
      { seed: 17, numRuns: 400 },
    );
  });

  it('is linear on a 10 000-character word at a tiny width (one character per line)', () => {
    const lines = wrapText('x'.repeat(10_000), 'regular', 9, 0.5);
    expect(lines).toHaveLength(10_000);
  });
});

describe('visible signature appearance', () => {
  const names = fc.oneof(scripts, fc.constantFrom('W'.repeat(10_000), 'ا'.repeat(5_000), '字'.repeat(5_000)));
  const side = fc.oneof(fc.double({ min: -14_400, max: 14_400, noNaN: true }), fc.constantFrom(0, 1, 1e-6, -1, 14_400));

  it('any box (tiny, huge, zero, inverted) and any name: a finite content stream with a readable font size', () => {
    const showText = (text: string) => `(${text.length})`;
    fc.assert(
      fc.property(names, side, side, fc.option(scripts, { nil: undefined }), (name, width, height, reason) => {
        const content = appearanceContent({ signerName: name || 'x', signedAt: new Date('2026-01-01T00:00:00Z'), reason }, width, height, showText);
        expect(content).not.toMatch(/NaN|Infinity/);
        for (const m of content.matchAll(/\/F1 ([\d.]+) Tf/g)) expect(Number(m[1])).toBeGreaterThanOrEqual(1);
        expect(content.split('\n').length).toBeLessThanOrEqual(5);
      }),
      { seed: 23, numRuns: 500 },
    );
  });
});
