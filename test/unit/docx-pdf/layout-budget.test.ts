import { DOMParser } from '@xmldom/xmldom';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { prepareDocxForPdf } from '../../../src/documents/docx-pdf/prepare.js';
import { LAYOUT_BUDGET, measureTables } from '../../../src/documents/docx-pdf/layout-budget.js';
import { buildDocx, para, W_NS } from '../../support/annotate/docx-builder.js';
import { answering, rejection } from '../../support/domain-error.js';
import { tableShape } from '../../support/table-shape.js';

/** Tables LibreOffice cannot lay out in time or memory are refused in Node, before it sees them. */
const nested = (depth: number, prefix = 'w'): string =>
  depth === 0 ? para('x') : `<${prefix}:tbl><${prefix}:tr><${prefix}:tc>${nested(depth - 1, prefix)}<w:p/></${prefix}:tc></${prefix}:tr></${prefix}:tbl>`;

describe('table nesting and cells are checked before LibreOffice', () => {
  it('a small DOCX with 3 000-deep nested tables is refused with 422 naming the limit', () => {
    const docx = buildDocx({ body: nested(3000) });
    console.log(`layout-budget: 3000-deep nested tables in a ${docx.length}-byte DOCX`);
    expect(docx.length).toBeLessThan(16 * 1024);
    const err = rejection(() => prepareDocxForPdf(docx, 'markup'));
    expect(err).toMatchObject(answering(422, 'DOCUMENT_TOO_COMPLEX', { extensions: { limit: { name: 'convert.maxTableNesting', max: LAYOUT_BUDGET.maxTableNesting } } }));
  });

  it('nesting at the limit passes, one more level does not, whatever the namespace prefix', () => {
    expect(prepareDocxForPdf(buildDocx({ body: nested(LAYOUT_BUDGET.maxTableNesting) }), 'markup').work).toBeDefined();
    expect(rejection(() => prepareDocxForPdf(buildDocx({ body: nested(LAYOUT_BUDGET.maxTableNesting + 1) }), 'markup')).code).toBe('DOCUMENT_TOO_COMPLEX');
    // The same elements under another prefix bound to WordprocessingML are the same tables to LibreOffice.
    const otherPrefix = nested(LAYOUT_BUDGET.maxTableNesting + 1, 'x').replace('<x:tbl>', `<x:tbl xmlns:x="${W_NS}">`);
    expect(rejection(() => prepareDocxForPdf(buildDocx({ body: otherPrefix }), 'markup')).code).toBe('DOCUMENT_TOO_COMPLEX');
  });

  it('more table cells than maxTableCells in all parts together are refused', () => {
    const budget = { ...LAYOUT_BUDGET, maxTableNesting: 32, maxTableCells: 1000 };
    const table = (cells: number) => `<w:tbl><w:tr>${'<w:tc><w:p/></w:tc>'.repeat(cells)}</w:tr></w:tbl>`;
    expect(measureTables(table(1000), budget).cells).toBe(1000);
    expect(rejection(() => measureTables(table(600) + table(401), budget))).toMatchObject({ code: 'DOCUMENT_TOO_COMPLEX', extensions: { limit: { name: 'convert.maxTableCells', max: 1000 } } });
  });
});

/** An independent reader: nesting and cells as a namespace-aware DOM parser sees the elements. */
function domShape(xml: string): { nesting: number; cells: number } {
  return tableShape([new DOMParser().parseFromString(xml, 'text/xml')], (e) => e.localName === 'tbl', (e) => e.localName === 'tc');
}

type Tree = { kind: 'p' } | { kind: 'tbl'; rows: Tree[][] };
const treeArb: fc.Arbitrary<Tree[]> = fc.letrec<{ blocks: Tree[]; block: Tree }>((tie) => ({
  blocks: fc.array(tie('block'), { minLength: 1, maxLength: 3 }),
  block: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant<Tree>({ kind: 'p' }),
    fc.record({ kind: fc.constant('tbl' as const), rows: fc.array(fc.array(tie('blocks').map((b) => b as unknown as Tree), { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 3 }) }),
  ),
})).blocks;

const prefixes = fc.constantFrom('w', 'x', 'wp14');
const render = (blocks: Tree[], prefix: string): string =>
  blocks
    .map((b) =>
      b.kind === 'p'
        ? `<${prefix}:p/>`
        : `<${prefix}:tbl><${prefix}:tblPr/>${b.rows.map((row) => `<${prefix}:tr>${row.map((cell) => `<${prefix}:tc><${prefix}:tcPr/>${render(cell as unknown as Tree[], prefix)}</${prefix}:tc>`).join('')}</${prefix}:tr>`).join('')}</${prefix}:tbl>`,
    )
    .join('');

describe('property: the count is what an XML parser sees', () => {
  it('nesting and cells counted on the text equal those of the parsed elements', () => {
    fc.assert(
      fc.property(treeArb, prefixes, (blocks, prefix) => {
        const xml = `<${prefix}:body xmlns:${prefix}="${W_NS}">${render(blocks, prefix)}</${prefix}:body>`;
        expect(measureTables(xml, { ...LAYOUT_BUDGET, maxTableNesting: Infinity, maxTableCells: Infinity })).toEqual(domShape(xml));
      }),
      { seed: 2611, numRuns: 300 },
    );
  });
});

describe('pictures LibreOffice would decode past its memory', () => {
  it('reads the size every raster header declares (PNG, JPEG with markers before its frame, GIF, BMP, WebP), and nothing else', async () => {
    const { pictureSize } = await import('../../../src/documents/docx-pdf/image-size.js');
    const { pngImage, gifHeader, jpegHeader } = await import('../../support/annotate/docx-builder.js');
    expect(pictureSize(pngImage(3, 2))).toEqual({ width: 3, height: 2 });
    expect(pictureSize(jpegHeader(12_000, 9_000))).toEqual({ width: 12_000, height: 9_000 });
    expect(pictureSize(gifHeader(640, 480))).toEqual({ width: 640, height: 480 });
    const bmp = Buffer.alloc(54);
    bmp.write('BM', 0, 'latin1');
    bmp.writeInt32LE(5000, 18);
    bmp.writeInt32LE(-4000, 22); // top-down
    expect(pictureSize(bmp)).toEqual({ width: 5000, height: 4000 });
    const webp = Buffer.alloc(30);
    webp.write('RIFF', 0, 'latin1');
    webp.write('WEBPVP8X', 8, 'latin1');
    webp.writeUIntLE(16_383, 24, 3);
    webp.writeUIntLE(9_999, 27, 3);
    expect(pictureSize(webp)).toEqual({ width: 16_384, height: 10_000 });
    for (const other of [Buffer.from('<svg/>'), Buffer.from('<?xml version="1.0"?><w:document/>'), Buffer.from([0xff, 0xd8, 0xff, 0xd9]), Buffer.alloc(0)]) expect(pictureSize(other)).toBeUndefined();
  });

  it('a DOCX holding a picture of more than maxPicturePixels is refused before LibreOffice, under any name and declared type', async () => {
    const { largeImagesDocx } = await import('../../support/office/large-images.js');
    const { jpegHeader } = await import('../../support/annotate/docx-builder.js');
    const PizZip = (await import('pizzip')).default;
    expect(prepareDocxForPdf(await largeImagesDocx(1, 9_000), 'markup').timings).toBeDefined(); // 81 Mpx: taken
    const err = rejection(() => prepareDocxForPdf(largeImagesDocx11k!, 'markup'));
    expect(err).toMatchObject(answering(422, 'DOCUMENT_TOO_COMPLEX', { extensions: { limit: { name: 'convert.maxPicturePixels', max: LAYOUT_BUDGET.maxPicturePixels } } }));
    // A JPEG header of 12 000 × 9 000 hidden in a part named and typed as XML.
    const zip = new PizZip(buildDocx({ body: para('x') }));
    zip.file('word/notes.xml', jpegHeader(12_000, 9_000));
    expect(rejection(() => prepareDocxForPdf(zip.generate({ type: 'nodebuffer' }) as Buffer, 'markup')).extensions).toEqual({ limit: { name: 'convert.maxPicturePixels', max: LAYOUT_BUDGET.maxPicturePixels } });
  });
});

let largeImagesDocx11k: Buffer | undefined;
beforeAll(async () => {
  const { largeImagesDocx } = await import('../../support/office/large-images.js');
  largeImagesDocx11k = await largeImagesDocx(1, 11_000); // 121 Mpx in a ~400 KB DOCX
}, 60_000);
