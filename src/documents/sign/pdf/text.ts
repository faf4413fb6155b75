import { printable, printableWidth, type FontKey } from './fonts.js';

/** Word wrapping by real glyph widths, and PDF text/date strings for dictionaries. */

/** Greedy word wrap by glyph widths; words longer than a line are broken. */
export function wrapText(text: string, font: FontKey, size: number, maxWidth: number): string[] {
  const lines: string[] = [];
  let line = '';
  const fits = (s: string) => printableWidth(s, font, size) <= maxWidth;
  for (const word of printable(text, font).split(/ +/)) {
    const candidate = line ? `${line} ${word}` : word;
    if (fits(candidate)) { line = candidate; continue; }
    if (line) lines.push(line);
    line = '';
    // Broken by code points, so a character outside the BMP is never split in two.
    let rest = [...word];
    while (!fits(rest.join(''))) {
      let cut = rest.length - 1;
      while (cut > 1 && !fits(rest.slice(0, cut).join(''))) cut--;
      lines.push(rest.slice(0, cut).join(''));
      rest = rest.slice(cut);
    }
    line = rest.join('');
  }
  if (line || lines.length === 0) lines.push(line);
  return lines;
}

/** A PDF text string: literal for printable ASCII, UTF-16BE hex with BOM otherwise. */
export function pdfTextString(text: string): string {
  if (/^[\x20-\x7e]*$/.test(text)) return `(${text.replace(/([\\()])/g, '\\$1')})`;
  const utf16 = Buffer.from(text, 'utf16le').swap16();
  return `<FEFF${utf16.toString('hex').toUpperCase()}>`;
}

/** D:YYYYMMDDHHmmSS+00'00' in UTC. */
export function pdfDate(date: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `(D:${date.getUTCFullYear()}${p(date.getUTCMonth() + 1)}${p(date.getUTCDate())}${p(date.getUTCHours())}${p(date.getUTCMinutes())}${p(date.getUTCSeconds())}+00'00')`;
}

export const formatNumber = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(3).replace(/0+$/, '').replace(/\.$/, ''));
