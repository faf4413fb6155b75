import PizZip from 'pizzip';
import { describe, expect, it } from 'vitest';
import { annotateDocx } from '../../../src/documents/annotate/index.js';
import { checkRawXml } from '../../../src/documents/annotate/raw-xml.js';
import { buildDocx, cell, para, plainText, readPart, row, table } from '../../support/annotate/docx-builder.js';
import { superdocControl, superdocTag } from '../../support/annotate/superdoc.js';
import { httpStatusOf } from '../../../src/http/error-status.js';
import { answering, rejection } from '../../support/domain-error.js';


const bodyText = (docx: Buffer) => plainText(readPart(docx, 'word/document.xml'));

/** Runs split the way Word splits them: a tag's characters over several runs. */
const splitRuns = (text: string) =>
  `<w:p>${[...text].map((ch) => `<w:r><w:t xml:space="preserve">${ch.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</w:t></w:r>`).join('')}</w:p>`;

describe('SuperDoc editor templates (JSON w:tag content controls)', () => {
  const template = buildDocx({
    body:
      `<w:p><w:r><w:t xml:space="preserve">Dear </w:t></w:r>${superdocControl({ fieldId: 'customer_name', fieldTypeShort: 'text', displayLabel: 'Customer Name', fieldColor: '#980043' })}</w:p>` +
      `<w:p><w:r><w:t xml:space="preserve">Company: </w:t></w:r>${superdocControl({ group: 'company_name' }, 'Company')}</w:p>` +
      `<w:p><w:r><w:t xml:space="preserve">Signed for </w:t></w:r>${superdocControl({ group: 'company_name' }, 'Company')}</w:p>` +
      `<w:p><w:r><w:t xml:space="preserve">Left as is: </w:t></w:r>${superdocControl({ fieldId: 'not_sent', displayLabel: 'Not Sent' })}</w:p>`,
    header: `<w:p>${superdocControl({ group: 'company_name' }, 'Company')}</w:p>`,
    footer: `<w:p><w:r><w:t xml:space="preserve">Ref </w:t></w:r>${superdocControl({ fieldId: 'reference', fieldTypeShort: 'text', displayLabel: 'Reference Number' })}</w:p>`,
  });

  it('fills controls by fieldId, by group (every control of it, header included) and by displayLabel', () => {
    const { docx, warnings } = annotateDocx({
      template,
      fields: [
        { id: 'customer_name', type: 'text', value: 'Ada Lovelace' },
        { group: 'company_name', type: 'text', value: 'Analytical Engines Ltd' },
        { id: 'Reference Number', type: 'text', value: 'R-42' },
      ],
    });
    const body = bodyText(docx);
    expect(body).toContain('Dear Ada Lovelace');
    expect(body).toContain('Company: Analytical Engines Ltd');
    expect(body).toContain('Signed for Analytical Engines Ltd');
    expect(plainText(readPart(docx, 'word/header1.xml'))).toContain('Analytical Engines Ltd');
    expect(plainText(readPart(docx, 'word/footer1.xml'))).toContain('Ref R-42');
    // A control no field was sent for keeps its {{placeholder}} exactly, braces included.
    expect(body).toContain('Left as is: {{Not Sent}}');
    expect(body).not.toMatch(/\uE000|\uE001/);
    expect(warnings).toEqual([]);
    // The JSON tag itself is kept for the editor to read back.
    expect(readPart(docx, 'word/document.xml')).toContain(superdocTag({ fieldId: 'customer_name', fieldTypeShort: 'text', displayLabel: 'Customer Name', fieldColor: '#980043' }));
  });

  it('reports a field no control names as FIELD_NOT_FOUND, listing it', () => {
    const error = rejection(() => annotateDocx({ template, fields: [{ id: 'customer_nam', type: 'text', value: 'x' }] }));
    expect(error).toMatchObject(answering(422, 'FIELD_NOT_FOUND'));
    expect(error.message).toContain('"customer_nam"');
  });

  it('keeps docxtemplater tags working next to SuperDoc controls', () => {
    const mixed = buildDocx({ body: para('Order {order.id}') + `<w:p>${superdocControl({ fieldId: 'customer_name', displayLabel: 'Customer Name' })}</w:p>` });
    const { docx } = annotateDocx({ template: mixed, fields: [{ id: 'customer_name', type: 'text', value: 'Grace' }], data: { order: { id: 7 } } });
    expect(bodyText(docx)).toContain('Order 7');
    expect(bodyText(docx)).toContain('Grace');
  });
});

describe('tag names as docxtemplater reads them', () => {
  const names = ['first-name', 'customer.name', 'field-2024-01', 'Customer Name', '附件列表：附件的字段名', 'größe_1', 'a+b', 'x/y'];

  it.each(names)('{%s} matches a field of that id and a data key of that name', (name) => {
    const template = buildDocx({ body: splitRuns(`Field: {${name}}`) + para(`Data: {${name}}`) });
    const viaField = annotateDocx({ template, fields: [{ id: name, type: 'text', value: 'FIELD-VALUE' }] });
    expect(bodyText(viaField.docx)).toContain('Field: FIELD-VALUE');
    expect(viaField.warnings).toEqual([]);
    const viaData = annotateDocx({ template, fields: [], data: { [name]: 'DATA-VALUE' } });
    expect(bodyText(viaData.docx)).toContain('Data: DATA-VALUE');
    expect(viaData.warnings).toEqual([]);
  });

  it('reads a dotted name as member access only when no key has the whole name', () => {
    const template = buildDocx({ body: para('{customer.name}') });
    expect(bodyText(annotateDocx({ template, fields: [], data: { customer: { name: 'nested' } } }).docx)).toContain('nested');
    expect(bodyText(annotateDocx({ template, fields: [], data: { 'customer.name': 'flat', customer: { name: 'nested' } } }).docx)).toContain('flat');
  });

  it('filters the value of a name that is not an expression', () => {
    const template = buildDocx({ body: para('{first-name | upper} {unit price | number:2} {nick name | default:"none"}') });
    const { docx, warnings } = annotateDocx({ template, fields: [], data: { 'first-name': 'ada', first: 9, name: 1, 'unit price': 3 } });
    expect(bodyText(docx)).toContain('ADA 3.00 none');
    expect(warnings).toEqual([]);
  });

  it('evaluates a tag as an expression when it names nothing', () => {
    const template = buildDocx({ body: para('{a-b} {price * qty} {total > 100 ? "big" : "small"} {items[i]}') });
    const { docx } = annotateDocx({ template, fields: [], data: { a: 5, b: 2, price: 3, qty: 4, total: 150, items: ['x', 'y'], i: 1 } });
    expect(bodyText(docx)).toContain('3 12 big y');
  });

  it('warns (not silently) when a name has no value, and strict makes it MISSING_VALUES', () => {
    const template = buildDocx({ body: para('{first-name}') });
    const { warnings } = annotateDocx({ template, fields: [], data: { 'last-name': 'x' } });
    expect(warnings).toEqual([{ code: 'TAG_EMPTY', message: 'Tag {first-name} had no value and was left empty.', field: 'first-name' }]);
    expect(rejection(() => annotateDocx({ template, fields: [], data: {}, options: { strict: true } }))).toMatchObject({ code: 'MISSING_VALUES' });
  });

  it('loops and conditions with odd names, nested scopes and comparisons', () => {
    const template = buildDocx({
      body:
        para('{#line-items}') + para('{item-name}: {qty} × {unit price | number:2} {currency}') + para('{/line-items}') +
        para('{#total > 100}LARGE ORDER{/}') + para('{^notes-list}no notes{/notes-list}') +
        table([row([cell('Item'), cell('Qty')]), row([cell('{#line-items}{item-name}'), cell('{qty}{/line-items}')])]),
    });
    const { docx, warnings } = annotateDocx({
      template,
      fields: [],
      data: { currency: 'EUR', total: 120, 'notes-list': [], 'line-items': [{ 'item-name': 'Pen', qty: 2, 'unit price': 1.5 }, { 'item-name': 'Ink', qty: 1, 'unit price': 7 }] },
    });
    const text = bodyText(docx);
    expect(text).toContain('Pen: 2 × 1.50 EUR');
    expect(text).toContain('Ink: 1 × 7.00 EUR');
    expect(text).toContain('LARGE ORDER');
    expect(text).toContain('no notes');
    expect(text).toMatch(/Pen\s*2[\s\S]*Ink\s*1/);
    expect(warnings).toEqual([]);
  });
});

describe('filters', () => {
  const fill = (tags: string, data: Record<string, unknown>) => annotateDocx({ template: buildDocx({ body: para(tags) }), fields: [], data });

  it.each([
    ['{name | upper}', { name: 'Ada' }, 'ADA'],
    ['{name | lower}', { name: 'ADA' }, 'ada'],
    ['[{name | trim}]', { name: '  Ada  ' }, '[Ada]'],
    ['{name | capitalize}', { name: 'ada' }, 'Ada'],
    ['{nickname | default:"none"}', { nickname: '' }, 'none'],
    ['{nickname | default:name}', { name: 'Ada' }, 'Ada'],
    ['{tags | join:" / "}', { tags: ['a', 'b', 'c'] }, 'a / b / c'],
    ['{tags | join}', { tags: ['a', 'b'] }, 'a, b'],
    ['{tags | length}', { tags: ['a', 'b'] }, '2'],
    ["{date | format:'YYYY-MM-DD'}", { date: '2024-03-05T10:20:00Z' }, '2024-03-05'],
    ["{date | date:'DD MMMM YYYY':'de'}", { date: '2024-03-05' }, '05 März 2024'],
    ["{date | date:'dddd D MMM YY, HH:mm [h]':'fr'}", { date: '2024-03-05T09:07:00+02:00' }, 'mardi 5 mars 24, 09:07 h'],
    ["{date | formatDate:'h:mm A'}", { date: '2024-03-05T21:07:00' }, '9:07 PM'],
    ['{date | date}', { date: '2024-12-25' }, 'December 25, 2024'],
    ["{ms | date:'YYYY-MM-DD HH:mm'}", { ms: 0 }, '1970-01-01 00:00'],
    ['{amount | number:2}', { amount: 1234.5 }, '1,234.50'],
    ["{amount | number:2:'de-DE'}", { amount: '1234.5' }, '1.234,50'],
    ["{amount | currency:'EUR':'fr-FR'}", { amount: 1234.5 }, '1 234,50 €'],
    ['{name | trim | upper}', { name: ' ada ' }, 'ADA'],
    ['{(price * qty) | number:1}', { price: 2.5, qty: 3 }, '7.5'],
  ] as const)('%s', (tag, data, expected) => {
    const { docx, warnings } = fill(tag, data);
    expect(bodyText(docx).replace(/[\u202f\u00a0]/g, ' ').trim()).toBe(expected);
    expect(warnings).toEqual([]);
  });

  it('an unknown filter is a 422 naming the filter and the tag', () => {
    const error = rejection(() => fill('{name | shout}', { name: 'x' }));
    expect(error).toMatchObject(answering(422, 'TEMPLATE_INVALID'));
    const body = JSON.stringify(error.extensions);
    expect(body).toContain('shout');
    expect(body).toContain('name | shout');
  });

  it('a malformed expression with a filter pipe or quotes is a 422, not a silently empty name', () => {
    expect(rejection(() => fill("{date | format:'YYYY}", { date: '2024-01-01' }))).toMatchObject({ code: 'TEMPLATE_INVALID' });
    expect(rejection(() => fill('{name | }', { name: 'x' }))).toMatchObject({ code: 'TEMPLATE_INVALID' });
  });

  it('a value a filter cannot read is kept as given, with a warning naming the tag', () => {
    const { docx, warnings } = fill('{due | date:"YYYY"} {amount | number:2}', { due: 'soon', amount: 'lots' });
    expect(bodyText(docx)).toContain('soon lots');
    expect(warnings).toEqual([
      { code: 'VALUE_FORMAT', field: 'due | date:"YYYY"', message: 'Tag {due | date:"YYYY"}: "soon" is not a date (YYYY-MM-DD, an ISO 8601 date-time or epoch milliseconds); it was left as given.' },
      { code: 'VALUE_FORMAT', field: 'amount | number:2', message: 'Tag {amount | number:2}: "lots" is not a number; it was left as given.' },
    ]);
  });

  it('a missing value stays missing through a filter (strict sees it)', () => {
    expect(rejection(() => annotateDocx({ template: buildDocx({ body: para('{name | upper}') }), fields: [], data: {}, options: { strict: true } }))).toMatchObject({ code: 'MISSING_VALUES' });
  });

  it('an impossible calendar date is not formatted', () => {
    const { warnings } = fill("{d | date:'YYYY'}", { d: '2023-02-29' });
    expect(warnings).toHaveLength(1);
  });
});

describe('foreign template languages', () => {
  it.each([
    ['Jinja variable', para('Dear {{ customer.name }},'), 'jinja'],
    ['Jinja block split over runs', splitRuns('{% for item in items %}'), 'jinja'],
    ['Mustache-style', para('Hello {{name}}'), 'jinja'],
    ['docx-templates', para('+++INS name+++'), 'docx-templates'],
    ['docx-templates split', splitRuns('+++FOR row IN rows+++'), 'docx-templates'],
  ])('%s is named in a 422', (_label, body, language) => {
    const error = rejection(() => annotateDocx({ template: buildDocx({ body }), fields: [], data: { name: 'x' } }));
    expect(error).toMatchObject(answering(422, 'TEMPLATE_INVALID'));
    expect(error.extensions).toMatchObject({ templateLanguages: [language] });
    expect(error.message).toMatch(language === 'jinja' ? /Jinja/ : /docx-templates/);
  });

  it('a {{placeholder}} inside a named content control is SuperDoc text, not Jinja', () => {
    const { docx } = annotateDocx({ template: buildDocx({ body: `<w:p>${superdocControl({ fieldId: 'a', displayLabel: 'A' })}</w:p>` }), fields: [{ id: 'a', type: 'text', value: 'filled' }] });
    expect(bodyText(docx)).toContain('filled');
  });

  it('a part that is not XML is a 422, not a crash (found by the fuzzer)', () => {
    const zip = new PizZip(buildDocx({ body: para('x') }));
    zip.file('word/document.xml', '{{ broken');
    const error = rejection(() => annotateDocx({ template: zip.generate({ type: 'nodebuffer' }) as Buffer, fields: [] }));
    expect(httpStatusOf(error)).toBe(422);
  });

  it('a template without any tag or control is a warning, and a 422 with strict', () => {
    const template = buildDocx({ body: para('Just text.') });
    expect(annotateDocx({ template, fields: [] }).warnings).toEqual([expect.objectContaining({ code: 'TEMPLATE_HAS_NO_TAGS', message: expect.stringMatching(/no tags .* nothing to fill/) })]);
    expect(rejection(() => annotateDocx({ template, fields: [], options: { strict: true } }))).toMatchObject(answering(422, 'TEMPLATE_INVALID'));
  });
});

describe('{@raw} XML', () => {
  const template = buildDocx({ body: para('before') + para('{@block}') + para('after') + table([row([cell('{@inCell}'), cell('x')])]) });
  const fillRaw = (block: unknown, inCell: unknown = '<w:p><w:r><w:t>cell</w:t></w:r></w:p>') => annotateDocx({ template, fields: [], data: { block, inCell } });

  it('inserts paragraphs, tables and runs (wrapped in a paragraph) with formatting', () => {
    const paragraphs = fillRaw('<w:p><w:pPr><w:jc w:val="center"/></w:pPr><w:r><w:rPr><w:b/><w:color w:val="FF0000"/></w:rPr><w:t xml:space="preserve">Bold &amp; red</w:t></w:r></w:p>');
    expect(bodyText(paragraphs.docx)).toContain('Bold &amp; red');
    expect(readPart(paragraphs.docx, 'word/document.xml')).toContain('<w:jc w:val="center"/>');
    const runs = fillRaw('<w:r><w:t>one</w:t></w:r><w:r><w:tab/><w:t>two</w:t></w:r>');
    expect(readPart(runs.docx, 'word/document.xml')).toMatch(/<w:p><w:r><w:t>one<\/w:t><\/w:r><w:r><w:tab\/><w:t>two<\/w:t><\/w:r><\/w:p>/);
    const tbl = fillRaw(table([row([cell('r1c1'), cell('r1c2')])]));
    expect(bodyText(tbl.docx)).toContain('r1c1');
    expect(bodyText(fillRaw('').docx)).not.toContain('{@block}');
  });

  it.each([
    ['unclosed elements', '<w:p><w:r><w:t>unclosed', /not well-formed/],
    ['a simple field', '<w:p><w:fldSimple w:instr="INCLUDETEXT &quot;c:/secret.txt&quot;"><w:r><w:t>x</w:t></w:r></w:fldSimple></w:p>', /fldSimple/],
    ['a complex field', '<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText>INCLUDETEXT "x"</w:instrText></w:r></w:p>', /fldChar/],
    ['a relationship id', '<w:p><w:hyperlink r:id="rId9" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><w:r><w:t>x</w:t></w:r></w:hyperlink></w:p>', /r:id|namespace declaration/],
    ['section properties', '<w:p><w:pPr><w:sectPr/></w:pPr></w:p>', /sectPr/],
    ['a drawing', '<w:p><w:r><w:drawing/></w:r></w:p>', /drawing/],
    ['another namespace', '<w:p xmlns:v="urn:schemas-microsoft-com:vml"><w:r><v:shape/></w:r></w:p>', /namespace declaration|v:shape/],
    ['text outside runs', 'plain text', /inside <w:r>/],
    ['text directly in a paragraph', '<w:p>loose</w:p>', /inside <w:t>/],
    ['a document type', '<!DOCTYPE x [<!ENTITY e "x">]><w:p/>', /document type/],
    ['an unknown entity', '<w:p><w:r><w:t>&nbsp;</w:t></w:r></w:p>', /not well-formed/],
    ['a body', '<w:body><w:p/></w:body>', /w:body/],
    ['a paragraph in a run', '<w:r><w:p/></w:r>', /w:p/],
    ['runs mixed with paragraphs', '<w:r><w:t>a</w:t></w:r><w:p/>', /mixed/],
    ['a cell without a paragraph', '<w:tbl><w:tr><w:tc></w:tc></w:tr></w:tbl>', /needs at least one <w:p>/],
    ['a number', 42, /expected a string/],
    ['a processing instruction', '<?mso-application progid="Word.Document"?><w:p/>', /processing instructions/],
  ] as const)('refuses %s with 422 RAW_XML_INVALID', (_label, value, issue) => {
    const error = rejection(() => fillRaw(value));
    expect(error).toMatchObject(answering(422, 'RAW_XML_INVALID'));
    expect(error.message).toMatch(issue);
    expect(error.message).toContain('{@block}');
  });

  it('checks values inserted in table cells too', () => {
    expect(rejection(() => fillRaw('', '<w:p><w:r><w:instrText>x</w:instrText></w:r></w:p>'))).toMatchObject({ code: 'RAW_XML_INVALID' });
  });

  it('re-serializes what it accepts (no declarations or comments pass through)', () => {
    expect(checkRawXml('<w:p xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><!-- c --><w:r><w:t>a</w:t></w:r></w:p>', 'x')).toBe('<w:p><w:r><w:t>a</w:t></w:r></w:p>');
  });
});
