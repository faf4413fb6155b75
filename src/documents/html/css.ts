import type { Alignment, NumberFormat, RunMarks } from '../model/types.js';

/** The inline CSS that matters in a Word document, read from a `style` attribute. */
export interface InlineStyle {
  marks: RunMarks;
  align?: Alignment;
  background?: string;
  pageBreakBefore?: boolean;
  pageBreakAfter?: boolean;
  hidden?: boolean;
  /** list-style-type, when it is a numbering Word has. */
  numberFormat?: NumberFormat;
}

const LIST_STYLE_TYPES: Record<string, NumberFormat> = {
  decimal: 'decimal', 'lower-alpha': 'lowerLetter', 'lower-latin': 'lowerLetter', 'upper-alpha': 'upperLetter',
  'upper-latin': 'upperLetter', 'lower-roman': 'lowerRoman', 'upper-roman': 'upperRoman',
};

/** A class named after a list-style-type (`<ol class="lower-roman">`, as pandoc's HTML writes it). */
export function listClassFormat(classNames: string | undefined): NumberFormat | undefined {
  for (const name of classNames?.toLowerCase().split(/\s+/) ?? []) if (LIST_STYLE_TYPES[name]) return LIST_STYLE_TYPES[name];
  return undefined;
}

/** The numbering of an `<ol type>` attribute (1, a, A, i, I). */
export function parseListType(type: string | undefined): NumberFormat | undefined {
  switch (type?.trim()) {
    case '1': return 'decimal';
    case 'a': return 'lowerLetter';
    case 'A': return 'upperLetter';
    case 'i': return 'lowerRoman';
    case 'I': return 'upperRoman';
    default: return undefined;
  }
}

const NAMED_COLORS: Record<string, string> = {
  black: '000000', white: 'FFFFFF', red: 'FF0000', green: '008000', blue: '0000FF', yellow: 'FFFF00',
  gray: '808080', grey: '808080', silver: 'C0C0C0', maroon: '800000', purple: '800080', fuchsia: 'FF00FF',
  lime: '00FF00', olive: '808000', navy: '000080', teal: '008080', aqua: '00FFFF', orange: 'FFA500',
  pink: 'FFC0CB', brown: 'A52A2A', darkgray: 'A9A9A9', darkgrey: 'A9A9A9', lightgray: 'D3D3D3', lightgrey: 'D3D3D3',
  darkred: '8B0000', darkgreen: '006400', darkblue: '00008B', gold: 'FFD700', indigo: '4B0082', violet: 'EE82EE',
  cyan: '00FFFF', magenta: 'FF00FF', lightblue: 'ADD8E6', lightgreen: '90EE90', lightyellow: 'FFFFE0', beige: 'F5F5DC',
  whitesmoke: 'F5F5F5', gainsboro: 'DCDCDC', coral: 'FF7F50', salmon: 'FA8072', tomato: 'FF6347', crimson: 'DC143C',
};

/** CSS colour → RRGGBB; undefined for transparent, inherit, or anything unparseable. */
export function parseColor(value: string): string | undefined {
  const v = value.trim().toLowerCase();
  let m = /^#([0-9a-f]{6})$/.exec(v);
  if (m) return m[1].toUpperCase();
  m = /^#([0-9a-f])([0-9a-f])([0-9a-f])$/.exec(v);
  if (m) return `${m[1]}${m[1]}${m[2]}${m[2]}${m[3]}${m[3]}`.toUpperCase();
  m = /^rgba?\(\s*(\d{1,3})[\s,]+(\d{1,3})[\s,]+(\d{1,3})(?:[\s,/]+([\d.]+%?))?\s*\)$/.exec(v);
  if (m) {
    if (m[4] !== undefined && parseFloat(m[4]) === 0) return undefined;
    return [m[1], m[2], m[3]].map((n) => Math.min(255, Number(n)).toString(16).padStart(2, '0')).join('').toUpperCase();
  }
  return NAMED_COLORS[v];
}

const FONT_SIZE_KEYWORDS: Record<string, number> = {
  'xx-small': 7, 'x-small': 7.5, small: 10, medium: 12, large: 13.5, 'x-large': 18, 'xx-large': 24,
};

/** CSS font-size → half-points (Word's unit); relative sizes are taken against 11 pt. */
export function parseFontSize(value: string): number | undefined {
  const v = value.trim().toLowerCase();
  let points: number | undefined = FONT_SIZE_KEYWORDS[v];
  const m = /^([\d.]+)(pt|px|em|rem|%)$/.exec(v);
  if (m) {
    const n = parseFloat(m[1]);
    points = m[2] === 'pt' ? n : m[2] === 'px' ? n * 0.75 : m[2] === '%' ? (n / 100) * 11 : n * 11;
  }
  if (points === undefined || !Number.isFinite(points) || points <= 0) return undefined;
  return Math.max(2, Math.min(3276, Math.round(points * 2)));
}

export function parseAlign(value: string | undefined): Alignment | undefined {
  const v = value?.trim().toLowerCase();
  if (v === 'left' || v === 'start') return 'left';
  if (v === 'right' || v === 'end') return 'right';
  if (v === 'center' || v === 'middle') return 'center';
  if (v === 'justify') return 'justify';
  return undefined;
}

export function parseInlineStyle(style: string | undefined): InlineStyle {
  const result: InlineStyle = { marks: {} };
  if (!style) return result;
  for (const declaration of style.split(';')) {
    const colon = declaration.indexOf(':');
    if (colon < 0) continue;
    const property = declaration.slice(0, colon).trim().toLowerCase();
    const value = declaration.slice(colon + 1).replace(/!important/i, '').trim();
    const lower = value.toLowerCase();
    switch (property) {
      case 'font-weight':
        if (lower === 'bold' || lower === 'bolder' || Number(lower) >= 600) result.marks.bold = true;
        else if (lower === 'normal' || lower === 'lighter' || Number(lower) < 600) result.marks.bold = false;
        break;
      case 'font-style':
        result.marks.italic = lower === 'italic' || lower === 'oblique';
        break;
      case 'text-decoration':
      case 'text-decoration-line':
        if (lower.includes('underline')) result.marks.underline = true;
        if (lower.includes('line-through')) result.marks.strike = true;
        if (lower === 'none') result.marks.underline = result.marks.strike = false;
        break;
      case 'color': {
        const color = parseColor(value);
        if (color) result.marks.color = color;
        break;
      }
      case 'background-color':
      case 'background': {
        const color = parseColor(property === 'background' ? value.split(/\s+/)[0] : value);
        if (color) result.background = color;
        break;
      }
      case 'font-size': {
        const size = parseFontSize(value);
        if (size) result.marks.halfPoints = size;
        break;
      }
      case 'vertical-align':
        if (lower === 'super') result.marks.superscript = true;
        if (lower === 'sub') result.marks.subscript = true;
        break;
      case 'text-align':
        result.align = parseAlign(value);
        break;
      case 'page-break-before':
      case 'break-before':
        if (lower === 'always' || lower === 'page') result.pageBreakBefore = true;
        break;
      case 'page-break-after':
      case 'break-after':
        if (lower === 'always' || lower === 'page') result.pageBreakAfter = true;
        break;
      case 'display':
        if (lower === 'none') result.hidden = true;
        break;
      case 'visibility':
        if (lower === 'hidden') result.hidden = true;
        break;
      case 'list-style-type':
      case 'list-style':
        for (const word of lower.split(/\s+/)) result.numberFormat ??= LIST_STYLE_TYPES[word];
        break;
    }
  }
  return result;
}
