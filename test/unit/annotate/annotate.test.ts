import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { annotateDocx, collectRemoteImageUrls, loadSvgRenderer } from '../../../src/documents/annotate/index.js';
import {
  buildDocx, cell, listParts, noteReference, para, plainText, pngImage, readPart, replacePartText, row, sdt, table, textBox, W_NS,
} from '../../support/annotate/docx-builder.js';
import { parseXml } from '../../../src/documents/ooxml/xml.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { rejection } from '../../support/domain-error.js';
import { httpStatusOf } from '../../../src/http/error-status.js';

const CORPUS = `${CORPUS_DIR}/templates/`;
const corpus = (name: string) => readFileSync(`${CORPUS}docxtemplater-${name}.docx`);
const EMU = 9525;


describe('annotate: docxtemplater tags', () => {
  it('fills text tags in body, header and footer, escaping XML and turning \\n into a line break', () => {
    const { docx, warnings } = annotateDocx({
      template: corpus('tag-example'),
      fields: [{ id: 'first_name', type: 'text', value: 'Ann <&> \u0001Bo\nSecond line' }, { id: 'last_name', type: 'text', value: 'Lee' }],
      data: { phone: '555-0101', description: 'A designer' },
    });
    const body = readPart(docx, 'word/document.xml');
    expect(body).toContain('Ann &lt;&amp;&gt; Bo');
    expect(body).not.toContain('\u0001');
    expect(body).toMatch(/Ann &lt;&amp;&gt; Bo<\/w:t>(<\/w:r><w:r>)?<w:br\/>(<\/w:r><w:r>)?<w:t[^>]*>Second line/);
    expect(plainText(readPart(docx, 'word/footer1.xml'))).toContain('555-0101');
    expect(readPart(docx, 'word/header1.xml')).toContain('Ann &lt;&amp;&gt; Bo');
    expect(body).not.toContain('{');
    expect(warnings).toEqual([]);
  });

  it('supports loops, conditions and nested data', () => {
    const template = buildDocx({
      body: para('{#items}') + para('{name}: {price.amount} EUR') + para('{/items}') + para('{#paid}PAID{/paid}{^paid}DUE{/paid}') + para('{customer.address.city}'),
    });
    const { docx } = annotateDocx({
      template,
      fields: [],
      data: { items: [{ name: 'Pen', price: { amount: 2 } }, { name: 'Ink', price: { amount: 5 } }], paid: false, customer: { address: { city: 'Lyon' } } },
    });
    const text = plainText(readPart(docx, 'word/document.xml'));
    expect(text).toContain('Pen: 2 EUR');
    expect(text).toContain('Ink: 5 EUR');
    expect(text).toContain('DUE');
    expect(text).not.toContain('PAID');
    expect(text).toContain('Lyon');
  });

  it('evaluates the safe expression subset of the angular example', () => {
    const { docx } = annotateDocx({
      template: corpus('angular-example'),
      fields: [],
      data: { person: { first_name: 'Jo', last_name: 'Doe', birth_year: 1990, age: 34 } },
    });
    expect(plainText(readPart(docx, 'word/document.xml'))).toContain('Jo Doe 2024');
  });

  it.each([
    ['errors-footer-and-header', 3, ['word/header1.xml', 'word/document.xml', 'word/footer1.xml']],
    ['multi-errors', 4, ['word/document.xml']],
    ['one-unclosed', 1, ['word/document.xml']],
  ])('reports every template error of %s as 422 TEMPLATE_INVALID', (name, count, parts) => {
    const error = rejection(() => annotateDocx({ template: corpus(name), fields: [] }));
    expect(httpStatusOf(error)).toBe(422);
    expect(error.code).toBe('TEMPLATE_INVALID');
    const errors = error.extensions?.errors as Array<{ part: string; explanation: string; offset: number | null }>;
    expect(errors).toHaveLength(count);
    expect(new Set(errors.map((e) => e.part))).toEqual(new Set(parts));
    expect(errors.every((e) => e.explanation.length > 0)).toBe(true);
    expect(error.details).toHaveLength(count);
    expect(error.details![0].field).toMatch(/^word\/\w+\.xml/);
  });

  it('rejects unknown field ids with FIELD_NOT_FOUND, or warns with ignoreUnknownFields', () => {
    const error = rejection(() => annotateDocx({ template: corpus('tag-example'), fields: [{ id: 'nope', type: 'text', value: 'x' }] }));
    expect(error.code).toBe('FIELD_NOT_FOUND');
    expect(error.message).toContain('"nope"');
    const { warnings } = annotateDocx({
      template: corpus('tag-example'),
      fields: [{ id: 'nope', type: 'text', value: 'x' }],
      options: { ignoreUnknownFields: true },
    });
    expect(warnings.map((w) => w.message).join(' ')).toContain('"nope"');
  });

  it('leaves tags without value empty, or fails with MISSING_VALUES in strict mode', () => {
    const template = buildDocx({ body: para('Hello {who}{missing}!') });
    const { docx, warnings } = annotateDocx({ template, fields: [{ id: 'who', type: 'text', value: 'Zoe' }] });
    expect(plainText(readPart(docx, 'word/document.xml'))).toContain('Hello Zoe!');
    expect(warnings.map((w) => w.message).join(' ')).toContain('{missing}');
    const error = rejection(() => annotateDocx({ template, fields: [{ id: 'who', type: 'text', value: 'Zoe' }], options: { strict: true } }));
    expect(httpStatusOf(error)).toBe(422);
    expect(error.code).toBe('MISSING_VALUES');
    expect(error.extensions?.tags).toEqual(['missing']);
  });

  it('fills every tag of a group', () => {
    const template = buildDocx({ body: para('{party} and again {party}'), header: para('{party}') });
    const { docx } = annotateDocx({ template, fields: [{ group: 'party', type: 'text', value: 'ACME' }] });
    expect(plainText(readPart(docx, 'word/document.xml'))).toContain('ACME and again ACME');
    expect(plainText(readPart(docx, 'word/header1.xml'))).toContain('ACME');
  });
});

describe('annotate: images and signatures in tags', () => {
  const logo = pngImage(400, 200);

  it('embeds a {%image} with the requested width and the height from the aspect ratio', () => {
    const template = buildDocx({ body: para('Logo: {%logo} end', '<w:rPr><w:b/></w:rPr>'), header: para('{%logo}') });
    const { docx } = annotateDocx({
      template,
      fields: [{ id: 'logo', type: 'image', value: `data:image/png;base64,${logo.toString('base64')}`, options: { dimensions: { width: '100' } } }],
    });
    const body = readPart(docx, 'word/document.xml');
    expect(body).toContain(`<wp:extent cx="${100 * EMU}" cy="${50 * EMU}"/>`);
    expect(body).toMatch(/Logo: <\/w:t><\/w:r><w:r><w:rPr><w:b\/><\/w:rPr><w:drawing>/);
    expect(plainText(body)).toContain(' end');
    const media = listParts(docx).filter((p) => p.startsWith('word/media/'));
    expect(media).toEqual(['word/media/docproc-annotate-1.png']);
    expect(readPart(docx, 'word/_rels/document.xml.rels')).toContain('Target="media/docproc-annotate-1.png"');
    expect(readPart(docx, 'word/_rels/header1.xml.rels')).toContain('Target="media/docproc-annotate-1.png"');
    expect(readPart(docx, '[Content_Types].xml')).toContain('Extension="png"');
  });

  it('caps the intrinsic size to the table cell width', () => {
    const template = buildDocx({ body: table([row([cell('{%photo}', 1656), cell('x')])]) });
    const { docx } = annotateDocx({ template, fields: [{ id: 'photo', type: 'image', value: pngImage(1000, 500).toString('base64') }] });
    const extent = /<wp:extent cx="(\d+)" cy="(\d+)"/.exec(readPart(docx, 'word/document.xml'))!;
    expect(Number(extent[1])).toBe((1656 - 216) * 635); // 1 inch
    expect(Number(extent[2])).toBe(Math.round(((1656 - 216) * 635) / 2));
  });

  it('takes cid: parts and pre-fetched URL images from `images`', () => {
    const template = buildDocx({ body: para('{%a}') + para('{%b}') });
    const { docx } = annotateDocx({
      template,
      fields: [{ id: 'a', type: 'image', value: 'cid:scan' }, { id: 'b', type: 'image', value: 'https://example.com/x.png' }],
      images: { 'cid:scan': pngImage(10, 10), 'https://example.com/x.png': pngImage(20, 10) },
    });
    expect(listParts(docx).filter((p) => p.startsWith('word/media/'))).toHaveLength(2);
    expect(collectRemoteImageUrls([{ id: 'b', type: 'image', value: 'https://example.com/x.png' }, { id: 't', type: 'text', value: 'https://t' }])).toEqual(['https://example.com/x.png']);
  });

  it('rejects values that are not images, unreadable SVG, and missing cid parts with 4xx', async () => {
    await loadSvgRenderer();
    const template = buildDocx({ body: para('{%a}') });
    const notImage = rejection(() => annotateDocx({ template, fields: [{ id: 'a', type: 'image', value: Buffer.from('hello world, not an image').toString('base64') }] }));
    expect(httpStatusOf(notImage)).toBe(400);
    expect(notImage.message).toContain('fields[0]');
    const svg = rejection(() => annotateDocx({ template, fields: [{ id: 'a', type: 'image', value: `data:image/svg+xml;base64,${Buffer.from('<svg/>').toString('base64')}` }] }));
    expect(svg.message).toMatch(/SVG/);
    const cid = rejection(() => annotateDocx({ template, fields: [{ id: 'a', type: 'image', value: 'cid:nothere' }] }));
    expect(httpStatusOf(cid)).toBe(400);
    expect(cid.message).toContain('nothere');
  });

  it('renders a typed signature block with labels and a coloured line', () => {
    const template = buildDocx({ body: para('Signature: {%sig}') });
    const { docx } = annotateDocx({
      template,
      fields: [{ id: 'sig', type: 'signature', value: 'Jane Q. Doe', options: { arcElement: { color: '#ff0000' }, topLabel: { text: 'Signed by Jane', color: 'blue' }, bottomLabel: { text: '2026-11-23 10.0.0.1', color: '#00aa00' } } }],
    });
    const body = readPart(docx, 'word/document.xml');
    expect(body).toMatch(/<w:rFonts w:ascii="Brush Script MT"[^>]*\/><w:i\/>.*Jane Q\. Doe/);
    // The arc: an inline wps curve stroked in the arc colour, about as wide as the typed name (11 chars × 10 pt).
    const arc = /<wp:inline[^>]*><wp:extent cx="(\d+)" cy="(\d+)"\/>(?:(?!<\/wp:inline>)[\s\S])*?<a:path [^>]*fill="none"><a:moveTo>[\s\S]*?<a:cubicBezTo>[\s\S]*?<a:ln w="19050"[^>]*><a:solidFill><a:srgbClr val="FF0000"\/>/.exec(body);
    expect(arc).not.toBeNull();
    expect(Number(arc![1])).toBe(11 * 10 * 12700);
    expect(body).not.toMatch(/_{5,}/);
    expect(body).toMatch(/<w:color w:val="0000FF"\/>.*Signed by Jane/);
    expect(body).toMatch(/<w:color w:val="00AA00"\/>.*2026-11-23 10\.0\.0\.1/);
  });

  it('renders a drawn signature as an image', () => {
    const template = buildDocx({ body: para('{%sig}') });
    const { docx } = annotateDocx({ template, fields: [{ id: 'sig', type: 'signature', value: `data:image/png;base64,${pngImage(300, 100).toString('base64')}`, options: { dimensions: { height: 50 } } }] });
    const body = readPart(docx, 'word/document.xml');
    expect(body).toContain(`<wp:extent cx="${150 * EMU}" cy="${50 * EMU}"/>`);
    // The arc under a drawn signature is exactly as wide as the picture, in the default colour.
    expect(body).toMatch(new RegExp(`<wp:extent cx="${150 * EMU}" cy="114300"/>[\\s\\S]*?<a:srgbClr val="1F3A93"/>`));
  });
});

describe('annotate: tables', () => {
  const head = row([cell('Name'), cell('Qty')], true);
  const shaded = '<w:shd w:val="clear" w:color="auto" w:fill="FFEEAA"/>';

  it('fills a {#rows} row loop with {c0},{c1}… and keeps the row formatting', () => {
    const model = row([cell(`<w:p><w:r><w:rPr><w:i/></w:rPr><w:t>{#lines}{c0}</w:t></w:r></w:p>`, 3000, shaded), cell('{c1}{/lines}')]);
    const template = buildDocx({ body: table([head, model]) });
    const { docx } = annotateDocx({ template, fields: [{ id: 'lines', type: 'table', value: [['Pen', 2], ['Ink', 5], ['Pad', 1]] }] });
    const body = readPart(docx, 'word/document.xml');
    expect(body.match(/<w:tr>/g)).toHaveLength(4);
    expect(body.match(/w:fill="FFEEAA"/g)).toHaveLength(3);
    expect(plainText(body)).toMatch(/Name\s*Qty\s*Pen\s*2\s*Ink\s*5\s*Pad\s*1/);
  });

  it('rejects rows whose cell count differs from the template row with TABLE_SHAPE_MISMATCH', () => {
    const template = buildDocx({ body: table([head, row([cell('{#lines}{c0}'), cell('{c1}{/lines}')])]) });
    const error = rejection(() => annotateDocx({ template, fields: [{ id: 'lines', type: 'table', value: [['a', 'b'], ['only one']] }] }));
    expect(httpStatusOf(error)).toBe(422);
    expect(error.code).toBe('TABLE_SHAPE_MISMATCH');
    expect(error.details?.[0].field).toBe('lines[1]');
  });

  it('fills a table wrapped by a content control, keeping the header row and copying the model row style', () => {
    const model = row([cell('<w:p><w:r><w:rPr><w:b/><w:color w:val="C00000"/></w:rPr><w:t></w:t></w:r></w:p>', 3000, shaded), cell('')]);
    const template = buildDocx({ body: sdt('items', table([head, model])) });
    const { docx } = annotateDocx({ template, fields: [{ id: 'items', type: 'table', value: [['A', '1'], ['B', '2']] }] });
    const body = readPart(docx, 'word/document.xml');
    expect(body.match(/<w:tr>/g)).toHaveLength(3);
    expect(body.match(/w:fill="FFEEAA"/g)).toHaveLength(2);
    expect(body).toMatch(/<w:rPr><w:b\/><w:color w:val="C00000"\/><\/w:rPr><w:t xml:space="preserve">A<\/w:t>/);
    expect(plainText(body)).toMatch(/Name\s*Qty\s*A\s*1\s*B\s*2/);
  });

  it('drops the model formatting when copyRowStyle is false', () => {
    const model = row([cell('<w:p><w:r><w:rPr><w:b/></w:rPr><w:t>x</w:t></w:r></w:p>', 3000, shaded), cell('')]);
    const template = buildDocx({ body: table([head, row([cell(sdt('items', '<w:r><w:t>here</w:t></w:r>')), cell('')]), model]) });
    const { docx } = annotateDocx({ template, fields: [{ id: 'items', type: 'table', value: [['A', '1']], options: { copyRowStyle: false } }] });
    const body = readPart(docx, 'word/document.xml');
    expect(plainText(body)).toMatch(/Name\s*Qty\s*A\s*1\s*x/);
    expect(body).not.toMatch(/<w:b\/><\/w:rPr><w:t xml:space="preserve">A/);
  });
});

describe('annotate: content controls', () => {
  const runControl = (tag: string) =>
    `<w:p><w:r><w:t xml:space="preserve">Name: </w:t></w:r>${sdt(tag, '<w:r><w:rPr><w:rStyle w:val="PlaceholderText"/><w:b/></w:rPr><w:t>Click here</w:t></w:r>', { placeholder: true })}</w:p>`;

  it('fills run-level controls keeping formatting and clearing the placeholder state', () => {
    const template = buildDocx({ body: runControl('client') });
    const { docx } = annotateDocx({ template, fields: [{ id: 'client', type: 'text', value: 'Ada\nLovelace' }] });
    const body = readPart(docx, 'word/document.xml');
    expect(body).not.toContain('showingPlcHdr');
    expect(body).not.toContain('PlaceholderText');
    expect(body).toContain('<w:rPr><w:b/></w:rPr><w:t xml:space="preserve">Ada</w:t><w:br/><w:t xml:space="preserve">Lovelace</w:t>');
    expect(body).not.toContain('Click here');
  });

  it('finds controls by namespace, not by prefix: a document binding WordprocessingML to x: is filled like one using w:', () => {
    const template = buildDocx({ body: runControl('client') });
    const prefixed = replacePartText(template, 'word/document.xml', (xml) => xml.replace(/xmlns:w=/, 'xmlns:x=').replace(/(<\/?)w:/g, '$1x:').replace(/ w:/g, ' x:'));
    expect(readPart(prefixed, 'word/document.xml')).not.toContain('<w:');
    const { docx } = annotateDocx({ template: prefixed, fields: [{ id: 'client', type: 'text', value: 'Ada' }] });
    const doc = parseXml(readPart(docx, 'word/document.xml')!);
    const texts = Array.from(doc.getElementsByTagNameNS(W_NS, 't')).map((t) => t.textContent);
    expect(texts).toContain('Ada');
    expect(texts).not.toContain('Click here');
    expect(Array.from(doc.getElementsByTagNameNS(W_NS, 'showingPlcHdr'))).toHaveLength(0);
  });

  it('matches the title (alias), and fills controls in the header, footer and a text box', () => {
    const template = buildDocx({
      body: textBox(sdt('tb', para('placeholder'))) + para('{x}'),
      header: sdt('ignored-tag', para('old header'), { alias: 'Company' }),
      footer: `<w:p>${sdt('Company', '<w:r><w:t>old</w:t></w:r>')}</w:p>`,
    });
    const { docx } = annotateDocx({
      template,
      fields: [{ id: 'Company', type: 'text', value: 'Initech' }, { id: 'tb', type: 'text', value: 'In the box' }, { id: 'x', type: 'text', value: 'X' }],
    });
    expect(plainText(readPart(docx, 'word/header1.xml'))).toContain('Initech');
    expect(plainText(readPart(docx, 'word/header1.xml'))).not.toContain('old header');
    expect(plainText(readPart(docx, 'word/footer1.xml'))).toContain('Initech');
    const body = readPart(docx, 'word/document.xml');
    expect(body).toMatch(/<w:txbxContent><w:sdt>.*In the box.*<\/w:txbxContent>/);
  });

  it('replaces the picture of a picture control, fitting the image in its frame', () => {
    const frame = `<w:r><w:drawing><wp:inline><wp:extent cx="952500" cy="952500"/><wp:docPr id="5" name="Picture 5"/><a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic><pic:nvPicPr><pic:cNvPr id="5" name="p"/><pic:cNvPicPr/></pic:nvPicPr><pic:blipFill><a:blip r:embed="rIdNone"/></pic:blipFill><pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="952500" cy="952500"/></a:xfrm><a:prstGeom prst="rect"/></pic:spPr></pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r>`;
    const template = buildDocx({ body: `<w:p>${sdt('photo', frame, { placeholder: true })}</w:p>` });
    const { docx } = annotateDocx({ template, fields: [{ id: 'photo', type: 'image', value: pngImage(200, 100).toString('base64') }] });
    const body = readPart(docx, 'word/document.xml');
    expect(body).toContain('<wp:extent cx="952500" cy="476250"/>');
    expect(body).toMatch(/<a:blip r:embed="rIdDocproc1"\/>/);
    expect(readPart(docx, 'word/_rels/document.xml.rels')).toContain('Id="rIdDocproc1"');
  });

  it('inserts images and signatures into empty block-level controls', () => {
    const template = buildDocx({ body: sdt('pic', para('')) + sdt('sign', para('Sign here')) });
    const { docx } = annotateDocx({
      template,
      fields: [{ id: 'pic', type: 'image', value: pngImage(50, 50).toString('base64') }, { id: 'sign', type: 'signature', value: 'J. Smith', options: { bottomLabel: { text: 'IP 1.2.3.4' } } }],
    });
    const body = readPart(docx, 'word/document.xml');
    expect(body).toContain(`<wp:extent cx="${50 * EMU}" cy="${50 * EMU}"/>`);
    expect(plainText(body)).toContain('J. Smith');
    expect(plainText(body)).toContain('IP 1.2.3.4');
    expect(plainText(body)).not.toContain('Sign here');
  });
});

describe('annotate: real documents with content controls', () => {
  it('fills a real Word content control (pandoc sdt_elements) by its title and by its tag', () => {
    const template = readFileSync(`${CORPUS_DIR}/docx/pandoc-sdt_elements.docx`);
    for (const id of ['Content Type', 'Content type']) {
      const { docx } = annotateDocx({ template, fields: [{ id, type: 'text', value: 'Accessibility text, icon' }] });
      const body = readPart(docx, 'word/document.xml');
      expect(body).toMatch(/<w:rFonts w:ascii="Arial"[^>]*\/><w:sz w:val="22"\/><w:szCs w:val="22"\/><\/w:rPr><w:t xml:space="preserve">Accessibility text, icon<\/w:t>/);
    }
  });

  it('reads parts that start with a UTF-8 BOM (docx4j toc)', () => {
    const template = readFileSync(`${CORPUS_DIR}/docx/docx4j-toc.docx`);
    const { docx } = annotateDocx({ template, fields: [{ id: 'none', type: 'text', value: 'x' }], options: { ignoreUnknownFields: true } });
    expect(readPart(docx, 'word/document.xml')).toContain('<w:sdt');
  });
});

describe('annotate: input guards', () => {
  it('rejects a non-DOCX template and bad fields with 4xx', () => {
    expect(httpStatusOf(rejection(() => annotateDocx({ template: Buffer.from('not a zip at all, really'), fields: [] })))).toBe(400);
    const template = buildDocx({ body: para('{a}') });
    const both = rejection(() => annotateDocx({ template, fields: [{ id: 'a', group: 'a', type: 'text', value: 'x' }] }));
    expect(httpStatusOf(both)).toBe(400);
    const badType = rejection(() => annotateDocx({ template, fields: [{ id: 'a', type: 'video' as 'text', value: 'x' }] }));
    expect(httpStatusOf(badType)).toBe(400);
    const tooMany = rejection(() => annotateDocx({ template, fields: [{ id: 'a', type: 'table', value: Array.from({ length: 6000 }, () => ['x']) }] }));
    expect(httpStatusOf(tooMany)).toBe(413);
  });
});

describe('annotate: footnotes and endnotes', () => {
  const withNotes = (endnote: string, footnote = para('Footnote for {client}.')) =>
    buildDocx({ body: `<w:p><w:r><w:t xml:space="preserve">Body {client}</w:t></w:r>${noteReference('footnote')}${noteReference('endnote')}</w:p>`, footnote, endnote });

  it('fills text tags, loops, images and content controls in endnotes as in footnotes', () => {
    const template = withNotes(para('Endnote for {client}: {#refs}[{.}] {/refs}') + para('{%stamp}') + `<w:p>${sdt('ref', '<w:r><w:t>REF</w:t></w:r>')}</w:p>`);
    const { docx, warnings } = annotateDocx({
      template,
      fields: [{ id: 'client', type: 'text', value: 'Acme & Co' }, { id: 'stamp', type: 'image', value: pngImage(40, 20).toString('base64') }, { id: 'ref', type: 'text', value: 'R-77' }],
      data: { refs: ['a', 'b'] },
    });
    expect(warnings).toEqual([]);
    const endnotes = readPart(docx, 'word/endnotes.xml');
    expect(plainText(endnotes)).toContain('Endnote for Acme &amp; Co: [a] [b]');
    expect(plainText(endnotes)).toContain('R-77');
    expect(endnotes).toContain(`<wp:extent cx="${40 * EMU}" cy="${20 * EMU}"/>`);
    expect(readPart(docx, 'word/_rels/endnotes.xml.rels')).toMatch(/Target="media\/docproc-annotate-1\.png"/);
    expect(plainText(readPart(docx, 'word/footnotes.xml'))).toContain('Footnote for Acme &amp; Co.');
    expect(endnotes).not.toContain('{');
  });

  it('counts a field used only in an endnote as matched, and reports endnote template errors with their part', () => {
    const { warnings } = annotateDocx({ template: withNotes(para('Only here: {lonely}'), para('plain')), fields: [{ id: 'lonely', type: 'text', value: 'x' }, { id: 'client', type: 'text', value: 'y' }] });
    expect(warnings).toEqual([]);
    const error = rejection(() => annotateDocx({ template: withNotes(para('{#open} never closed')), fields: [] }));
    expect(error.code).toBe('TEMPLATE_INVALID');
    expect((error.extensions?.errors as Array<{ part: string }>).map((e) => e.part)).toEqual(['word/endnotes.xml']);
  });
});
