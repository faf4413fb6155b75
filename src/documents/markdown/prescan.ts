import { nestingTooDeep } from '../model/input.js';

/**
 * micromark's work grows faster than linearly with container nesting (and it recurses: 20 000
 * nested quotes overflow the stack), so obviously over-deep input is refused before parsing.
 * The estimate per line is the count of leading quote/list markers plus indentation / 2; it
 * over-counts on purpose and the margin keeps legitimate documents clear of it. The exact
 * limit is enforced on the parsed tree.
 */
const LEADING_CONTAINERS = /^(?:[ \t]*(?:>|[-+*](?=[ \t])|\d{1,9}[.)](?=[ \t])))+/;

export function assertMarkdownNesting(text: string, maxDepth: number): void {
  const ceiling = 2 * maxDepth + 8;
  let lineStart = 0;
  while (lineStart < text.length) {
    let lineEnd = text.indexOf('\n', lineStart);
    if (lineEnd < 0) lineEnd = text.length;
    const line = text.slice(lineStart, Math.min(lineEnd, lineStart + 8 * ceiling));
    const prefix = LEADING_CONTAINERS.exec(line)?.[0] ?? /^[ \t]*/.exec(line)![0];
    let markers = 0;
    let columns = 0;
    for (const ch of prefix) {
      if (ch === ' ') columns += 1;
      else if (ch === '\t') columns += 4;
      else if (ch === '>' || ch === '-' || ch === '+' || ch === '*' || ch === '.' || ch === ')') markers += 1;
    }
    if (markers + columns / 2 > ceiling) throw nestingTooDeep(maxDepth, 'block quotes or lists');
    lineStart = lineEnd + 1;
  }
}
