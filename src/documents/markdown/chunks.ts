/**
 * micromark's parse time grows faster than linearly with document size (≈5 s for 1 MB,
 * ≈12 s for 2 MB), so large documents are parsed in chunks. A chunk may only end before an
 * ATX heading at column 0 that follows a blank line outside fenced code and HTML comments:
 * such a heading closes every open block, so parsing the pieces separately yields the same
 * tree. Link reference definitions are document-wide, so each chunk gets a copy of all
 * single-line definitions (they render nothing).
 */
const CHUNK_TARGET = 128 * 1024;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
/** A label stops at a line's end: with `\r`, U+2028/9 inside (line starts for `^`), each start rescanned the rest. */
const DEFINITION = /^ {0,3}\[(?!\^)[^\]\n\r\u2028\u2029]+\]:[ \t]*\S.*$/gm;

export function splitMarkdown(text: string): string[] {
  if (text.length <= CHUNK_TARGET * 2) return [text];
  const chunks: string[] = [];
  let chunkStart = 0;
  let fence: string | undefined;
  let inComment = false;
  let previousBlank = false;
  let lineStart = 0;
  while (lineStart < text.length) {
    let lineEnd = text.indexOf('\n', lineStart);
    if (lineEnd < 0) lineEnd = text.length;
    const line = text.slice(lineStart, lineEnd);
    const fenceMatch = FENCE.exec(line);
    if (fence) {
      if (fenceMatch && fenceMatch[1][0] === fence[0] && fenceMatch[1].length >= fence.length) fence = undefined;
    } else if (inComment) {
      if (line.includes('-->')) inComment = false;
    } else if (fenceMatch) {
      fence = fenceMatch[1];
    } else if (line.includes('<!--') && !line.slice(line.indexOf('<!--')).includes('-->')) {
      inComment = true;
    } else if (previousBlank && /^#{1,6}(?:[ \t]|$)/.test(line) && lineStart - chunkStart >= CHUNK_TARGET) {
      chunks.push(text.slice(chunkStart, lineStart));
      chunkStart = lineStart;
    }
    previousBlank = line.trim() === '';
    lineStart = lineEnd + 1;
  }
  chunks.push(text.slice(chunkStart));
  if (chunks.length === 1) return chunks;
  const definitions = text.match(DEFINITION);
  if (!definitions) return chunks;
  const shared = `\n\n${definitions.join('\n')}\n`;
  return chunks.map((chunk) => chunk + shared);
}
