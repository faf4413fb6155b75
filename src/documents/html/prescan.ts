import { MARKUP_COMPLEXITY, tooComplex } from '../model/complexity.js';
import { nestingTooDeep } from '../model/input.js';

/**
 * parse5's tree building slows down with element depth and hast conversion recurses, and every
 * element costs memory before the model exists, so absurdly deep or large HTML is refused before
 * parsing. The depth estimate counts open minus close tags of elements that need an end tag (void
 * elements and elements with optional end tags are skipped); the exact depth limit is enforced on
 * the parsed tree. The scan is one pass with indexOf: no pattern here can backtrack over the input.
 */
const NO_DEPTH = new Set([
  'area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr', 'param', 'keygen',
  'p', 'li', 'dt', 'dd', 'tr', 'td', 'th', 'thead', 'tbody', 'tfoot', 'option', 'optgroup', 'colgroup', 'caption',
  'rb', 'rt', 'rtc', 'rp', 'html', 'head', 'body',
]);
/** Elements whose content is text, not tags, up to their end tag. */
const RAW_TEXT = new Set(['script', 'style', 'textarea', 'title']);
const TABLE_CELLS = new Set(['td', 'th']);
const isNameStart = (c: number) => (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const isNameChar = (c: number) => isNameStart(c) || (c >= 0x30 && c <= 0x39) || c === 0x2d;

function indexOfEndTag(html: string, name: string, from: number): number {
  for (let i = html.indexOf('</', from); i >= 0; i = html.indexOf('</', i + 2)) {
    if (html.slice(i + 2, i + 2 + name.length).toLowerCase() === name) return i;
  }
  return -1;
}

export function assertHtmlNesting(html: string, maxDepth: number, limits = MARKUP_COMPLEXITY): void {
  const ceiling = 2 * maxDepth + 8;
  let depth = 0;
  let elements = 0;
  let cells = 0;
  let at = html.indexOf('<');
  while (at >= 0 && at < html.length) {
    if (html.startsWith('<!--', at)) {
      const end = html.indexOf('-->', at + 4);
      if (end < 0) return;
      at = html.indexOf('<', end + 3);
      continue;
    }
    const closing = html.charCodeAt(at + 1) === 0x2f;
    let nameEnd = at + (closing ? 2 : 1);
    if (!isNameStart(html.charCodeAt(nameEnd))) {
      at = html.indexOf('<', at + 1);
      continue;
    }
    while (nameEnd < html.length && isNameChar(html.charCodeAt(nameEnd))) nameEnd++;
    const name = html.slice(at + (closing ? 2 : 1), nameEnd).toLowerCase();
    // The tag ends at the next '>' (a '<' first means a malformed tag: count it and go on from there).
    const close = html.indexOf('>', nameEnd);
    const next = html.indexOf('<', nameEnd);
    const tagEnd = close < 0 || (next >= 0 && next < close) ? -1 : close;
    const selfClosing = tagEnd > 0 && html.charCodeAt(tagEnd - 1) === 0x2f;
    if (!closing) {
      if (++elements > limits.maxHtmlElements) throw tooComplex('HTML elements', limits.maxHtmlElements);
      if (TABLE_CELLS.has(name) && ++cells > limits.maxTableCells) throw tooComplex('table cells', limits.maxTableCells);
    }
    if (!closing && RAW_TEXT.has(name) && !selfClosing) {
      const end = indexOfEndTag(html, name, nameEnd);
      if (end < 0) return;
      at = html.indexOf('<', end + 2);
      continue;
    }
    if (!NO_DEPTH.has(name) && !selfClosing) {
      depth = closing ? Math.max(0, depth - 1) : depth + 1;
      if (depth > ceiling) throw nestingTooDeep(maxDepth, 'HTML elements');
    }
    at = next;
  }
}
