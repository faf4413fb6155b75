import { textString, type PdfString } from '../../pdf/objects.js';
import { printable, printableWidth, type FontKey } from './fonts.js';

/** Word wrapping by real glyph widths, PDF date strings, and numbers for content streams. */

/**
 * Greedy word wrap by glyph widths; words longer than a line are broken by code point (so a
 * character outside the BMP is never split in two). Linear in the text and progressing by
 * construction: every line holds at least one character, even when not even one fits the width
 * (it then overflows rather than looping).
 */
export function wrapText(text: string, font: FontKey, size: number, maxWidth: number): string[] {
  const lines: string[] = [];
  const spaceWidth = printableWidth(' ', font, size);
  let line = '';
  let lineWidth = 0;
  const flush = () => {
    lines.push(line);
    line = '';
    lineWidth = 0;
  };
  for (const word of printable(text, font).split(/ +/)) {
    const chars = [...word];
    const widths = chars.map((ch) => printableWidth(ch, font, size));
    const wordWidth = widths.reduce((a, b) => a + b, 0);
    if (line && lineWidth + spaceWidth + wordWidth <= maxWidth) {
      line += ` ${word}`;
      lineWidth += spaceWidth + wordWidth;
      continue;
    }
    if (line) flush();
    if (wordWidth <= maxWidth) {
      line = word;
      lineWidth = wordWidth;
      continue;
    }
    for (let i = 0; i < chars.length; i++) {
      if (line && lineWidth + widths[i]! > maxWidth) flush();
      line += chars[i];
      lineWidth += widths[i]!;
    }
  }
  if (line || lines.length === 0) lines.push(line);
  return lines;
}

/** D:YYYYMMDDHHmmSS+00'00' in UTC, as a PDF date string (§7.9.4). */
export function pdfDate(date: Date): PdfString {
  const p = (n: number) => String(n).padStart(2, '0');
  const text = `D:${date.getUTCFullYear()}${p(date.getUTCMonth() + 1)}${p(date.getUTCDate())}${p(date.getUTCHours())}${p(date.getUTCMinutes())}${p(date.getUTCSeconds())}+00'00'`;
  return textString(text);
}

/** A number in a content stream: at most three decimals. */
export const formatNumber = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(3).replace(/0+$/, '').replace(/\.$/, ''));
