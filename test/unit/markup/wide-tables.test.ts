import { describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { htmlToDocx } from '../../../src/documents/html/index.js';
import { markdownToDocx } from '../../../src/documents/markdown/index.js';
import { limits, part } from './helpers.js';

const gridWidths = (xml: string) => [...xml.matchAll(/<w:tblGrid>(.*?)<\/w:tblGrid>/g)].map((m) => (m[1].match(/<w:gridCol /g) ?? []).length);

describe('tables wider than Word allows (63 columns)', () => {
  it('become slices of at most 63 columns that keep every cell and the header row', async () => {
    const header = `| ${Array.from({ length: 100 }, (_, i) => `h${i}`).join(' | ')} |`;
    const rule = `|${' --- |'.repeat(100)}`;
    const row = `| ${Array.from({ length: 100 }, (_, i) => `c${i}`).join(' | ')} |`;
    const { docx } = await markdownToDocx(Buffer.from(`${header}\n${rule}\n${row}\n`), { limits });
    const xml = part(docx, 'word/document.xml');
    expect(gridWidths(xml)).toEqual([63, 37]);
    expect((xml.match(/<w:tblHeader\/>/g) ?? []).length).toBe(2);
    const text = execFileSync('pandoc', ['-f', 'docx', '-t', 'plain'], { input: docx }).toString();
    for (const cell of ['h0', 'h62', 'h63', 'h99', 'c0', 'c62', 'c63', 'c99']) expect(text).toContain(cell);
  });

  it('clip a cell spanning the slice boundary and keep the rows full width', async () => {
    const cells = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `<td>${tag}${i}</td>`).join('');
    const html = `<table><tr>${cells(60, 'a')}<td colspan="10">wide</td>${cells(10, 'b')}</tr><tr>${cells(80, 'z')}</tr></table>`;
    const { docx } = await htmlToDocx(Buffer.from(html), { limits });
    const xml = part(docx, 'word/document.xml');
    expect(gridWidths(xml)).toEqual([63, 17]);
    for (const table of xml.split('</w:tbl>').slice(0, 2)) {
      const grid = gridWidths(`${table}</w:tbl>`)[0];
      for (const tr of table.split('<w:tr>').slice(1)) {
        const spans = [...tr.matchAll(/<w:tc>.*?<\/w:tc>/g)].map((m) => Number(/w:gridSpan w:val="(\d+)"/.exec(m[0])?.[1] ?? 1));
        expect(spans.reduce((a, b) => a + b, 0)).toBe(grid);
      }
    }
    expect(xml).toContain('wide');
  });
});
