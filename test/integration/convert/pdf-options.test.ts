import { readFileSync } from 'node:fs';
import path from 'node:path';
import PizZip from 'pizzip';
import { describe, expect, it } from 'vitest';
import { pdfFilterData } from '../../../src/documents/docx-pdf/index.js';
import { buildDocx, para } from '../../support/annotate/docx-builder.js';
import { multipart } from '../../support/api-key.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { annotationSubtypes, catalogOf, pageSize, pdfFonts, pdfImages, pdfInfo, qpdfJson } from '../../support/pdf-inspect.js';
import { pdfPageCount, pdfText } from '../../support/pdf-text.js';
import { useOfficeTestApp } from '../../support/office-test-app.js';

/**
 * Every PDF option through the real routes, each output checked with a tool that is not LibreOffice:
 * pdfinfo (pages, page size, tagging, encryption, XMP with -meta), qpdf --json (catalog entries,
 * annotations, form fields), pdffonts (embedding), pdfimages (encoding, size, resolution).
 */
const corpus = (p: string) => readFileSync(path.join(CORPUS_DIR, p));
const fixture = (name: string) => readFileSync(path.resolve(import.meta.dirname, '../../fixtures/formats', name));
const THREE_PAGES = corpus('docx/superdoc-page-numbering-examples.docx');
const COMMENTS = corpus('docx/superdoc-WordOriginatedComments.docx');
const HEADINGS = corpus('docx/pandoc-tables.docx');
const PHOTO_MD = Buffer.from(`# A photo\n\n![The moon](data:image/jpeg;base64,${corpus('md/lalune.jpg').toString('base64')})\n`);

const t = useOfficeTestApp('pdf-options@example.com');

type Fields = Record<string, string>;
async function post(url: string, data: Buffer, filename: string, fields: Fields = {}) {
  const body = await multipart({ file: { data, filename }, ...fields });
  return t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${t.key}`, 'content-type': body.contentType }, payload: body.payload });
}
async function pdfOf(data: Buffer, filename: string, query = '', fields: Fields = {}): Promise<Buffer> {
  const res = await post(`/v1/convert${query}`, data, filename, fields);
  expect(res.statusCode, res.body.slice(0, 400)).toBe(200);
  expect(res.headers['content-type']).toBe('application/pdf');
  return res.rawPayload;
}

describe('PDF options on POST /v1/convert', () => {
  it('cost nothing when not given: no filter data reaches LibreOffice', () => {
    expect(pdfFilterData({})).toBeUndefined();
    expect(pdfFilterData(undefined)).toBeUndefined();
    expect(pdfFilterData({ pageRanges: '1-2' })).toEqual({ PageRange: '1-2' });
  });

  it('pageRanges (query or multipart field) exports only those pages', async () => {
    expect(pdfPageCount(await pdfOf(THREE_PAGES, 'p.docx'))).toBe(3);
    const second = await pdfOf(THREE_PAGES, 'p.docx', '?pageRanges=2');
    expect(pdfPageCount(second)).toBe(1);
    expect(pdfText(second)).toContain('Page 2 of 3');
    const asField = await pdfOf(THREE_PAGES, 'p.docx', '', { pageRanges: '1,3' });
    expect(pdfPageCount(asField)).toBe(2);
    expect(pdfText(asField)).toMatch(/Page 1 of 3[\s\S]*Page 3 of 3/);
  });

  it('landscape turns the pages of a document and of a spreadsheet', async () => {
    const [w, h] = pageSize(await pdfOf(HEADINGS, 't.docx'));
    expect(w).toBeLessThan(h);
    const [lw, lh] = pageSize(await pdfOf(HEADINGS, 't.docx', '?landscape=true'));
    expect(lw).toBeCloseTo(h, 0);
    expect(lh).toBeCloseTo(w, 0);
    const [sw, sh] = pageSize(await pdfOf(fixture('datasets.xlsx'), 'd.xlsx', '', { landscape: 'true' }));
    expect(sw).toBeGreaterThan(sh);
  });

  it('exportComments makes Word comments PDF text annotations', async () => {
    expect(annotationSubtypes(qpdfJson(await pdfOf(COMMENTS, 'c.docx')))['/Text']).toBeUndefined();
    const annotated = qpdfJson(await pdfOf(COMMENTS, 'c.docx', '?exportComments=true'));
    const comments = (new PizZip(COMMENTS).file('word/comments.xml')!.asText().match(/<w:comment\b/g) ?? []).length;
    expect(annotationSubtypes(annotated)['/Text']).toBe(comments);
    const contents = Object.values(annotated.objects).map((o) => o.value?.['/Contents']).filter(Boolean).join(' ');
    expect(contents).toContain('comment on delete');
  });

  it('exportBookmarks=false leaves the outline out (it is there by default)', async () => {
    expect(catalogOf(qpdfJson(await pdfOf(HEADINGS, 't.docx')))['/Outlines']).toBeDefined();
    expect(catalogOf(qpdfJson(await pdfOf(HEADINGS, 't.docx', '?exportBookmarks=false')))['/Outlines']).toBeUndefined();
  });

  it('exportFormFields=false flattens form controls (they are PDF form fields by default)', async () => {
    const form = fixture('form-controls.odt');
    const withFields = qpdfJson(await pdfOf(form, 'f.odt'));
    expect(catalogOf(withFields)['/AcroForm']).toBeDefined();
    expect(annotationSubtypes(withFields)['/Widget']).toBe(2);
    const flat = qpdfJson(await pdfOf(form, 'f.odt', '', { exportFormFields: 'false' }));
    expect(catalogOf(flat)['/AcroForm']).toBeUndefined();
    expect(annotationSubtypes(flat)['/Widget']).toBeUndefined();
  });

  it('image options: losslessImageCompression, quality, reduceImageResolution + maxImageResolution', async () => {
    const [jpeg] = pdfImages(await pdfOf(PHOTO_MD, 'moon.md'));
    expect(jpeg!.encoding).toBe('jpeg');
    const [lossless] = pdfImages(await pdfOf(PHOTO_MD, 'moon.md', '?losslessImageCompression=true'));
    expect(lossless!.encoding).not.toBe('jpeg');
    const [low] = pdfImages(await pdfOf(PHOTO_MD, 'moon.md', '?quality=5'));
    expect(low!.encoding).toBe('jpeg');
    expect(low!.bytes).toBeLessThan(jpeg!.bytes / 2);
    const [reduced] = pdfImages(await pdfOf(PHOTO_MD, 'moon.md', '', { reduceImageResolution: 'true', maxImageResolution: '75' }));
    expect(jpeg!.xPpi).toBeGreaterThan(80);
    expect(reduced!.xPpi).toBeLessThanOrEqual(76);
    expect(reduced!.width).toBeLessThan(jpeg!.width);
  });

  it.each([
    ['PDF/A-1b', 1],
    ['PDF/A-2b', 2],
    ['PDF/A-3b', 3],
  ] as const)('pdfa=%s: XMP identification, fonts embedded, not encrypted, output intent present', async (level, part) => {
    const plain = await pdfOf(HEADINGS, 't.docx');
    expect(pdfInfo(plain, true)).not.toContain('pdfaid');
    expect(catalogOf(qpdfJson(plain))['/OutputIntents']).toBeUndefined();
    const pdf = await pdfOf(HEADINGS, 't.docx', `?pdfa=${encodeURIComponent(level)}`);
    const meta = pdfInfo(pdf, true);
    expect(meta).toMatch(new RegExp(`pdfaid:part(>|=")${part}`));
    // LibreOffice 7.4 tags PDF/A-1 output and declares conformance A, which includes B's requirements.
    expect(meta).toMatch(part === 1 ? /pdfaid:conformance(>|=")[AB]/ : /pdfaid:conformance(>|=")B/);
    expect(pdfInfo(pdf)).toMatch(/Encrypted:\s+no/);
    const fonts = pdfFonts(pdf);
    expect(fonts.length).toBeGreaterThan(0);
    expect(fonts.filter((f) => !f.embedded)).toEqual([]);
    expect(catalogOf(qpdfJson(pdf))['/OutputIntents']).toBeDefined();
  });

  it('pdfua=true: tagged, with the PDF/UA identification in the XMP', async () => {
    expect(pdfInfo(await pdfOf(HEADINGS, 't.docx'))).toMatch(/Tagged:\s+no/);
    const pdf = await pdfOf(HEADINGS, 't.docx', '', { pdfua: 'true' });
    expect(pdfInfo(pdf)).toMatch(/Tagged:\s+yes/);
    expect(pdfInfo(pdf, true)).toMatch(/pdfuaid:part(>|=")1/);
    expect(catalogOf(qpdfJson(pdf))['/StructTreeRoot']).toBeDefined();
  });

  it('singlePageSheets puts each sheet on one page', async () => {
    const xlsx = fixture('datasets.xlsx');
    const sheets = (new PizZip(xlsx).file('xl/workbook.xml')!.asText().match(/<sheet\b/g) ?? []).length;
    expect(pdfPageCount(await pdfOf(xlsx, 'd.xlsx'))).toBeGreaterThan(sheets);
    expect(pdfPageCount(await pdfOf(xlsx, 'd.xlsx', '?singlePageSheets=true'))).toBe(sheets);
  });

  it('outputFilename names the file; bad values, conflicts, unknown options and options with to=docx are 400', async () => {
    const named = await post('/v1/convert?outputFilename=Annual%20report', HEADINGS, 't.docx');
    expect(named.headers['content-disposition']).toContain('filename="Annual report.pdf"');
    const bad: [string, Fields][] = [
      ['?pageRanges=abc', {}],
      ['?quality=0', {}],
      ['?maxImageResolution=100', {}],
      ['?pdfa=PDF%2FA-4', {}],
      ['', { quality: '101' }],
      ['?landscape=true', { landscape: 'false' }],
      ['?nativePageRanges=1', {}],
      ['', { exportNotes: 'true' }],
    ];
    for (const [query, fields] of bad) {
      const res = await post(`/v1/convert${query}`, HEADINGS, 't.docx', fields);
      expect(res.statusCode, `${query} ${JSON.stringify(fields)}`).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
    const unknown = await post('/v1/convert?nativePageRanges=1', HEADINGS, 't.docx');
    expect(unknown.body).toContain('nativePageRanges');
    const toDocx = await post('/v1/convert?to=docx&pdfa=PDF%2FA-2b', Buffer.from('# Hi\n'), 'n.md');
    expect(toDocx.statusCode).toBe(400);
  });
});

describe('PDF options where another route renders a PDF', () => {
  it('annotate with to=pdf takes them as query parameters and multipart fields', async () => {
    const template = buildDocx({ body: para('Dear {name},') });
    const fields = JSON.stringify([{ id: 'name', type: 'text', value: 'Ada' }]);
    const res = await post('/v1/annotate?to=pdf&pdfa=PDF%2FA-2b', template, 'letter.docx', { fields, landscape: 'true', outputFilename: 'For Ada' });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect(pdfText(res.rawPayload)).toContain('Dear Ada,');
    expect(pdfInfo(res.rawPayload, true)).toMatch(/pdfaid:part(>|=")2/);
    const [w, h] = pageSize(res.rawPayload);
    expect(w).toBeGreaterThan(h);
    expect(res.headers['content-disposition']).toContain('filename="For Ada.pdf"');
    const docxOut = await post('/v1/annotate?pdfa=PDF%2FA-2b', template, 'letter.docx', { fields });
    expect(docxOut.statusCode).toBe(400);
  });

  it('sign of a DOCX renders it with them before signing', async () => {
    const signer = JSON.stringify({ name: 'Ada Lovelace', email: 'ada@example.com' });
    const auditTrail = JSON.stringify([{ type: 'submit', timestamp: new Date().toISOString() }]);
    const res = await post('/v1/sign?pageRanges=1&landscape=true', THREE_PAGES, 'p.docx', { signer, auditTrail });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    // The rendered page 1 (landscape), then whatever signing adds (an audit page).
    expect(pdfText(res.rawPayload)).toContain('Page 1 of 3');
    expect(pdfText(res.rawPayload)).not.toContain('Page 2 of 3');
    const [w, h] = pageSize(res.rawPayload);
    expect(w).toBeGreaterThan(h);
    const signedPdf = await post('/v1/sign?landscape=true', await pdfOf(HEADINGS, 't.docx'), 't.pdf', { signer, auditTrail });
    expect(signedPdf.statusCode).toBe(400);
  });
});
