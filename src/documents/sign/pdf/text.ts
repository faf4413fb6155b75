import { StandardFontEmbedder, StandardFonts } from 'pdf-lib';

/**
 * Text for content streams in the standard 14 Helvetica fonts (WinAnsi), with wrapping by
 * real glyph widths, and PDF text/date strings for dictionaries.
 */
export type FontKey = 'regular' | 'bold';

type EmbedderFontName = Parameters<typeof StandardFontEmbedder.for>[0];
const embedders: Record<FontKey, StandardFontEmbedder> = {
  regular: StandardFontEmbedder.for(StandardFonts.Helvetica as unknown as EmbedderFontName),
  bold: StandardFontEmbedder.for(StandardFonts.HelveticaBold as unknown as EmbedderFontName),
};

export const BASE_FONT: Record<FontKey, string> = { regular: 'Helvetica', bold: 'Helvetica-Bold' };

const encodable = new Map<string, boolean>();

/** Replaces what WinAnsi cannot show by '?', and control characters by spaces. */
export function toWinAnsi(text: string): string {
  let out = '';
  for (const ch of text.normalize('NFC')) {
    if (ch === '\t' || ch === '\n' || ch === '\r') { out += ' '; continue; }
    let ok = encodable.get(ch);
    if (ok === undefined) {
      try {
        embedders.regular.encodeText(ch);
        ok = ch.codePointAt(0)! >= 0x20;
      } catch {
        ok = false;
      }
      if (encodable.size < 10_000) encodable.set(ch, ok);
    }
    out += ok ? ch : '?';
  }
  return out;
}

export const textWidth = (text: string, font: FontKey, size: number) => embedders[font].widthOfTextAtSize(toWinAnsi(text), size);

/** "<hex>" operand for Tj, in WinAnsi. */
export const showText = (text: string, font: FontKey) => embedders[font].encodeText(toWinAnsi(text)).toString();

/** Greedy word wrap by glyph widths; words longer than a line are broken. */
export function wrapText(text: string, font: FontKey, size: number, maxWidth: number): string[] {
  const lines: string[] = [];
  let line = '';
  const fits = (s: string) => textWidth(s, font, size) <= maxWidth;
  for (const word of toWinAnsi(text).split(/ +/)) {
    const candidate = line ? `${line} ${word}` : word;
    if (fits(candidate)) { line = candidate; continue; }
    if (line) lines.push(line);
    line = '';
    let rest = word;
    while (!fits(rest)) {
      let cut = rest.length - 1;
      while (cut > 1 && !fits(rest.slice(0, cut))) cut--;
      lines.push(rest.slice(0, cut));
      rest = rest.slice(cut);
    }
    line = rest;
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
