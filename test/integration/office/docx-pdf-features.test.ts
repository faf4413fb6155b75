import PizZip from 'pizzip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertDocxToPdf } from '../../../src/documents/docx-pdf/index.js';
import { OfficePool } from '../../../src/office/index.js';
import { corpusDocx, flatText, pageTexts, pdfText } from './pdf-tools.js';

let pool: OfficePool;

beforeAll(async () => {
  pool = new OfficePool({ size: 1 });
  await pool.start();
}, 90_000);

afterAll(async () => {
  await pool?.close();
});

const convert = (name: string, trackedChanges: 'markup' | 'accept' | 'reject') =>
  convertDocxToPdf(pool, corpusDocx(name), { trackedChanges });

describe('tracked changes', () => {
  it('accept keeps only inserted text, reject only deleted text', async () => {
    expect(flatText(await convert('pandoc-track_changes_insertion.docx', 'accept'))).toBe('This is a text with two exciting insertions.');
    expect(flatText(await convert('pandoc-track_changes_insertion.docx', 'reject'))).toBe('This is a text with insertions.');
    expect(flatText(await convert('pandoc-track_changes_deletion.docx', 'accept'))).toBe('This is a text with a deletion.');
    expect(flatText(await convert('pandoc-track_changes_deletion.docx', 'reject'))).toBe('This is a text with an excessively modified deletion.');
  });

  it('applies to every author', async () => {
    const inserted = ['How about now? Suggesting in here too', 'So much more!'];
    const deleted = ['Tracked changes', 'And more and more'];
    const name = 'superdoc-gdocs-comments-and-tracked-changes-2-authors.docx';
    const accepted = flatText(await convert(name, 'accept'));
    const rejected = flatText(await convert(name, 'reject'));
    for (const text of inserted) {
      expect(accepted).toContain(text);
      expect(rejected).not.toContain(text);
    }
    for (const text of deleted) {
      expect(accepted).not.toContain(text);
      expect(rejected).toContain(text);
    }
  });

  it('handles inserted and deleted paragraph marks', async () => {
    const lines = (pdf: Buffer) => pdfText(pdf).split('\n').map((l) => l.trim()).filter(Boolean);
    const name = 'pandoc-paragraph_insertion_deletion.docx';
    expect(lines(await convert(name, 'accept'))).toEqual(['This is a', 'splitParagraph.']);
    expect(lines(await convert(name, 'reject'))).toEqual(['This is a split', 'Paragraph.']);
  });
});

/** A one-page-plus table built on a corpus document; `repeatHeader` marks its first row w:tblHeader. */
function longTableDocx(repeatHeader: boolean): Buffer {
  const zip = new PizZip(corpusDocx('pandoc-track_changes_insertion.docx'));
  const cell = (text: string) => `<w:tc><w:tcPr><w:tcW w:w="4000" w:type="dxa"/></w:tcPr><w:p><w:r><w:t>${text}</w:t></w:r></w:p></w:tc>`;
  const header = `<w:tr>${repeatHeader ? '<w:trPr><w:tblHeader/></w:trPr>' : ''}${cell('HEADERCELL-A')}${cell('HEADERCELL-B')}</w:tr>`;
  const rows = Array.from({ length: 120 }, (_, i) => `<w:tr>${cell(`row ${i + 1}`)}${cell(`value ${i + 1}`)}</w:tr>`).join('');
  const table =
    '<w:tbl><w:tblPr><w:tblW w:w="8000" w:type="dxa"/><w:tblBorders><w:top w:val="single" w:sz="4"/><w:bottom w:val="single" w:sz="4"/></w:tblBorders></w:tblPr>' +
    `<w:tblGrid><w:gridCol w:w="4000"/><w:gridCol w:w="4000"/></w:tblGrid>${header}${rows}</w:tbl><w:p/>`;
  zip.file('word/document.xml', zip.file('word/document.xml')!.asText().replace('<w:body>', `<w:body>${table}`));
  return zip.generate({ type: 'nodebuffer', compression: 'DEFLATE' });
}

describe('tables across pages', () => {
  it('repeat header rows (w:tblHeader) on every page of the table', async () => {
    const pages = pageTexts(await convertDocxToPdf(pool, longTableDocx(true)));
    expect(pages.length).toBeGreaterThanOrEqual(2);
    const withHeader = pages.filter((text) => text.includes('HEADERCELL-A'));
    expect(withHeader.length).toBe(pages.filter((text) => /row \d+/.test(text)).length);
    expect(withHeader.length).toBeGreaterThanOrEqual(2);
    expect(pages.join('\n')).toContain('row 120');
  });

  it('do not repeat ordinary first rows (control)', async () => {
    const pages = pageTexts(await convertDocxToPdf(pool, longTableDocx(false)));
    expect(pages.length).toBeGreaterThanOrEqual(2);
    expect(pages.filter((text) => text.includes('HEADERCELL-A')).length).toBe(1);
  });
});
