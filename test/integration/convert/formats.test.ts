import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { multipart } from '../../support/api-key.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { pdfPageCount, pdfRawText, pdfText } from '../../support/pdf-text.js';
import { odfText, ooxmlText, pptBinaryText, rtfText, wordBinaryText, wordRecall } from '../../support/source-text.js';
import { useOfficeTestApp } from '../../support/office-test-app.js';

/**
 * Every input format through POST /v1/convert (detection, the warm jailed pool, the format's import
 * filter and its application's PDF export), the PDF's text read by pdftotext and compared with the
 * source's own text read without LibreOffice (test/support/source-text.ts). Where a fixture was
 * made by LibreOffice from another file (test/fixtures/formats/MANIFEST.md), that file's text is
 * the source's.
 */
const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/formats');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name));
const tablesDocx = readFileSync(path.join(CORPUS_DIR, 'docx/pandoc-tables.docx'));

const t = useOfficeTestApp('formats@example.com');

async function convert(data: Buffer, filename: string, query = '') {
  const body = await multipart({ file: { data, filename } });
  return t.app.inject({ method: 'POST', url: `/v1/convert${query}`, headers: { authorization: `Bearer ${t.key}`, 'content-type': body.contentType }, payload: body.payload });
}

/**
 * [fixture, the source's own text, lowest word recall accepted]. Spreadsheet cells cut long headers at
 * the column's width; pandoc fills some slides past their bottom edge, and a PDF page shows the slide only.
 */
const CASES: [string, () => string, number][] = [
  ['tables.dot', () => ooxmlText(tablesDocx), 0.95],
  ['tables.docm', () => ooxmlText(fixture('tables.docm')), 0.95],
  ['tables.dotx', () => ooxmlText(fixture('tables.dotx')), 0.95],
  ['planets.odt', () => odfText(fixture('planets.odt')), 0.95],
  ['Modern_business_letter_sans_serif.ott', () => odfText(fixture('Modern_business_letter_sans_serif.ott')), 0.9],
  ['planets.rtf', () => rtfText(fixture('planets.rtf')), 0.9],
  ['datasets.xlsx', () => ooxmlText(fixture('datasets.xlsx')), 0.85],
  ['datasets.xlsm', () => ooxmlText(fixture('datasets.xlsm')), 0.85],
  ['datasets.xls', () => ooxmlText(fixture('datasets.xlsx')), 0.85],
  ['datasets.ods', () => odfText(fixture('datasets.ods')), 0.85],
  ['pandoc-writer.pptx', () => ooxmlText(fixture('pandoc-writer.pptx')), 0.75],
  ['pandoc-writer.odp', () => odfText(fixture('pandoc-writer.odp')), 0.75],
  // Independent files (not made here): StarOffice 8 documents from LibreOffice's SDK examples.
  ['sdk-ToDo.ods', () => odfText(fixture('sdk-ToDo.ods')), 0.85],
  ['sdk-SimplePresentation.odp', () => odfText(fixture('sdk-SimplePresentation.odp')), 0.75],
  // Independent files (not made here): Microsoft Office documents from LibreOffice's own tests; the
  // binary ones read by the test's own MS-DOC / MS-PPT readers. The docm, dotx and xlsm hold a
  // few words only: the round-trip tables.* and datasets.xlsm above keep the larger content.
  ['tdf118412.doc', () => wordBinaryText(fixture('tdf118412.doc')), 0.95],
  ['hello.docm', () => ooxmlText(fixture('hello.docm')), 1],
  ['sample.dotx', () => ooxmlText(fixture('sample.dotx')), 1],
  ['tdf131562.xlsm', () => ooxmlText(fixture('tdf131562.xlsm')), 1],
  ['tdf124708.ppt', () => pptBinaryText(fixture('tdf124708.ppt')), 0.9],
  // Independent macro-enabled files and a template with real text (Word 2007 with a VBA project:
  // two pages of Russian prose; Word 2013: a résumé template; Excel 2013 with a VBA project: a
  // five-page production calendar, whose sheets hold strings the print area leaves out).
  ['poi-45690.docm', () => ooxmlText(fixture('poi-45690.docm')), 0.95],
  ['poi-60316.dotx', () => ooxmlText(fixture('poi-60316.dotx')), 0.95],
  ['tdf111974.xlsm', () => ooxmlText(fixture('tdf111974.xlsm')), 0.85],
];

describe('POST /v1/convert: every format LibreOffice reads, to PDF', () => {
  it.each(CASES)('%s: the PDF has the source’s text', async (name, sourceText, minimum) => {
    const res = await convert(fixture(name), name);
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-disposition']).toContain(`filename="${name.replace(/\.[^.]+$/, '')}.pdf"`);
    const { recall, missing } = wordRecall(sourceText(), pdfRawText(res.rawPayload));
    expect(recall, `missing: ${missing.slice(0, 20).join(' ')}`).toBeGreaterThanOrEqual(minimum);
  });

  it('WordPerfect: the sentences stored in the file are in the PDF', async () => {
    const wp = fixture('prn_test5.wpd');
    const res = await convert(wp, 'printer test.wp');
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    const text = pdfText(res.rawPayload).replace(/\s+/g, ' ');
    for (const sentence of ['WordPerfect 5.1 Printer Test', 'WordPerfect 5.1 has many new features such as labels']) {
      expect(wp.includes(sentence), 'the source holds it').toBe(true);
      expect(text).toContain(sentence);
    }
  });

  it('CSV is laid out as a table: each record’s fields on one line, in order', async () => {
    const csv = fixture('distro-info-debian.csv');
    const res = await convert(csv, 'debian.csv');
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    const lines = pdfText(res.rawPayload, true).split('\n').map((l) => l.trim().split(/\s+/).join(' '));
    const records = csv.toString('utf8').trim().split('\n').slice(1).map((r) => r.split(',').filter(Boolean));
    for (const fields of records) {
      // Calc shows 2.0 as 2: compare numbers as numbers.
      const expected = fields.map((f) => (/^\d+\.\d+$/.test(f) ? String(Number(f)) : f)).join(' ');
      expect(lines, expected).toContain(expected);
    }
  });

  it('CSV with semicolons is split at them, and text named .txt is laid out verbatim, its Markdown untouched', async () => {
    const res = await convert(Buffer.from('city;country\nLyon;France\nGhent;Belgium\n'), 'cities');
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    const lines = pdfText(res.rawPayload, true).split('\n').map((l) => l.trim().split(/\s+/).join(' '));
    expect(lines).toContain('Lyon France');
    const md = fixture('planets.txt');
    const asText = await convert(md, 'planets.txt');
    expect(asText.statusCode).toBe(200);
    const text = pdfText(asText.rawPayload);
    expect(text).toContain('+------------------+');
    expect(wordRecall(md.toString('utf8'), pdfRawText(asText.rawPayload)).recall).toBeGreaterThanOrEqual(0.95);
    // Named .txt, Markdown marks stay as typed; named .md (or with from=md) they are Markdown.
    const note = Buffer.from('# Title\n\nSome *emphasis* here.\n');
    expect(pdfText((await convert(note, 'note.txt')).rawPayload)).toContain('Some *emphasis* here.');
    expect(pdfText((await convert(note, 'note.txt', '?from=md')).rawPayload)).toContain('Some emphasis here.');
    expect(pdfText((await convert(note, 'note.md')).rawPayload)).toContain('Some emphasis here.');
  });

  it('a spreadsheet has one page per printed area; a presentation one page per slide', async () => {
    const pptx = fixture('pandoc-writer.pptx');
    const slides = Object.keys(new (await import('pizzip')).default(pptx).files).filter((n) => /^ppt\/slides\/slide\d+\.xml$/.test(n)).length;
    expect(pdfPageCount((await convert(pptx, 'p.pptx')).rawPayload)).toBe(slides);
    expect(pdfPageCount((await convert(fixture('datasets.xlsx'), 'd.xlsx')).rawPayload)).toBeGreaterThan(1);
  });

  it('refuses what it does not take with 415 naming the accepted formats, and a from that contradicts the content with 400', async () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');
    const res = await convert(png, 'picture.docx');
    expect(res.statusCode).toBe(415);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', acceptedFormats: expect.arrayContaining(['docx', 'xlsx', 'pptx', 'odt', 'csv', 'md']) });
    const mismatch = await convert(fixture('datasets.xlsx'), 'd.xlsx', '?from=docx');
    expect(mismatch.statusCode).toBe(400);
    expect(mismatch.json()).toMatchObject({ code: 'INVALID_FILE_FORMAT' });
    const rtfAsMarkdown = await convert(fixture('planets.rtf'), 'notes.md', '?from=md');
    expect(rtfAsMarkdown.statusCode).toBe(400);
    const xlsxToDocx = await convert(fixture('datasets.xlsx'), 'd.xlsx', '?to=docx');
    expect(xlsxToDocx.statusCode).toBe(400);
  });
});
