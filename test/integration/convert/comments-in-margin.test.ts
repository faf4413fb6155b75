import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import PizZip from 'pizzip';
import { describe, expect, it } from 'vitest';
import { marginWidth } from '../../../src/documents/docx-pdf/index.js';
import { multipart } from '../../support/api-key.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { pdfFonts, pdfInfo, qpdfJson, type QpdfObjects } from '../../support/pdf-inspect.js';
import { pdfPageCount, pdfText } from '../../support/pdf-text.js';
import { buildOdfPackage } from '../../support/office/odf-package.js';
import { useOfficeTestApp } from '../../support/office-test-app.js';

/**
 * commentsInMargin through POST /v1/convert on LibreOffice's real output, checked with poppler and
 * qpdf: pdftotext (body text and every comment's text), pdfinfo (every page widened by the margin
 * rule), qpdf --json (the /Text annotations removed, or kept with exportComments=true), pdftoppm
 * (the margin has ink on a page with a comment and none on a page without).
 */
const corpus = (p: string) => readFileSync(path.join(CORPUS_DIR, p));
/** One page, six comments (Word). */
const SIX_COMMENTS = corpus('docx/superdoc-WordOriginatedComments.docx');
/** Four pages; one comment, on page 3. */
const FOUR_PAGES = corpus('docx/superdoc-advanced-text.docx');

/** The text of each w:comment of a DOCX. */
function docxComments(docx: Buffer): string[] {
  const xml = new PizZip(docx).file('word/comments.xml')!.asText();
  return [...xml.matchAll(/<w:comment\b[^>]*>([\s\S]*?)<\/w:comment>/g)].map((m) => m[1]!.replace(/<\/w:p>/g, ' ').replace(/<[^>]+>/g, '').replace(/\s+/g, ' ').trim());
}

/** A two-page ODT made here: a comment on page 1, none on page 2. */
function odtWithComment(): Buffer {
  return buildOdfPackage('application/vnd.oasis.opendocument.text', '<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" ' +
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" ' +
    'xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/" office:version="1.2">' +
    '<office:automatic-styles><style:style style:name="P2" style:family="paragraph"><style:paragraph-properties fo:break-before="page"/></style:style></office:automatic-styles>' +
    '<office:body><office:text><text:p>The first page of the ODT<office:annotation><dc:creator>Grace Hopper</dc:creator><dc:date>2026-01-02T10:00:00</dc:date>' +
    '<text:p>Annotation written in an OpenDocument file, long enough to wrap over several lines in the margin box beside the page.</text:p></office:annotation> ends here.</text:p>' +
    '<text:p text:style-name="P2">The second page has no comment.</text:p></office:text></office:body></office:document-content>');
}

/** A one-cell ODS made here whose cell A1 has a note. */
function odsWithNote(): Buffer {
  return buildOdfPackage('application/vnd.oasis.opendocument.spreadsheet', '<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" ' +
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/" office:version="1.2">' +
    '<office:body><office:spreadsheet><table:table table:name="Sheet1"><table:table-row><table:table-cell office:value-type="string">' +
    '<office:annotation><dc:creator>Ada</dc:creator><text:p>A spreadsheet note in the margin</text:p></office:annotation><text:p>Value in A1</text:p>' +
    '</table:table-cell></table:table-row></table:table></office:spreadsheet></office:body></office:document-content>');
}

/** A one-slide ODP made here with a slide comment (officeooo:annotation). */
function odpWithComment(): Buffer {
  return buildOdfPackage('application/vnd.oasis.opendocument.presentation', '<?xml version="1.0" encoding="UTF-8"?><office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" ' +
    'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:draw="urn:oasis:names:tc:opendocument:xmlns:drawing:1.0" xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" ' +
    'xmlns:dc="http://purl.org/dc/elements/1.1/" xmlns:officeooo="http://openoffice.org/2009/office" office:version="1.2"><office:body><office:presentation><draw:page draw:name="p1">' +
    '<draw:frame svg:x="2cm" svg:y="2cm" svg:width="10cm" svg:height="3cm"><draw:text-box><text:p>Slide body text</text:p></draw:text-box></draw:frame>' +
    '<officeooo:annotation svg:x="3cm" svg:y="3cm" svg:width="1cm" svg:height="1cm"><dc:creator>Ada</dc:creator><dc:date>2026-01-01T00:00:00</dc:date><text:p>A slide comment in the margin</text:p></officeooo:annotation>' +
    '</draw:page></office:presentation></office:body></office:document-content>');
}

const t = useOfficeTestApp('margin@example.com');

async function convert(data: Buffer, filename: string, query = '', fields: Record<string, string> = {}): Promise<Buffer> {
  const body = await multipart({ file: { data, filename }, ...fields });
  const res = await t.app.inject({ method: 'POST', url: `/v1/convert${query}`, headers: { authorization: `Bearer ${t.key}`, 'content-type': body.contentType }, payload: body.payload });
  expect(res.statusCode, res.body.slice(0, 400)).toBe(200);
  return res.rawPayload;
}

/** Page sizes by pdfinfo, in points. */
function pageSizes(pdf: Buffer): [number, number][] {
  const info = execFileSync('pdfinfo', ['-f', '1', '-l', String(pdfPageCount(pdf)), '-'], { input: pdf }).toString('utf8');
  return [...info.matchAll(/Page\s+\d+ size:\s+([\d.]+) x ([\d.]+)/g)].map((m) => [Number(m[1]), Number(m[2])]);
}

/** Subtypes of the annotations the pages list (qpdf --json: pages, then each page's /Annots). */
function pageAnnotations(pdf: Buffer): string[] {
  const q: QpdfObjects = qpdfJson(pdf);
  const value = (ref: unknown) => q.objects[`obj:${String(ref)}`]?.value;
  const pages = Object.values(q.objects).map((o) => o.value).filter((v) => v?.['/Type'] === '/Page');
  return pages.flatMap((page) => {
    const annots = page!['/Annots'];
    const list = (Array.isArray(annots) ? annots : (value(annots) as unknown as unknown[] | undefined) ?? []) as unknown[];
    return list.map((ref) => String(value(ref)?.['/Subtype']));
  });
}

/** The darkest grey level (0 black – 255 white) in the page's margin, from a 36 dpi pdftoppm render. */
function darkestInMargin(pdf: Buffer, page: number, bodyWidth: number): number {
  const pgm = execFileSync('pdftoppm', ['-gray', '-r', '36', '-f', String(page), '-l', String(page), '-'], { input: pdf });
  const header = /^P5\s+(\d+)\s+(\d+)\s+255\s/.exec(pgm.toString('latin1', 0, 40))!;
  const [width, height] = [Number(header[1]), Number(header[2])];
  const pixels = pgm.subarray(header[0].length);
  // From 6 pt right of the old page edge (the dotted lines start at the edge) to the page's right side.
  const from = Math.ceil(((bodyWidth + 6) * 36) / 72);
  let darkest = 255;
  for (let y = 0; y < height; y++) for (let x = from; x < width; x++) darkest = Math.min(darkest, pixels[y * width + x]!);
  return darkest;
}

describe('commentsInMargin on POST /v1/convert', () => {
  it('DOCX: every comment and the body in the text, pages widened, annotations removed by default', async () => {
    const plain = await convert(SIX_COMMENTS, 'c.docx');
    const [[w, h]] = pageSizes(plain) as [[number, number]];
    const pdf = await convert(SIX_COMMENTS, 'c.docx', '?commentsInMargin=true');
    expect(pdfPageCount(pdf)).toBe(pdfPageCount(plain));
    expect(pageSizes(pdf)).toEqual([[w + marginWidth(w), h]]);
    expect(pageSizes(pdf)).toEqual([[857, 792]]);
    const text = pdfText(pdf);
    for (const line of pdfText(plain).split('\n').map((l) => l.trim()).filter(Boolean)) expect(text).toContain(line);
    const comments = docxComments(SIX_COMMENTS);
    expect(comments.length).toBe(6);
    for (const comment of comments) expect(text).toContain(comment);
    expect(text).toContain('Cole Palmer');
    expect(pageAnnotations(pdf)).toEqual([]);
    expect(darkestInMargin(pdf, 1, w)).toBeLessThan(128);
  });

  it('with exportComments=true the /Text annotations stay beside the margin', async () => {
    const pdf = await convert(SIX_COMMENTS, 'c.docx', '', { commentsInMargin: 'true', exportComments: 'true' });
    const subtypes = pageAnnotations(pdf);
    expect(subtypes.filter((s) => s === '/Text')).toHaveLength(6);
    expect(pdfText(pdf)).toContain(docxComments(SIX_COMMENTS)[0]);
    expect(pageSizes(pdf)[0]![0]).toBe(857);
  });

  it('a margin with ink only on the page that has a comment (DOCX, 4 pages, comment on page 3)', async () => {
    const pdf = await convert(FOUR_PAGES, 'a.docx', '?commentsInMargin=true');
    expect(pdfPageCount(pdf)).toBe(4);
    const sizes = pageSizes(pdf);
    expect(sizes).toHaveLength(4);
    for (const [w] of sizes) expect(w).toBe(857);
    expect(darkestInMargin(pdf, 3, 612)).toBeLessThan(128);
    for (const page of [1, 2, 4]) expect(darkestInMargin(pdf, page, 612)).toBe(255);
    for (const comment of docxComments(FOUR_PAGES)) expect(pdfText(pdf)).toContain(comment.slice(0, 40));
  });

  it('ODT: the annotation is drawn beside page 1, page 2 keeps a blank margin', async () => {
    const [[body, height]] = pageSizes(await convert(odtWithComment(), 'g.odt')) as [[number, number]];
    const pdf = await convert(odtWithComment(), 'g.odt', '?commentsInMargin=true');
    expect(pdfPageCount(pdf)).toBe(2);
    for (const [w, h] of pageSizes(pdf)) {
      expect(w).toBeCloseTo(body + marginWidth(body), 1);
      expect(h).toBe(height);
    }
    const text = pdfText(pdf).replace(/\s+/g, ' ');
    expect(text).toContain('The first page of the ODT');
    expect(text).toContain('The second page has no comment.');
    expect(text).toContain('Grace Hopper');
    expect(text).toContain('Annotation written in an OpenDocument file, long enough to wrap over several lines in the margin box beside the page.');
    expect(darkestInMargin(pdf, 1, body)).toBeLessThan(128);
    expect(darkestInMargin(pdf, 2, body)).toBe(255);
    expect(pdfInfo(pdf)).toMatch(/Pages:\s+2/);
  });

  it('with pdfa the update keeps the PDF/A identification and embeds its fonts', async () => {
    const pdf = await convert(SIX_COMMENTS, 'c.docx', '?commentsInMargin=true&pdfa=PDF%2FA-2b');
    expect(pdfInfo(pdf, true)).toMatch(/pdfaid:part(>|=")2/);
    const fonts = pdfFonts(pdf);
    expect(fonts.some((f) => /DejaVuSans-Bold/.test(f.name))).toBe(true);
    expect(fonts.filter((f) => !f.embedded)).toEqual([]);
    expect(pdfText(pdf)).toContain(docxComments(SIX_COMMENTS)[5]);
  });

  it('slide comments too: Impress exports them as annotations', async () => {
    const [[body]] = pageSizes(await convert(odpWithComment(), 's.odp')) as [[number, number]];
    const pdf = await convert(odpWithComment(), 's.odp', '?commentsInMargin=true');
    expect(pageSizes(pdf)[0]![0]).toBeCloseTo(body + marginWidth(body), 1);
    const text = pdfText(pdf);
    expect(text).toContain('Slide body text');
    expect(text).toContain('A slide comment in the margin');
    expect(darkestInMargin(pdf, 1, body)).toBeLessThan(128);
  });

  it('spreadsheet notes too: Calc exports them as annotations, titled by their cell', async () => {
    const [[body]] = pageSizes(await convert(odsWithNote(), 'n.ods')) as [[number, number]];
    const pdf = await convert(odsWithNote(), 'n.ods', '?commentsInMargin=true');
    expect(pageSizes(pdf)[0]![0]).toBeCloseTo(body + marginWidth(body), 1);
    const text = pdfText(pdf);
    expect(text).toContain('Value in A1');
    expect(text).toContain('A spreadsheet note in the margin');
    expect(pageAnnotations(pdf)).toEqual([]);
    expect(darkestInMargin(pdf, 1, body)).toBeLessThan(128);
  });
});
