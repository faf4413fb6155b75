import { escapeXml, stripInvalidXmlChars } from '../ooxml/xml-text.js';

/** Text → WordprocessingML helpers shared by tags, content controls, tables and signatures. */

/** Clean, escaped text for a w:t, with line breaks turned into `<w:br/>` between w:t elements. */
export function textRunContent(text: string): string {
  const lines = stripInvalidXmlChars(text).replace(/\r\n?/g, '\n').split('\n');
  return lines.map((line) => `<w:t xml:space="preserve">${escapeXml(line)}</w:t>`).join('<w:br/>');
}

/** One run holding `text` with the given run properties XML (`<w:rPr>…</w:rPr>` or ''). */
export function textRun(text: string, runProps = ''): string {
  return `<w:r>${runProps}${textRunContent(text)}</w:r>`;
}

/** Normalises a colour like "#FF0000", "ff0000" or "red" to the 6-hex-digit form Word expects. */
const NAMED_COLORS: Record<string, string> = {
  black: '000000', white: 'FFFFFF', red: 'FF0000', green: '008000', blue: '0000FF', navy: '000080',
  gray: '808080', grey: '808080', orange: 'FFA500', purple: '800080', darkblue: '00008B', teal: '008080',
};

export function toHexColor(color: string | undefined, fallback: string): string {
  if (!color) return fallback;
  const trimmed = color.trim().toLowerCase();
  if (NAMED_COLORS[trimmed]) return NAMED_COLORS[trimmed];
  const hex = trimmed.replace(/^#/, '');
  if (/^[0-9a-f]{6}$/.test(hex)) return hex.toUpperCase();
  if (/^[0-9a-f]{3}$/.test(hex)) return hex.split('').map((c) => c + c).join('').toUpperCase();
  return fallback;
}

/** Text value of a field or table cell as the caller meant it. */
export function valueToText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value);
}
