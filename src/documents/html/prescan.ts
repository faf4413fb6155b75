import { nestingTooDeep } from '../model/input.js';

/**
 * parse5's tree building slows down with element depth and hast conversion recurses, so
 * absurdly deep HTML is refused before parsing. The estimate counts open minus close tags of
 * elements that need an end tag (void elements and elements with optional end tags are
 * skipped); the exact limit is enforced on the parsed tree.
 */
const NO_DEPTH = new Set([
  'area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta', 'source', 'track', 'wbr', 'param', 'keygen',
  'p', 'li', 'dt', 'dd', 'tr', 'td', 'th', 'thead', 'tbody', 'tfoot', 'option', 'optgroup', 'colgroup', 'caption',
  'rb', 'rt', 'rtc', 'rp', 'html', 'head', 'body',
]);

export function assertHtmlNesting(html: string, maxDepth: number): void {
  const ceiling = 2 * maxDepth + 8;
  const stripped = html.replace(/<!--[\s\S]*?-->/g, '').replace(/<(script|style|textarea|title)\b[\s\S]*?<\/\1\s*>/gi, '');
  const tag = /<(\/?)([a-zA-Z][a-zA-Z0-9-]*)[^>]*?(\/?)>/g;
  let depth = 0;
  for (let m = tag.exec(stripped); m; m = tag.exec(stripped)) {
    const name = m[2].toLowerCase();
    if (NO_DEPTH.has(name) || m[3]) continue;
    depth = m[1] ? Math.max(0, depth - 1) : depth + 1;
    if (depth > ceiling) throw nestingTooDeep(maxDepth, 'HTML elements');
  }
}
