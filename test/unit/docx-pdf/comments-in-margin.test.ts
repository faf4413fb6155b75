import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { drawCommentsInMargin, layoutMargin, MARGIN_LIMITS, marginWidth, type Comment } from '../../../src/documents/docx-pdf/comments-in-margin.js';
import { DomainError, ErrorCode } from '../../../src/errors/domain-error.js';
import { PdfView } from '../../../src/documents/pdf/document.js';
import { asArray, isName } from '../../../src/documents/pdf/objects.js';
import { walkPageTree } from '../../../src/documents/pdf/structure.js';

/**
 * commentsInMargin's layout rule and budget on PDFs made here (the integration test runs it on
 * what LibreOffice writes): boxes never overlap and stay inside the page, text shrinks 7 → 6 → 5 pt,
 * then is cut, then the last box counts the comments left out; past MARGIN_LIMITS: 422 before drawing.
 */

/** A classic-xref PDF: Letter pages, each with the given comments as /Text annotations (anchored at y). */
function pdfWithComments(pages: { y: number; text: string; author?: string }[][]): Buffer {
  const objects: string[] = [];
  const add = (body: string) => objects.push(body);
  add('<< /Type /Catalog /Pages 2 0 R >>');
  add('PAGES');
  add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>');
  const pageNums: number[] = [];
  for (const [index, comments] of pages.entries()) {
    const content = `BT /F1 12 Tf 72 700 Td (Body of page ${index + 1}) Tj ET`;
    add(`<< /Length ${content.length} >>\nstream\n${content}\nendstream`);
    const contentNum = objects.length;
    const annots = comments.map((c) => {
      add(`<< /Type /Annot /Subtype /Text /Rect [100 ${c.y} 100.05 ${c.y + 14}] /T (${c.author ?? 'Ada, 1/1/26, '}) /Contents (${c.text}) >>`);
      return `${objects.length} 0 R`;
    });
    add(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents ${contentNum} 0 R /Annots [${annots.join(' ')}] >>`);
    pageNums.push(objects.length);
  }
  objects[1] = `<< /Type /Pages /Kids [${pageNums.map((n) => `${n} 0 R`).join(' ')}] /Count ${pageNums.length} >>`;
  let out = '%PDF-1.7\n';
  const offsets = objects.map((body, i) => {
    const at = out.length;
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
    return at;
  });
  const xref = out.length;
  out += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, '0')} 00000 n \n`).join('')}`;
  out += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`;
  return Buffer.from(out, 'latin1');
}

const comment = (top: number, text: string): Comment => ({ x: 100, bottom: top - 14, top, author: 'Ada', text });
const words = (n: number, seed: string) => Array.from({ length: n }, (_, i) => `${seed}${i}`).join(' ');

function assertColumn(boxes: { top: number; height: number }[], top: number, bottom: number) {
  for (const [i, b] of boxes.entries()) {
    expect(b.top).toBeLessThanOrEqual(top + 1e-6);
    expect(b.top - b.height).toBeGreaterThanOrEqual(bottom - 1e-6);
    if (i > 0) expect(b.top).toBeLessThanOrEqual(boxes[i - 1]!.top - boxes[i - 1]!.height - 4 + 1e-6);
  }
}

describe('commentsInMargin layout', () => {
  it('a margin of 40 % of the width, 180–400 pt', () => {
    expect(marginWidth(612)).toBe(245);
    expect(marginWidth(300)).toBe(180);
    expect(marginWidth(2000)).toBe(400);
  });

  it('boxes start at their anchors, wrap long text, and never overlap', () => {
    const comments = [comment(700, 'short'), comment(698, words(80, 'long')), comment(400, 'later')];
    const { size, boxes, hidden } = layoutMargin(comments, 229, 774, 18);
    expect(size).toBe(7);
    expect(hidden).toBe(0);
    expect(boxes[0]!.top).toBe(700);
    expect(boxes[1]!.lines.length).toBeGreaterThan(3);
    expect(boxes[2]!.top).toBe(400);
    assertColumn(boxes, 774, 18);
  });

  it('a column that runs past the bottom moves up; too many for 7 pt shrink to 6 then 5 pt', () => {
    const low = layoutMargin([comment(60, words(30, 'a')), comment(50, words(30, 'b'))], 229, 774, 18);
    assertColumn(low.boxes, 774, 18);
    expect(low.boxes.at(-1)!.top - low.boxes.at(-1)!.height).toBeCloseTo(18);
    const many = Array.from({ length: 12 }, (_, i) => comment(700 - i, words(60, `c${i}x`)));
    const shrunk = layoutMargin(many, 229, 774, 18);
    expect(shrunk.size).toBeLessThan(7);
    expect(shrunk.hidden).toBe(0);
    assertColumn(shrunk.boxes, 774, 18);
  });

  it('past 5 pt comments are cut to the same number of lines, then the last box counts the rest', () => {
    const many = Array.from({ length: 20 }, (_, i) => comment(700 - i, words(200, `d${i}x`)));
    const cut = layoutMargin(many, 229, 774, 18);
    expect(cut.size).toBe(5);
    expect(cut.hidden).toBe(0);
    expect(cut.boxes.some((b) => b.lines.at(-1)!.endsWith('…'))).toBe(true);
    assertColumn(cut.boxes, 774, 18);
    const crowd = Array.from({ length: 200 }, (_, i) => comment(700 - i, `note ${i}`));
    const counted = layoutMargin(crowd, 229, 774, 18);
    expect(counted.hidden).toBeGreaterThan(0);
    expect(counted.boxes.length + counted.hidden).toBe(200);
    expect(counted.boxes.at(-1)!.lines.join(' ')).toContain(`+ ${counted.hidden} more comments`);
    assertColumn(counted.boxes, 774, 18);
  });
});

describe('commentsInMargin layout, for any comments (fast-check)', () => {
  const anyComment = fc.record({
    top: fc.double({ min: -200, max: 2000, noNaN: true }),
    text: fc.oneof(fc.string({ maxLength: 400 }), fc.array(fc.string({ minLength: 1, maxLength: 40 }), { maxLength: 120 }).map((w) => w.join(' ')), fc.constant('x'.repeat(2000))),
  });
  it('every comment gets a box or is counted, and the boxes stay in the column without overlap', () => {
    fc.assert(
      fc.property(fc.array(anyComment, { maxLength: 250 }), fc.integer({ min: 180, max: 400 }), fc.integer({ min: 200, max: 2000 }), (drawn, width, height) => {
        const comments = drawn.map((c) => comment(c.top, c.text));
        const { boxes, hidden } = layoutMargin(comments, width, height - 18, 18);
        expect(boxes.length + hidden).toBe(comments.length);
        assertColumn(boxes, height - 18, 18);
      }),
      { numRuns: 150, seed: Number(process.env.FUZZ_SEED ?? 20261126) },
    );
  });
});

describe('drawCommentsInMargin', () => {
  it('widens every page, draws each comment, removes or keeps the annotations', async () => {
    const input = pdfWithComments([[{ y: 690, text: 'First margin note' }, { y: 500, text: 'Second (with parentheses)' }], []]);
    const out = await drawCommentsInMargin(input);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'margin-'));
    try {
      writeFileSync(path.join(dir, 'out.pdf'), out);
      expect(execFileSync('qpdf', ['--check', path.join(dir, 'out.pdf')]).toString()).toContain('No syntax or stream encoding errors');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const info = execFileSync('pdfinfo', ['-f', '1', '-l', '2', '-'], { input: out }).toString();
    expect(info.match(/Page\s+\d+ size:\s+857 x 792/g)).toHaveLength(2);
    const text = execFileSync('pdftotext', ['-', '-'], { input: out }).toString();
    for (const expected of ['Body of page 1', 'Body of page 2', 'First margin note', 'Second (with parentheses)', 'Ada, 1/1/26']) expect(text).toContain(expected);
    const subtypes = (pdf: Buffer) => {
      const view = new PdfView(pdf, pdf.length);
      return walkPageTree(view).pages.flatMap((p) => (asArray(view.resolve(p.dict.get('Annots'))) ?? []).map((a) => view.dict(a)?.get('Subtype')));
    };
    expect(subtypes(out)).toEqual([]);
    const kept = await drawCommentsInMargin(input, { keepAnnotations: true });
    expect(subtypes(kept).filter((s) => isName(s, 'Text'))).toHaveLength(2);
  });

  it('refuses past the budget before drawing (422 DOCUMENT_TOO_COMPLEX)', async () => {
    const crowded = pdfWithComments([Array.from({ length: MARGIN_LIMITS.comments + 1 }, (_, i) => ({ y: 100 + (i % 600), text: `n${i}` }))]);
    const error = await drawCommentsInMargin(crowded).catch((err: unknown) => err);
    expect(error).toBeInstanceOf(DomainError);
    expect((error as DomainError).code).toBe(ErrorCode.DOCUMENT_TOO_COMPLEX);
    expect((error as DomainError).message).toContain(String(MARGIN_LIMITS.comments));
    const wordy = pdfWithComments([Array.from({ length: 101 }, (_, i) => ({ y: 300, text: 'x'.repeat(MARGIN_LIMITS.commentCharacters) + i }))]);
    const tooMuch = await drawCommentsInMargin(wordy).catch((err: unknown) => err);
    expect((tooMuch as DomainError).code).toBe(ErrorCode.DOCUMENT_TOO_COMPLEX);
  });
});
