import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import PizZip from 'pizzip';
import { describe, expect, it } from 'vitest';
import { prepareForPdf } from '../../../src/documents/docx-pdf/prepare.js';
import {
  assertCsvStructure,
  assertOdfStructure,
  assertOoxmlStructure,
  countOdfTables,
  countSpreadsheetMl,
  STRUCTURE_BUDGET,
  StructureCounter,
  type StructureBudget,
} from '../../../src/documents/docx-pdf/structure-budget.js';
import { OpcPackage } from '../../../src/documents/ooxml/package.js';
import { readZip } from '../../../src/documents/ooxml/zip/read.js';
import { DomainError } from '../../../src/errors/domain-error.js';
import { buildOds, buildXlsx, odsNumber } from '../../support/office/sheet-builder.js';
import { rejection } from '../../support/domain-error.js';

const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/formats');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name));

const limitOf = (err: DomainError) => (err.extensions as { limit?: { name: string; max: number } }).limit;
const table = (rows: string) => `<table:table table:name="S">${rows}</table:table>`;
const row = (cells: string, repeated = 1) => `<table:table-row${repeated > 1 ? ` table:number-rows-repeated="${repeated}"` : ''}>${cells}</table:table-row>`;
/** What LibreOffice writes after the last row of every sheet: 10⁹+ empty cells, not work. */
const LIBREOFFICE_TAIL = row('<table:table-cell table:number-columns-repeated="16384"/>', 1_048_000);

describe('spreadsheets are counted before LibreOffice', () => {
  it('a 1 KB ODS declaring 10⁹ repeated number cells is refused naming the cell limit', () => {
    const ods = buildOds(table(row(odsNumber(7, 1000), 1_000_000)));
    expect(ods.length).toBeLessThan(2048);
    const started = performance.now();
    const err = rejection(() => prepareForPdf(ods, 'ods', 'markup'));
    console.log(`structure-budget: ${ods.length}-byte ODS with 10^9 cells refused in ${(performance.now() - started).toFixed(1)} ms`);
    expect(err).toMatchObject({ code: 'DOCUMENT_TOO_COMPLEX', extensions: { limit: { name: 'convert.maxSheetCells', max: STRUCTURE_BUDGET.maxSheetCells } } });
    expect(err.message).toContain(STRUCTURE_BUDGET.maxSheetCells.toLocaleString('en'));
  });

  it('empty and styled cells repeated over the whole sheet (as LibreOffice writes them) are not work', () => {
    const styledTail = row('<table:table-cell table:style-name="ce1" table:number-columns-repeated="1000"/>', 1_000_000);
    const counted = assertOdfStructure(readZip(buildOds(table(row(odsNumber(1, 3), 2) + LIBREOFFICE_TAIL + styledTail))), 'sheets');
    expect(counted).toMatchObject({ cells: 6, rows: 2, area: 6 });
  });

  it('a number far from A1 makes a printed area past the limit: refused; the same cell near A1 passes', () => {
    const far = buildOds(table(row(odsNumber(1)) + row('', 1_048_574) + row(`<table:table-cell table:number-columns-repeated="16383"/>${odsNumber(2)}`)));
    expect(limitOf(rejection(() => prepareForPdf(far, 'ods', 'markup')))).toEqual({ name: 'convert.maxSheetArea', max: STRUCTURE_BUDGET.maxSheetArea });
    const near = buildOds(table(row(odsNumber(1)) + row('', 9) + row(`<table:table-cell table:number-columns-repeated="9"/>${odsNumber(2)}`)));
    expect(assertOdfStructure(readZip(near), 'sheets')).toMatchObject({ cells: 2, rows: 2, area: 110 });
  });

  it('ODS merged spans, drawings anchored to cells and print ranges widen the printed area', () => {
    const spanned = `<table:table-cell office:value-type="float" office:value="1" table:number-columns-spanned="16384" table:number-rows-spanned="1048576"><text:p>1</text:p></table:table-cell>`;
    expect(limitOf(rejection(() => prepareForPdf(buildOds(table(row(spanned))), 'ods', 'markup')))?.name).toBe('convert.maxSheetArea');
    const anchored = `<table:table-cell><draw:frame table:end-cell-address="S.XFD1048576" svg:width="1cm"/></table:table-cell>`;
    expect(limitOf(rejection(() => prepareForPdf(buildOds(table(row(anchored))), 'ods', 'markup')))?.name).toBe('convert.maxSheetArea');
    const printed = `<table:table table:name="S" table:print-ranges="S.A1:S.XFD1048576">${row(odsNumber(1))}</table:table>`;
    expect(limitOf(rejection(() => prepareForPdf(buildOds(printed), 'ods', 'markup')))?.name).toBe('convert.maxSheetArea');
  });

  it('XLSX: a far cell, a merged range, a print area or an array formula over a huge range is refused; the dimension and row spans are hints', () => {
    const data = '<c r="A1"><v>1</v></c>';
    const cases: [string, Buffer, string][] = [
      ['far cell', buildXlsx(`<sheetData><row r="1">${data}</row><row r="1048576"><c r="XFD1048576"><v>2</v></c></row></sheetData>`), 'convert.maxSheetArea'],
      ['styled far cell', buildXlsx(`<sheetData><row r="1">${data}</row><row r="1048576"><c r="XFD1048576" s="1"/></row></sheetData>`), 'convert.maxSheetArea'],
      ['merged', buildXlsx(`<sheetData><row r="1">${data}</row></sheetData><mergeCells count="1"><mergeCell ref="A1:XFD1048576"/></mergeCells>`), 'convert.maxSheetArea'],
      ['print area', buildXlsx(`<sheetData><row r="1">${data}</row></sheetData>`, { definedNames: '<definedName name="_xlnm.Print_Area" localSheetId="0">S!$A:$XFD</definedName>' }), 'convert.maxSheetArea'],
      ['array formula', buildXlsx('<sheetData><row r="1"><c r="A1"><f t="array" ref="A1:CV100000">1+1</f><v>2</v></c></row></sheetData>'), 'convert.maxSheetCells'],
    ];
    for (const [what, xlsx, limit] of cases) expect(limitOf(rejection(() => prepareForPdf(xlsx, 'xlsx', 'markup')))?.name, what).toBe(limit);
    // Measured: a dimension of A1:XFD1048576 around one cell converts in 1.7 s (nothing is laid out for it).
    const hinted = buildXlsx(`<dimension ref="A1:XFD1048576"/><sheetData><row r="1" spans="1:16384">${data}</row></sheetData>`);
    expect(assertOoxmlStructure(OpcPackage.open(hinted, { mainPart: null }), 'sheets')).toMatchObject({ cells: 1, rows: 1, area: 1 });
  });

  it('attributes are read one after another: a name inside another value or under another prefix does not hide the real one', () => {
    const hidden = new StructureCounter(STRUCTURE_BUDGET);
    countSpreadsheetMl(`<sheetData><row r="1"><c t="n" xr:note="r='A1'" r="CV100"><v>1</v></c></row></sheetData>`, hidden);
    expect(hidden.counted).toMatchObject({ cells: 1, area: 100 * 100 });
    const prefixed = new StructureCounter(STRUCTURE_BUDGET);
    countOdfTables(table(row(`<table:table-cell x:number-columns-repeated="1" table:number-columns-repeated="50" office:value-type="float"/>`)), prefixed);
    expect(prefixed.counted).toMatchObject({ cells: 50, area: 50 });
  });

  it('XLSX drawings anchored far from the data widen the printed area', () => {
    const counter = new StructureCounter(STRUCTURE_BUDGET);
    countSpreadsheetMl('<xdr:wsDr xmlns:xdr="x"><xdr:twoCellAnchor><xdr:from><xdr:col>2</xdr:col><xdr:row>9</xdr:row></xdr:from><xdr:to><xdr:col>4</xdr:col><xdr:row>19</xdr:row></xdr:to></xdr:twoCellAnchor></xdr:wsDr>', counter);
    expect(counter.counted).toMatchObject({ cells: 0, rows: 0, area: 20 * 5 });
  });

  it('shared strings, rows, slides and shapes have limits of their own', () => {
    const small: StructureBudget = { ...STRUCTURE_BUDGET, maxSharedStrings: 3, maxSheetRows: 2, maxSlides: 2, maxShapes: 5 };
    const counter = new StructureCounter(small);
    expect(limitOf(rejection(() => countSpreadsheetMl(`<sst>${'<si><t>a</t></si>'.repeat(4)}</sst>`, counter)))?.name).toBe('convert.maxSharedStrings');
    expect(limitOf(rejection(() => countOdfTables(table(row(odsNumber(1), 3)), new StructureCounter(small))))?.name).toBe('convert.maxSheetRows');
    const pptx = fixture('pandoc-writer.pptx');
    const slides = Object.keys(new PizZip(pptx).files).filter((n) => /^ppt\/slides\/slide\d+\.xml$/.test(n)).length;
    expect(assertOoxmlStructure(OpcPackage.open(pptx, { mainPart: null }), 'slides').slides).toBe(slides);
    expect(limitOf(rejection(() => assertOoxmlStructure(OpcPackage.open(pptx, { mainPart: null }), 'slides', small)))?.name).toBe('convert.maxSlides');
    const odp = readZip(fixture('pandoc-writer.odp'));
    expect(assertOdfStructure(odp, 'slides').slides).toBe(slides);
    expect(limitOf(rejection(() => assertOdfStructure(odp, 'slides', { ...STRUCTURE_BUDGET, maxShapes: 5 })))?.name).toBe('convert.maxShapes');
  });

  it('a part declaring XML entities is refused (an entity could hide cells)', () => {
    const ods = buildOds('<!ENTITY cells "<table:table-cell/>">');
    expect(rejection(() => prepareForPdf(ods, 'ods', 'markup'))).toMatchObject({ code: 'INVALID_FILE_FORMAT', message: expect.stringContaining('content.xml declares XML entities') });
    const xlsx = buildXlsx('<sheetData><row r="1"><c r="A1"><v>1</v></c></row></sheetData><!ENTITY x "y">');
    expect(rejection(() => prepareForPdf(xlsx, 'xlsx', 'markup'))).toMatchObject({ code: 'INVALID_FILE_FORMAT' });
  });

  it('the corpus spreadsheets, presentations and CSV are far below every limit', () => {
    const counts = {
      'datasets.xlsx': assertOoxmlStructure(OpcPackage.open(fixture('datasets.xlsx'), { mainPart: null }), 'sheets'),
      'datasets.xlsm': assertOoxmlStructure(OpcPackage.open(fixture('datasets.xlsm'), { mainPart: null }), 'sheets'),
      'datasets.ods': assertOdfStructure(readZip(fixture('datasets.ods')), 'sheets'),
      'distro-info-debian.csv': assertCsvStructure(fixture('distro-info-debian.csv').toString('utf8'), 44),
      'pandoc-writer.pptx': assertOoxmlStructure(OpcPackage.open(fixture('pandoc-writer.pptx'), { mainPart: null }), 'slides'),
      'pandoc-writer.odp': assertOdfStructure(readZip(fixture('pandoc-writer.odp')), 'slides'),
    };
    console.log('structure-budget corpus counts:', JSON.stringify(counts));
    // The three spreadsheets hold the same data (readxl's datasets; the ODS and XLSM are LibreOffice's saves of the XLSX).
    expect(counts['datasets.ods']).toMatchObject({ cells: counts['datasets.xlsx'].cells, rows: counts['datasets.xlsx'].rows, area: counts['datasets.xlsx'].area });
    // distro-info-debian.csv: a header and 22 releases of 8 columns (some left empty).
    expect(counts['distro-info-debian.csv'].rows).toBe(fixture('distro-info-debian.csv').toString('utf8').trim().split('\n').length);
  });
});

/** A sheet as runs: rows of cell runs, each [kind, columns repeated], the row repeated. */
type Kind = 'empty' | 'number' | 'styled';
interface SheetRow {
  cells: [Kind, number][];
  repeated: number;
}

const sheetArb = fc.array(
  fc.record({ cells: fc.array(fc.tuple(fc.constantFrom<Kind>('empty', 'number', 'styled'), fc.integer({ min: 1, max: 4 })), { maxLength: 6 }), repeated: fc.integer({ min: 1, max: 4 }) }),
  { maxLength: 8 },
);

/** The real structure of the sheet, from its cells laid out one by one (no counting code shared). */
function realStructure(sheet: SheetRow[]): { cells: number; rows: number; area: number } {
  const grid: Kind[][] = [];
  for (const { cells, repeated } of sheet) {
    const line = cells.flatMap(([kind, n]) => Array<Kind>(n).fill(kind));
    for (let i = 0; i < repeated; i++) grid.push(line);
  }
  let cells = 0;
  let rows = 0;
  let lastRow = 0;
  let lastColumn = 0;
  grid.forEach((line, r) => {
    const numbers = line.filter((k) => k === 'number').length;
    cells += numbers;
    if (numbers) rows++;
    line.forEach((kind, c) => {
      if (kind === 'empty') return;
      lastRow = Math.max(lastRow, r + 1);
      lastColumn = Math.max(lastColumn, c + 1);
    });
  });
  return { cells, rows, area: lastRow * lastColumn };
}

function odsXml(sheet: SheetRow[], tail: boolean): string {
  const cell = ([kind, n]: [Kind, number]) => {
    const repeat = n > 1 ? ` table:number-columns-repeated="${n}"` : '';
    return kind === 'number' ? odsNumber(3, n) : kind === 'styled' ? `<table:table-cell table:style-name="ce1"${repeat}/>` : `<table:table-cell${repeat}/>`;
  };
  return table(sheet.map((r) => row(r.cells.map(cell).join(''), r.repeated)).join('') + (tail ? LIBREOFFICE_TAIL : ''));
}

const column = (n: number): string => (n <= 26 ? String.fromCharCode(64 + n) : column(Math.floor((n - 1) / 26)) + String.fromCharCode(65 + ((n - 1) % 26)));

function sheetMl(sheet: SheetRow[], references: boolean, prefix: string): string {
  const p = prefix ? `${prefix}:` : '';
  let r = 0;
  const rows: string[] = [];
  for (const { cells, repeated } of sheet) {
    for (let i = 0; i < repeated; i++) {
      r++;
      let c = 0;
      let skipped = false;
      const xml: string[] = [];
      for (const [kind, n] of cells) {
        for (let j = 0; j < n; j++) {
          c++;
          if (kind === 'empty') {
            skipped = true;
            continue;
          }
          // Without references cells follow one another: only a row with no gap can leave them out.
          const ref = references || skipped ? ` r="${column(c)}${r}"` : '';
          xml.push(kind === 'number' ? `<${p}c${ref}><${p}v>${c}</${p}v></${p}c>` : `<${p}c${ref} s="2"/>`);
        }
      }
      rows.push(`<${p}row${references ? ` r="${r}"` : ''}>${xml.join('')}</${p}row>`);
    }
  }
  return `<${p}worksheet${prefix ? ` xmlns:${prefix}` : ' xmlns'}="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><${p}dimension ref="A1:XFD1048576"/><${p}sheetData>${rows.join('')}</${p}sheetData></${p}worksheet>`;
}

describe('property: the counts are the real structure of generated sheets', () => {
  it('ODS runs (repeats multiplied out, LibreOffice tail or not) and SpreadsheetML (with or without references, any prefix)', () => {
    fc.assert(
      fc.property(sheetArb, fc.boolean(), fc.boolean(), fc.constantFrom('', 'x', 'sml'), (sheet, tail, references, prefix) => {
        const real = realStructure(sheet);
        const ods = new StructureCounter(STRUCTURE_BUDGET);
        countOdfTables(odsXml(sheet, tail), ods);
        const sml = new StructureCounter(STRUCTURE_BUDGET);
        countSpreadsheetMl(sheetMl(sheet, references, prefix), sml);
        for (const counted of [ods.counted, sml.counted]) {
          expect(counted.cells).toBe(real.cells);
          expect(counted.rows).toBe(real.rows);
          expect(counted.area).toBe(real.area);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('CSV with quoted separators, quotes and line ends: cells and rows as written, the area bounds the real one', () => {
    const field = fc.oneof(fc.constant(''), fc.stringMatching(/^[a-z ,"\n]{1,6}$/));
    fc.assert(
      fc.property(fc.array(fc.array(field, { minLength: 1, maxLength: 5 }), { maxLength: 8 }), fc.constantFrom('\n', '\r\n'), (records, eol) => {
        const quote = (f: string) => (/[,"\n]/.test(f) || f.startsWith(' ') ? `"${f.replaceAll('"', '""')}"` : f);
        const text = records.map((r) => r.map(quote).join(',')).join(eol) + eol;
        const cells = records.flat().filter((f) => f !== '').length;
        const held = records.map((r) => r.some((f) => f !== ''));
        const lastLine = held.lastIndexOf(true) + 1;
        const lastColumn = Math.max(0, ...records.map((r) => r.findLastIndex((f) => f !== '') + 1));
        const counted = assertCsvStructure(text, 44);
        expect(counted.cells).toBe(cells);
        expect(counted.rows).toBe(held.filter(Boolean).length);
        expect(counted.area).toBeGreaterThanOrEqual(lastLine * lastColumn);
      }),
      { numRuns: 300 },
    );
  });
});
