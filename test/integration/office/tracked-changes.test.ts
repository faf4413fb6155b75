import PizZip from 'pizzip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertDocxToPdf } from '../../../src/documents/docx-pdf/index.js';
import { OfficePool } from '../../../src/office/index.js';
import { changeCount, trackedDocx, trackedModel } from '../../support/tracked-docx.js';
import { corpusDocx, pageTexts } from './pdf-tools.js';

/**
 * Accept / reject end to end through LibreOffice: the PDF of a tracked document with every change
 * accepted (rejected) has the pages and text of the same document made accepted (rejected) in
 * advance, rendered the same way; on Latin and right-to-left text. Where LibreOffice's own
 * AcceptAllTrackedChanges works (Latin text), its result is an independent second opinion.
 */
let pool: OfficePool;

beforeAll(async () => {
  pool = new OfficePool({ size: 2 });
  await pool.start();
}, 120_000);

afterAll(async () => {
  await pool?.close();
});

const render = (docx: Buffer, trackedChanges: 'markup' | 'accept' | 'reject' = 'markup') => convertDocxToPdf(pool, docx, { trackedChanges });

describe('tracked changes resolved in the OOXML', () => {
  it.each([
    ['Arabic, right to left, ~700 changes', { seed: 700, rtl: true, paragraphs: 64, changesPerParagraph: 11 }],
    ['Latin, ~300 changes', { seed: 300, rtl: false, paragraphs: 30, changesPerParagraph: 10 }],
  ] as const)('%s: accept and reject equal the documents made so in advance', async (_label, options) => {
    const model = trackedModel(options);
    expect(changeCount(model)).toBeGreaterThan(250);
    const tracked = trackedDocx(model, 'tracked');
    const [accepted, rejected, acceptedInAdvance, rejectedInAdvance, markup] = await Promise.all([
      render(tracked, 'accept'),
      render(tracked, 'reject'),
      render(trackedDocx(model, 'accepted')),
      render(trackedDocx(model, 'rejected')),
      render(tracked),
    ]);
    expect(pageTexts(accepted)).toEqual(pageTexts(acceptedInAdvance));
    expect(pageTexts(rejected)).toEqual(pageTexts(rejectedInAdvance));
    // The modes differ from each other and from the markup (which shows both sides).
    expect(pageTexts(accepted)).not.toEqual(pageTexts(rejected));
    expect(pageTexts(markup).join('').length).toBeGreaterThan(Math.max(pageTexts(accepted).join('').length, pageTexts(rejected).join('').length));
  }, 120_000);

  it.each(['pandoc-track_changes_insertion.docx', 'pandoc-track_changes_deletion.docx', 'pandoc-track_changes_move.docx', 'superdoc-gdocs-comments-and-tracked-changes-2-authors.docx'])(
    '%s: same text as LibreOffice’s own accept/reject',
    async (name) => {
      const docx = corpusDocx(name);
      for (const mode of ['accept', 'reject'] as const) {
        const [ours, libreoffice] = await Promise.all([render(docx, mode), pool.convertToPdf(docx, { trackedChanges: mode })]);
        expect(pageTexts(ours)).toEqual(pageTexts(libreoffice));
      }
    },
    60_000,
  );

  it('generated Latin document: same text as LibreOffice’s own accept/reject', async () => {
    const tracked = trackedDocx(trackedModel({ seed: 11, rtl: false, paragraphs: 8, changesPerParagraph: 4 }), 'tracked');
    for (const mode of ['accept', 'reject'] as const) {
      const [ours, libreoffice] = await Promise.all([render(tracked, mode), pool.convertToPdf(tracked, { trackedChanges: mode })]);
      expect(pageTexts(ours).map((p) => p.replace(/\s+/g, ' '))).toEqual(pageTexts(libreoffice).map((p) => p.replace(/\s+/g, ' ')));
    }
  }, 60_000);
});

describe('fields are refreshed when the document has them', () => {
  it('a stale table of contents is rebuilt; PAGE numbers pages on the read-only path', async () => {
    const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
    const field = (code: string, cached: string) =>
      `<w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> ${code} </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>${cached}</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r>`;
    const page = (n: number) => `<w:p>${n > 1 ? '<w:r><w:br w:type="page"/></w:r>' : ''}<w:r><w:t xml:space="preserve">Page marker ${n}: </w:t></w:r>${field('PAGE', '99')}</w:p>`;
    const build = (body: string) => {
      const zip = new PizZip();
      zip.file('[Content_Types].xml', '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>');
      zip.file('_rels/.rels', '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>');
      zip.file('word/document.xml', `<?xml version="1.0"?><w:document xmlns:w="${W}"><w:body>${body}<w:sectPr/></w:body></w:document>`);
      return zip.generate({ type: 'nodebuffer', compression: 'DEFLATE' });
    };
    // A table of contents whose stored entries are stale: only an index update shows the real heading.
    const toc = `<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> TOC \\o "1-3" </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>STALE ENTRY</w:t></w:r></w:p><w:p><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>`;
    const withToc = build(`${toc}<w:p><w:pPr><w:outlineLvl w:val="0"/></w:pPr><w:r><w:t>Chapter Alpha</w:t></w:r></w:p>`);
    const tocText = pageTexts(await render(withToc)).join('');
    expect(tocText).not.toContain('STALE');
    expect(tocText.match(/Chapter Alpha/g)).toHaveLength(2);
    const pages = pageTexts(await render(build([1, 2, 3].map(page).join(''))));
    expect(pages.map((p) => /Page marker (\d): (\d+)/.exec(p)?.slice(1))).toEqual([['1', '1'], ['2', '2'], ['3', '3']]);
  }, 60_000);
});
