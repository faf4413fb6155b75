import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../../src/errors/domain-error.js';
import { assertHtmlNesting } from '../../../src/documents/html/prescan.js';
import { htmlToDocx } from '../../../src/documents/html/index.js';
import { assertMarkdownNesting } from '../../../src/documents/markdown/prescan.js';
import { markdownToDocx } from '../../../src/documents/markdown/index.js';
import { MARKUP_COMPLEXITY } from '../../../src/documents/model/complexity.js';
import { httpStatusOf } from '../../../src/http/error-status.js';
import { answering } from '../../support/domain-error.js';
import { rejection } from '../../support/domain-error.js';

const limits = { maxBytes: 30 * 1024 * 1024, maxNestingDepth: 50 };
const mdTable = (rows: number, cols: number) =>
  [`|${Array.from({ length: cols }, (_, i) => `h${i}`).join('|')}|`, `|${'---|'.repeat(cols)}`, ...Array.from({ length: rows }, (_, r) => `|${Array.from({ length: cols }, (_, c) => `${r}.${c}`).join('|')}|`)].join('\n');
const htmlTable = (rows: number, cols: number) => `<table>${`<tr>${'<td>x</td>'.repeat(cols)}</tr>`.repeat(rows)}</table>`;

describe('Markdown complexity is counted before parsing', () => {
  it('a 1000 × 1000 table (5 MB) is refused as too many table cells, before any parsing', async () => {
    const source = new TextEncoder().encode(mdTable(1000, 1000));
    const started = performance.now();
    const err = await markdownToDocx(source, { limits }).catch((e: unknown) => e as DomainError);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(err).toMatchObject(answering(422, 'DOCUMENT_TOO_COMPLEX'));
    expect((err as DomainError).message).toContain('table cells');
  });

  it('counts header columns × rows across tables, and a table at the limit passes', () => {
    expect(() => assertMarkdownNesting(mdTable(249, 100), 50)).not.toThrow(); // 250 × 100 = 25 000 cells
    expect(rejection(() => assertMarkdownNesting(`${mdTable(200, 100)}\n\n${mdTable(60, 100)}`, 50)).message).toContain('table cells');
    // Pipes in prose are not a table: no delimiter row follows.
    expect(() => assertMarkdownNesting('a | b | c\n'.repeat(30_000), 50)).not.toThrow();
  });

  it('refuses more blocks and inline markers than the limits', () => {
    expect(rejection(() => assertMarkdownNesting('- item\n'.repeat(MARKUP_COMPLEXITY.maxBlocks + 1), 50)).message).toContain('blocks');
    expect(() => assertMarkdownNesting('word\n\n'.repeat(1000), 50)).not.toThrow();
    // One paragraph each, 100 markers each: the total, not the paragraph, is past the limit.
    const paragraphs = `${'*a* '.repeat(50)}\n\n`.repeat(MARKUP_COMPLEXITY.maxInlineMarkers / 100 + 1);
    expect(rejection(() => assertMarkdownNesting(paragraphs, 50)).message).toContain('markers');
  });
});

describe('HTML complexity is counted before parsing', () => {
  it('a 24 MB table is refused as too many table cells, quickly', async () => {
    const source = new TextEncoder().encode(htmlTable(2400, 1000));
    const started = performance.now();
    const err = await htmlToDocx(source, { limits }).catch((e: unknown) => e as DomainError);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(err).toMatchObject(answering(422, 'DOCUMENT_TOO_COMPLEX'));
    expect((err as DomainError).message).toContain('table cells');
  });

  it('counts elements, and skips comments and raw text', () => {
    expect(rejection(() => assertHtmlNesting('<span>x</span>'.repeat(MARKUP_COMPLEXITY.maxHtmlElements + 1), 50)).message).toContain('HTML elements');
    expect(() => assertHtmlNesting(`<!--${'<td>'.repeat(50_000)}--><script>${'<td>'.repeat(50_000)}</SCRIPT>`, 50)).not.toThrow();
  });
});

describe('the scans are linear on hostile input (no pattern backtracks over the text)', () => {
  const hostile: [string, string][] = [
    ['unclosed comments', '<!--'.repeat(2_000_000)],
    ['unclosed tags', '<a'.repeat(4_000_000)],
    ['unclosed script', '<script>'.repeat(1_000_000)],
    ['script pairs', '<SCRIPT>x</SCRIPT>'.repeat(400_000)],
    ['spaces then a dash', `${' '.repeat(8_000_000)}-x`],
    ['pipes and dashes', '|-'.repeat(4_000_000)],
  ];
  it.each(hostile)('%s (8 MB) in well under a second per MB', (_name, text) => {
    for (const scan of [assertHtmlNesting, assertMarkdownNesting]) {
      const started = performance.now();
      try {
        scan(text, 50);
      } catch (err) {
        expect(err).toBeInstanceOf(DomainError);
      }
      // Quadratic scans took hours on these; linear ones take tens of milliseconds.
      expect(performance.now() - started).toBeLessThan(4_000);
    }
  });

  it('any string ends in a pass or a 422, never another error', () => {
    const alphabet = fc.constantFrom('<', '>', '/', '!', '-', '|', '*', '_', '[', ']', '\n', ' ', 'a', 'td', 'script', '---', '>');
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 400 }).map((parts) => parts.join('')), (text) => {
        for (const scan of [assertHtmlNesting, assertMarkdownNesting]) {
          try {
            scan(text, 5, { maxBlocks: 20, maxTableCells: 20, maxInlineMarkers: 40, maxHtmlElements: 20 });
          } catch (err) {
            expect(err).toBeInstanceOf(DomainError);
            expect(httpStatusOf(err as DomainError)).toBe(422);
          }
        }
      }),
      { seed: 1724, numRuns: 2000 },
    );
  });
});
