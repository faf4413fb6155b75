import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { annotateDocx } from '../../../src/documents/annotate/index.js';
import type { AnnotateInput } from '../../../src/documents/annotate/types.js';
import { DomainError } from '../../../src/errors/domain-error.js';
import { buildDocx, cell, para, row, table } from '../../support/annotate/docx-builder.js';
import { superdocBlockControl, superdocControl } from '../../support/annotate/superdoc.js';

/**
 * Every template syntax docproc fills, rendered by LibreOffice (an independent reader): each
 * output must open and show the filled text. Raw XML values generated at random from the allowed
 * elements either are refused (422) or produce a DOCX that opens.
 */
const run = promisify(execFile);
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'docproc-syntaxes-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Converts every DOCX in one LibreOffice run; returns each file's text (null when it did not open). */
async function renderAll(docs: Map<string, Buffer>): Promise<Map<string, string | null>> {
  const inputs: string[] = [];
  for (const [name, docx] of docs) {
    const file = join(dir, `${name}.docx`);
    await writeFile(file, docx);
    inputs.push(file);
  }
  await run('soffice', ['--headless', `-env:UserInstallation=file://${join(dir, 'profile')}`, '--convert-to', 'pdf', '--outdir', dir, ...inputs], { timeout: 300_000 });
  const texts = new Map<string, string | null>();
  for (const name of docs.keys()) {
    const pdf = join(dir, `${name}.pdf`);
    texts.set(name, existsSync(pdf) ? (await run('pdftotext', ['-layout', pdf, '-'])).stdout : null);
  }
  return texts;
}

const SUPERDOC_TEMPLATE = buildDocx({
  body:
    `<w:p><w:r><w:t xml:space="preserve">Dear </w:t></w:r>${superdocControl({ fieldId: 'customer_name', fieldTypeShort: 'text', displayLabel: 'Customer Name' })}</w:p>` +
    superdocBlockControl({ fieldId: 'terms', fieldTypeShort: 'text', displayLabel: 'Terms' }) +
    table([row([cell('Company'), cell(`<w:p>${superdocControl({ group: 'company_name' }, 'Company')}</w:p>`)])]) +
    `<w:p>${superdocControl({ fieldId: 'left_empty', displayLabel: 'Left Empty' })}</w:p>`,
  header: `<w:p><w:r><w:t xml:space="preserve">Header: </w:t></w:r>${superdocControl({ group: 'company_name' }, 'Company')}</w:p>`,
  footer: `<w:p><w:r><w:t xml:space="preserve">Footer: </w:t></w:r>${superdocControl({ fieldId: 'ref', displayLabel: 'Reference' })}</w:p>`,
});

const CASES: Array<{ name: string; input: AnnotateInput; expected: string[] }> = [
  {
    name: 'superdoc',
    input: {
      template: SUPERDOC_TEMPLATE,
      fields: [
        { id: 'customer_name', type: 'text', value: 'Ada Lovelace' },
        { id: 'Terms', type: 'text', value: 'Net 30 days' },
        { group: 'company_name', type: 'text', value: 'Engines Ltd' },
        { id: 'ref', type: 'text', value: 'R-42' },
      ],
    },
    expected: ['Dear Ada Lovelace', 'Net 30 days', 'Engines Ltd', 'Header: Engines Ltd', 'Footer: R-42', '{{Left Empty}}'],
  },
  {
    name: 'odd-names-filters-loops',
    input: {
      template: buildDocx({
        body:
          para('{first-name | upper} {Customer Name} {附件列表：附件的字段名}') +
          para("{due | date:'DD MMMM YYYY':'de'} / {amount | currency:'EUR':'de-DE'}") +
          para('{#line-items}') + para('{item-name}: {qty}') + para('{/line-items}') +
          para('{#total > 100}LARGE{/}{^total > 100}SMALL{/}'),
      }),
      fields: [{ id: 'Customer Name', type: 'text', value: 'Grace Hopper' }],
      data: { 'first-name': 'ada', '附件列表：附件的字段名': '附件', due: '2024-03-05', amount: 1234.5, total: 150, 'line-items': [{ 'item-name': 'Pen', qty: 2 }, { 'item-name': 'Ink', qty: 1 }] },
    },
    expected: ['ADA Grace Hopper', '05 März 2024', 'Pen: 2', 'Ink: 1', 'LARGE'],
  },
  ...[
    ['raw-paragraphs', '<w:p><w:pPr><w:jc w:val="center"/></w:pPr><w:r><w:rPr><w:b/><w:color w:val="FF0000"/></w:rPr><w:t>RAW CENTRED</w:t></w:r></w:p><w:p><w:r><w:t>SECOND RAW</w:t></w:r></w:p>', ['RAW CENTRED', 'SECOND RAW']],
    ['raw-runs', '<w:r><w:t xml:space="preserve">RUN ONE </w:t></w:r><w:r><w:tab/><w:t>RUN TWO</w:t></w:r><w:r><w:br/><w:t>RUN THREE</w:t></w:r>', ['RUN ONE', 'RUN TWO', 'RUN THREE']],
    ['raw-table', table([row([cell('RAW CELL A'), cell('RAW CELL B')]), row([cell('RAW CELL C'), cell('RAW CELL D')])]), ['RAW CELL A', 'RAW CELL D']],
    ['raw-empty', '', ['after the raw tag']],
    ['raw-hyperlink-anchor', '<w:p><w:hyperlink w:anchor="top"><w:r><w:t>ANCHOR LINK</w:t></w:r></w:hyperlink></w:p>', ['ANCHOR LINK']],
  ].map(([name, value, expected]) => ({
    name: name as string,
    input: {
      template: buildDocx({ body: para('before the raw tag') + para('{@raw}') + para('after the raw tag') + table([row([cell('{@cellRaw}'), cell('x')])]) }),
      fields: [],
      data: { raw: value, cellRaw: value },
    },
    expected: expected as string[],
  })),
];

/** Raw XML built from allowed elements, sometimes broken by a mutation (the checker decides). */
const text = fc.stringMatching(/^[A-Za-z0-9 &<>"'é中]{0,12}$/).map((s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;'));
const runProps = fc.subarray(['<w:b/>', '<w:i/>', '<w:u w:val="single"/>', '<w:color w:val="0000FF"/>', '<w:sz w:val="28"/>', '<w:highlight w:val="yellow"/>']).map((p) => (p.length ? `<w:rPr>${p.join('')}</w:rPr>` : ''));
const runXml = fc.tuple(runProps, text, fc.constantFrom('', '<w:tab/>', '<w:br/>')).map(([props, t, extra]) => `<w:r>${props}${extra}<w:t xml:space="preserve">${t}</w:t></w:r>`);
const paragraphXml = fc.tuple(fc.constantFrom('', '<w:pPr><w:jc w:val="right"/></w:pPr>', '<w:pPr><w:spacing w:after="240"/><w:ind w:left="720"/></w:pPr>'), fc.array(runXml, { maxLength: 4 }))
  .map(([props, runs]) => `<w:p>${props}${runs.join('')}</w:p>`);
const cellXml = fc.array(paragraphXml, { minLength: 1, maxLength: 2 }).map((ps) => `<w:tc><w:tcPr><w:tcW w:w="2000" w:type="dxa"/></w:tcPr>${ps.join('')}</w:tc>`);
const tableXml = fc.array(fc.array(cellXml, { minLength: 2, maxLength: 2 }), { minLength: 1, maxLength: 3 })
  .map((rows) => `<w:tbl><w:tblPr><w:tblW w:w="0" w:type="auto"/></w:tblPr><w:tblGrid><w:gridCol w:w="2000"/><w:gridCol w:w="2000"/></w:tblGrid>${rows.map((cells) => `<w:tr>${cells.join('')}</w:tr>`).join('')}</w:tbl>`);
const validRaw = fc.oneof(fc.array(fc.oneof(paragraphXml, tableXml), { minLength: 1, maxLength: 3 }).map((xs) => xs.join('')), fc.array(runXml, { minLength: 1, maxLength: 3 }).map((xs) => xs.join('')));
const mutation = fc.constantFrom<((xml: string) => string)>(
  (xml) => xml,
  (xml) => xml.slice(0, Math.floor(xml.length / 2)),
  (xml) => xml.replace('<w:r>', '<w:r><w:fldChar w:fldCharType="begin"/>'),
  (xml) => xml.replace('<w:p>', '<w:p><w:pPr><w:sectPr/></w:pPr>'),
  (xml) => xml.replace('<w:t', '<w:t r:id="rId1" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"'),
  (xml) => `${xml}</w:p>`,
  (xml) => xml.replace('</w:t>', '<w:r/></w:t>'),
);

describe('filled templates open in LibreOffice', () => {
  it('every syntax docproc fills, and random raw XML that it accepts, opens and shows its text', async () => {
    const docs = new Map<string, Buffer>();
    for (const c of CASES) docs.set(c.name, annotateDocx(c.input).docx);

    const rawTemplate = buildDocx({ body: para('lead') + para('{@raw}') + table([row([cell('{@cellRaw}'), cell('x')])]) + para('tail') });
    const samples = fc.sample(fc.tuple(validRaw, mutation), { numRuns: 40, seed: Number(process.env.FUZZ_SEED ?? 1729) });
    let refused = 0;
    samples.forEach(([xml, mutate], i) => {
      const raw = mutate(xml);
      try {
        docs.set(`random-${i}`, annotateDocx({ template: rawTemplate, fields: [], data: { raw, cellRaw: raw } }).docx);
      } catch (error) {
        expect(error, raw).toBeInstanceOf(DomainError);
        expect((error as DomainError).code, raw).toBe('RAW_XML_INVALID');
        refused++;
      }
    });
    expect(refused).toBeGreaterThan(0);
    expect(refused).toBeLessThan(samples.length);

    const texts = await renderAll(docs);
    for (const c of CASES) {
      const shown = texts.get(c.name);
      expect(shown, `${c.name} did not open`).not.toBeNull();
      for (const expected of c.expected) expect(shown!.replace(/[\u202f\u00a0]/g, ' '), c.name).toContain(expected);
    }
    for (const [name, shown] of texts) {
      if (!name.startsWith('random-')) continue;
      expect(shown, `${name} did not open`).not.toBeNull();
      expect(shown).toContain('lead');
      expect(shown).toContain('tail');
    }
  }, 300_000);
});
