import { DomainError, ErrorCode } from '../../errors/domain-error.js';
import { MARKUP_COMPLEXITY, tooComplex } from '../model/complexity.js';
import { nestingTooDeep } from '../model/input.js';

/**
 * micromark's work grows faster than linearly with container nesting (and it recurses: 20 000
 * nested quotes overflow the stack), so obviously over-deep input is refused before parsing.
 * The estimate per line is the count of leading quote/list markers plus indentation / 2; it
 * over-counts on purpose and the margin keeps legitimate documents clear of it. The exact
 * limit is enforced on the parsed tree.
 *
 * Inline markup is the other case. micromark resolves link labels and emphasis per paragraph
 * in time that grows with the square of the markers in it (or worse): nested `![…](…)` 2 000
 * deep ≈ 3 s and 10 000 deep ≈ 5 min; `*a ` × 5 000 then `b* ` × 5 000 ≈ 10 s; `[a] ` × 20 000
 * ≈ 3 s. So within a paragraph (blank lines and block starts end it; fenced code is skipped)
 * the depth of open `[` and of closed emphasis is bounded like container nesting, and the count
 * of inline markers by MAX_MARKERS_PER_PARAGRAPH (under 1 s of parsing for the worst patterns).
 */
const MAX_MARKERS_PER_PARAGRAPH = 10_000;
const LEADING_CONTAINERS = /^(?:[ \t]*(?:>|[-+*](?=[ \t])|\d{1,9}[.)](?=[ \t])))+/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
/** Lines that start a block of their own (list item, heading, table row, quote, rule). */
const BLOCK_START = /^[ \t]*(?:[-+*][ \t]|\d{1,9}[.)][ \t]|#|\||>|\[[^\]\n]+\]:)/;
const THEMATIC_BREAK = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const DELIMITER_CELL = /^:?-+:?$/;

interface InlineState {
  brackets: number;
  /** Emphasis delimiters opened and not yet closed. */
  openEmphasis: number;
  /** Deepest nesting a closing delimiter has closed (openers never closed nest nothing). */
  emphasis: number;
  markers: number;
}

const freshParagraph = (): InlineState => ({ brackets: 0, openEmphasis: 0, emphasis: 0, markers: 0 });

/**
 * Refuses, before parsing, Markdown nested past `maxDepth` or with more structure than
 * MARKUP_COMPLEXITY allows (blocks, table cells, inline markers: each counted generously).
 */
export function assertMarkdownNesting(text: string, maxDepth: number, limits = MARKUP_COMPLEXITY): void {
  const ceiling = 2 * maxDepth + 8;
  let lineStart = 0;
  let fence: string | undefined;
  let inline: InlineState = freshParagraph();
  let blocks = 0;
  let cells = 0;
  let markers = 0;
  /** Columns of the table the previous lines belong to (0: not in a table). */
  let tableColumns = 0;
  let inParagraph = false;
  let previousLine = '';
  while (lineStart < text.length) {
    let lineEnd = text.indexOf('\n', lineStart);
    if (lineEnd < 0) lineEnd = text.length;
    const head = text.slice(lineStart, Math.min(lineEnd, lineStart + 8 * ceiling));
    if (containerDepth(head) > ceiling) throw nestingTooDeep(maxDepth, 'block quotes or lists');

    const fenceMatch = FENCE.exec(head);
    const blank = head.trim() === '';
    if (fence) {
      if (fenceMatch && fenceMatch[1][0] === fence[0] && fenceMatch[1].length >= fence.length) fence = undefined;
    } else if (fenceMatch) {
      fence = fenceMatch[1];
      blocks++;
      tableColumns = 0;
      inParagraph = false;
    } else if (blank || (head.length === lineEnd - lineStart && THEMATIC_BREAK.test(head))) {
      markers += inline.markers;
      inline = freshParagraph();
      tableColumns = 0;
      inParagraph = false;
    } else {
      const line = text.slice(lineStart, lineEnd);
      if (tableColumns > 0) {
        cells += tableColumns;
      } else if (previousLine.includes('|') && isDelimiterRow(line)) {
        // The previous line was the header row (counted as a block when it was read).
        tableColumns = countCells(previousLine);
        cells += tableColumns;
      } else if (!inParagraph || BLOCK_START.test(head)) {
        blocks++;
        inParagraph = true;
      }
      if (BLOCK_START.test(head)) {
        markers += inline.markers;
        inline = freshParagraph();
      }
      scanInline(text, lineStart, lineEnd, inline, ceiling);
      if (inline.brackets > ceiling) throw nestingTooDeep(maxDepth, 'link or image labels ([…])');
      if (inline.emphasis > ceiling) throw nestingTooDeep(maxDepth, 'emphasis (* or _)');
      if (inline.markers > MAX_MARKERS_PER_PARAGRAPH) throw tooManyMarkers();
      if (cells > limits.maxTableCells) throw tooComplex('table cells', limits.maxTableCells);
      if (blocks > limits.maxBlocks) throw tooComplex('paragraphs, headings, list items and other blocks', limits.maxBlocks);
      if (markers + inline.markers > limits.maxInlineMarkers) throw tooComplex('emphasis, link and image markers', limits.maxInlineMarkers);
    }
    previousLine = blank ? '' : text.slice(lineStart, Math.min(lineEnd, lineStart + 64 * 1024));
    lineStart = lineEnd + 1;
  }
}

/** A GFM delimiter row: `| --- | :-: |`, checked without a backtracking pattern. */
function isDelimiterRow(line: string): boolean {
  if (!line.includes('-')) return false;
  const cells = line.trim().replace(/^\|/, '').replace(/\|$/, '').split('|');
  return cells.every((cell) => DELIMITER_CELL.test(cell.trim()));
}

/** Cells of a table row: unescaped pipes between its ends, plus one. */
function countCells(row: string): number {
  const trimmed = row.trim().replace(/^\|/, '').replace(/(?<!\\)\|$/, '');
  let cells = 1;
  for (let i = 0; i < trimmed.length; i++) {
    const c = trimmed.charCodeAt(i);
    if (c === 0x5c /* \ */) i++;
    else if (c === 0x7c /* | */) cells++;
  }
  return cells;
}

function containerDepth(line: string): number {
  const prefix = LEADING_CONTAINERS.exec(line)?.[0] ?? /^[ \t]*/.exec(line)![0];
  let markers = 0;
  let columns = 0;
  for (const ch of prefix) {
    if (ch === ' ') columns += 1;
    else if (ch === '\t') columns += 4;
    else if (ch === '>' || ch === '-' || ch === '+' || ch === '*' || ch === '.' || ch === ')') markers += 1;
  }
  return markers + columns / 2;
}

function tooManyMarkers(): DomainError {
  return new DomainError(ErrorCode.DOCUMENT_TOO_COMPLEX,
    `A paragraph has more than ${MAX_MARKERS_PER_PARAGRAPH} emphasis or link markers (*, _, ~, [, ]); split it into paragraphs and send it again.`,
  );
}

const isSpace = (c: number) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d || Number.isNaN(c);
const isPunctuation = (c: number) => (c >= 0x21 && c <= 0x2f) || (c >= 0x3a && c <= 0x40) || (c >= 0x5b && c <= 0x60) || (c >= 0x7b && c <= 0x7e);

/**
 * Updates the paragraph's open-bracket depth, emphasis nesting (a delimiter run opens when it
 * can only open, closes when it can only close, by the CommonMark flanking rules; a closer nests
 * as deep as the openers still outstanding) and marker count with one line; stops counting
 * once a bound is passed.
 */
function scanInline(text: string, start: number, end: number, state: InlineState, ceiling: number): void {
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c /* \ */) {
      i++;
    } else if (c === 0x5b /* [ */) {
      state.markers++;
      if (++state.brackets > ceiling) return;
    } else if (c === 0x5d /* ] */) {
      state.markers++;
      if (state.brackets > 0) state.brackets--;
    } else if (c === 0x2a /* * */ || c === 0x5f /* _ */ || c === 0x7e /* ~ */) {
      let runEnd = i + 1;
      while (runEnd < end && text.charCodeAt(runEnd) === c) runEnd++;
      const length = runEnd - i;
      state.markers += length;
      const before = i > start ? text.charCodeAt(i - 1) : Number.NaN;
      const after = runEnd < end ? text.charCodeAt(runEnd) : Number.NaN;
      const leftFlanking = !isSpace(after) && (!isPunctuation(after) || isSpace(before) || isPunctuation(before));
      const rightFlanking = !isSpace(before) && (!isPunctuation(before) || isSpace(after) || isPunctuation(after));
      if (leftFlanking && !rightFlanking) {
        state.openEmphasis += length;
      } else if (rightFlanking && !leftFlanking && state.openEmphasis > 0) {
        state.emphasis = Math.max(state.emphasis, state.openEmphasis);
        state.openEmphasis -= Math.min(state.openEmphasis, length);
      }
      if (state.emphasis > ceiling || state.markers > MAX_MARKERS_PER_PARAGRAPH) return;
      i = runEnd - 1;
    }
  }
}
