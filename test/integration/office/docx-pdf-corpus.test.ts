import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertDocxToPdf } from '../../../src/documents/docx-pdf/index.js';
import { OfficePool } from '../../../src/office/index.js';
import { corpusDocx, CORPUS_DOCX, flatText, isPdf, pageTexts, pdfImageCount, pdfPageCount, pdfText } from './pdf-tools.js';

/** Every corpus DOCX through the real engine (markup mode), checked with poppler. */
const files = readdirSync(CORPUS_DOCX).filter((f) => f.endsWith('.docx')).sort();
const pdfs = new Map<string, Buffer>();
let pool: OfficePool;

const pdfOf = (name: string): Buffer => {
  const pdf = pdfs.get(name);
  if (!pdf) throw new Error(`${name} was not converted`);
  return pdf;
};

beforeAll(async () => {
  pool = new OfficePool({ size: 2 });
  await pool.start();
  const results = await Promise.all(files.map(async (name) => [name, await convertDocxToPdf(pool, corpusDocx(name))] as const));
  for (const [name, pdf] of results) pdfs.set(name, pdf);
}, 120_000);

afterAll(async () => {
  await pool?.close();
});

describe('DOCX→PDF over the corpus', () => {
  it.each(files)('%s converts to a valid PDF with text', (name) => {
    const pdf = pdfOf(name);
    expect(isPdf(pdf)).toBe(true);
    expect(pdfPageCount(pdf)).toBeGreaterThan(0);
    expect(flatText(pdf).length).toBeGreaterThan(0);
  });

  it('renders headers and footers, odd/even and first-page variants', () => {
    const oddEven = pageTexts(pdfOf('pydocx-doc-odd-even-hdrs.docx'));
    expect(oddEven[0]).toContain('Odd page header.');
    expect(oddEven[1]).toContain('Even page header.');
    const firstPage = pdfText(pdfOf('pydocx-sct-first-page-hdrftr.docx'));
    expect(firstPage).toContain('First Page Header (section 2)');
    expect(firstPage.match(/Default \(odd, primary\) Header/g)?.length).toBeGreaterThanOrEqual(2);
    const variants = pageTexts(pdfOf('superdoc-h_f-normal-odd-even-firstpg.docx'));
    expect(variants[0]).toContain('This is my first page header');
    expect(variants[0]).toContain('This Is my first page footer');
    expect(variants[1]).toContain('Even page header');
    expect(variants[2]).toContain('Odd page header');
  });

  it('fills PAGE / NUMPAGES: "Page X of Y" on every page', () => {
    const pages = pageTexts(pdfOf('superdoc-page-numbering-examples.docx'));
    expect(pages.length).toBe(3);
    pages.forEach((text, i) => expect(text).toContain(`Page ${i + 1} of ${pages.length}`));
    const advanced = pageTexts(pdfOf('superdoc-advanced-text.docx'));
    advanced.forEach((text, i) => {
      if (text.includes('Page ') && / of \d/.test(text)) expect(text).toContain(`Page ${i + 1} of ${advanced.length}`);
    });
  });

  it('keeps table cells', () => {
    const text = pdfText(pdfOf('pandoc-tables.docx'), { layout: true });
    expect(text).toMatch(/Name\s+Game\s+Fame\s+Blame/);
    expect(text).toMatch(/Lebron James\s+Basketball\s+Very High\s+Leaving Cleveland/);
    const rowspan = flatText(pdfOf('pandoc-table_header_rowspan.docx'));
    expect(rowspan.length).toBeGreaterThan(10);
  });

  it('keeps list numbers, nested and overridden', () => {
    const nested = pdfText(pdfOf('superdoc-custom-list1.docx'), { layout: true });
    expect(nested).toMatch(/1\.\s+Num 1\b/);
    expect(nested).toMatch(/1\.2\.\s+Num 1\.2\b/);
    expect(nested).toMatch(/1\.2\.1\.\s+Num 1\.2\.1\b/);
    const override = pdfText(pdfOf('pandoc-lists_level_override.docx'), { layout: true });
    expect(override).toMatch(/1\.\s+State of Documentation/);
    expect(override).toMatch(/2\.\s+Content Migration/);
  });

  it('fills tables of contents with entries and page numbers', () => {
    const toc = pdfText(pdfOf('docx4j-toc.docx'), { layout: true });
    const entries = toc.match(/^Article \d+\.{3,}\d+$/gm) ?? [];
    expect(entries.length).toBeGreaterThanOrEqual(10);
    // Each entry's page number is the page where that article's heading really is.
    const pages = pageTexts(pdfOf('docx4j-toc.docx'));
    for (const entry of entries.slice(0, 5)) {
      const [, article, page] = /^(Article \d+)\.+(\d+)$/.exec(entry)!;
      expect(pages[Number(page) - 1]).toMatch(new RegExp(`^${article}$`, 'm'));
    }
    const headers = pdfText(pdfOf('pandoc-0_level_headers.docx'), { layout: true });
    expect(headers).toMatch(/SECTION 1 Introduction\.{3,}\d+/);
    const superdoc = pdfText(pdfOf('superdoc-table-of-contents.docx'), { layout: true });
    expect(superdoc).toMatch(/DEFINITIONS\.{3,}1/);
    expect(superdoc).toMatch(/SCOPE OF SALE AND PURCHASE\.{3,}2/);
  });

  it('renders images and charts', () => {
    expect(pdfImageCount(pdfOf('pydocx-shp-inline-shape-access.docx'))).toBeGreaterThan(0);
    expect(pdfImageCount(pdfOf('docx4j-sample-docx.docx'))).toBeGreaterThan(0);
    expect(pdfImageCount(pdfOf('docx4j-headers_footers.docx'))).toBeGreaterThanOrEqual(7);
    const chart = flatText(pdfOf('docx4j-chart.docx'));
    for (const label of ['Series 1', 'Series 3', 'Category 1', 'Category 4']) expect(chart).toContain(label);
  });

  it('converts documents with comments and the 31-page manual', () => {
    expect(flatText(pdfOf('pandoc-comments.docx'))).toContain('I want some text to have a comment on it.');
    expect(flatText(pdfOf('superdoc-WordOriginatedComments.docx'))).toContain('This is a word document');
    const manual = pdfOf('docx4j-headers_footers.docx');
    expect(pdfPageCount(manual)).toBeGreaterThanOrEqual(25);
    expect(flatText(manual)).toContain('Docx4j headers/footers');
  });

  it('shows both sides of tracked changes in markup mode', () => {
    expect(flatText(pdfOf('pandoc-track_changes_insertion.docx'))).toContain('This is a text with two exciting insertions.');
    expect(flatText(pdfOf('pandoc-track_changes_deletion.docx'))).toContain('This is a text with an excessively modified deletion.');
    const twoAuthors = flatText(pdfOf('superdoc-gdocs-comments-and-tracked-changes-2-authors.docx'));
    for (const side of ['How about now? Suggesting in here too', 'So much more!', 'Tracked changes', 'And more and more']) {
      expect(twoAuthors).toContain(side);
    }
  });
});
