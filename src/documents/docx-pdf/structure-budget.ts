import { ErrorCode, DomainError, invalidFile } from '../../errors/domain-error.js';
import type { OpcPackage } from '../ooxml/package.js';
import { decodeXmlBytes } from '../ooxml/xml.js';
import type { ZipEntry } from '../ooxml/zip/read.js';
import { pictureSize } from './image-size.js';

/**
 * What a spreadsheet or a presentation asks of LibreOffice, counted on the document's own structure
 * in Node before it gets there, and refused past the limit with 422 DOCUMENT_TOO_COMPLEX naming it
 * (`convert.<limit>`), like the DOCX table and picture checks of layout-budget.ts.
 *
 * Measured with soffice 7.4 --convert-to pdf (a cold process) on the shared 2-core machine (load 2–10): 10⁵
 * number cells 7 s, 10⁶ 19 s (10⁴ rows × 100, 2 835 pages) to 54 s (5·10⁴ × 20), 3·10⁶ > 150 s;
 * one-column rows: 5·10⁴ 4 s, 10⁵ 17.5 s, 2·10⁵ > 120 s; a printed area of 10⁸ / 10⁹ cells (two
 * numbers at its corners) 5.8 / 18.5 s, A1 + XFD1048576 (1.7·10¹⁰) > 150 s, a merged range
 * A1:XFD1048576 > 60 s, an array formula over 10⁷ cells > 150 s; 500 simple slides 43 s (442 MB).
 * Empty cells, even styled and repeated over a whole sheet (10⁹ of them: 4.5 s; LibreOffice itself
 * writes 1.7·10¹⁰ after the last row), cost nothing and are not counted, nor is a `<dimension>` of
 * A1:XFD1048576 around one cell (1.7 s). The corpus's largest spreadsheet (readxl's datasets) has
 * 6 267 cells, 1 257 rows, area 6 267; its presentations 42 slides and ≤ 198 shapes.
 *
 * Counted, in one linear scan of the XML text (tags by their local name, whatever the namespace
 * prefix, never a DOM):
 * - XLSX/XLSM (every XML part: a worksheet may be declared as anything): cells holding something
 *   (`<c>` with children), each array or data-table formula counted as its whole `ref` range; rows
 *   holding such cells; the printed area of each part (rows × columns from A1 to its farthest such
 *   cell, styled cell, merged range, formula range or drawing anchor, plus explicit print areas);
 *   shared strings (`<si>`).
 * - ODS (content.xml): the same, with `table:number-columns-repeated` and `table:number-rows-repeated`
 *   multiplied out (a 1 KB file can declare 10⁹ cells), merged spans and print ranges.
 * - CSV: fields (cells), records (rows) and records × widest record (the printed area), on the text
 *   with its quoting.
 * - PPTX (every XML part) and ODP (content.xml, styles.xml): slides (`<p:sld>`, `<draw:page>`) and
 *   shapes (PresentationML shape elements, or every drawing-namespace element of a page).
 * - XLS (BIFF8 `Workbook` / BIFF5 `Book` stream, read with inputs/compound-file.ts): the same
 *   counts on its records, in xls-structure.ts (each sheet as often as a BOUNDSHEET leads LibreOffice
 *   to it, ARRAY/TABLE formulas as their range, BLANK and MERGECELLS in the printed area, Print_Area
 *   names, the SST's count bounded by its bytes).
 * - PPT (`PowerPoint Document` stream, read with inputs/compound-file.ts): slides (the slides'
 *   SlideListWithText entries, what LibreOffice makes pages of) and shapes (every OfficeArtSpContainer
 *   of the listed slides, masters and notes), reached through the Current User stream, the edit chain
 *   and the persist directories as LibreOffice reaches them, in ppt-structure.ts (PowerPoint 95 files,
 *   another record format LibreOffice also reads, count 0); its pictures against
 *   layout-budget.ts's pixel limit. A 500-slide PPT (pandoc slides saved by LibreOffice) converted in
 *   7 s; the real PPTs counted agree with the pages of LibreOffice's PDF (tdf124708.ppt 4, 130
 *   shapes; pandoc-writer saved as PPT 42, 347 shapes).
 * - Not counted either (the memory watch and the deadline bound them): drawings placed by length
 *   (`<xdr:absoluteAnchor>`, ODS `<table:shapes>` with svg:x/y: rows have any height, so a length
 *   gives no row count), whole-row formats (`<row s customFormat>`), conditional formats, charts.
 *
 * An XML part that declares entities (`<!ENTITY`) is refused: an entity could hold cells the scan
 * does not see, and no office application writes one.
 */
export interface StructureBudget {
  /** Spreadsheet cells holding a value, formula, text or object, in all sheets, repeats multiplied out. */
  maxSheetCells: number;
  /** Spreadsheet rows holding such cells, in all sheets. */
  maxSheetRows: number;
  /** Printed area: for each sheet, its rows × columns from A1 to its last cell holding something, summed. */
  maxSheetArea: number;
  /** Strings of an XLSX's shared string table. */
  maxSharedStrings: number;
  /** Slides (pages) of a presentation. */
  maxSlides: number;
  /** Shapes on the slides, masters and layouts of a presentation. */
  maxShapes: number;
}

export const STRUCTURE_BUDGET: Readonly<StructureBudget> = {
  maxSheetCells: 1_000_000,
  maxSheetRows: 100_000,
  maxSheetArea: 500_000_000,
  maxSharedStrings: 1_000_000,
  maxSlides: 1_000,
  maxShapes: 200_000,
};

const DESCRIPTIONS: Record<keyof StructureBudget, string> = {
  maxSheetCells: 'cells holding something (repeated cells counted one by one)',
  maxSheetRows: 'rows holding cells',
  maxSheetArea: 'cells in its printed area (from A1 to the farthest cell, format, merged range, drawing or print range of each sheet, all sheets together)',
  maxSharedStrings: 'shared strings',
  maxSlides: 'slides',
  maxShapes: 'shapes',
};

export function structureTooComplex(limit: keyof StructureBudget, budget: StructureBudget = STRUCTURE_BUDGET) {
  const what = limit === 'maxSlides' || limit === 'maxShapes' ? 'presentation' : 'spreadsheet';
  const advice = what === 'presentation' ? 'split the presentation' : 'split the spreadsheet or remove cells far from the data';
  return new DomainError(
    ErrorCode.DOCUMENT_TOO_COMPLEX,
    `The ${what} has more than ${budget[limit].toLocaleString('en')} ${DESCRIPTIONS[limit]}, more than the converter renders within its time and memory; ${advice}.`,
    { extensions: { limit: { name: `convert.${limit}`, max: budget[limit] } } },
  );
}

/** What was counted (for tests and the corpus measurements). */
export interface StructureCount {
  cells: number;
  rows: number;
  area: number;
  sharedStrings: number;
  slides: number;
  shapes: number;
}

const emptyCount = (): StructureCount => ({ cells: 0, rows: 0, area: 0, sharedStrings: 0, slides: 0, shapes: 0 });

/** Largest sheet LibreOffice 7.4 (and Excel) makes: what it reads past this is dropped, never laid out. */
export const MAX_SHEET_ROWS = 1_048_576;
export const MAX_SHEET_COLUMNS = 16_384;

/** One start, end or empty tag: its local name (prefix dropped), attribute text, and where it ends. */
type Tag = [closing: boolean, name: string, attributes: string, empty: boolean, end: number];

const isNameChar = (ch: number) =>
  (ch >= 97 && ch <= 122) || (ch >= 65 && ch <= 90) || (ch >= 48 && ch <= 58) || ch === 95 || ch === 45 || ch === 46 || ch > 127;

/**
 * The tags of an XML text, in order, one character at a time (a regular expression over tags read
 * 7 MB/s; this reads 39 MB of worksheet XML, 900 000 cells, in ~2 s at a load of 9 on 2 cores). Attribute values may hold `>` but never `<` (XML), so a tag never
 * crosses a `<`; comments, CDATA and processing instructions are stepped over by their `<!`/`<?` (tags
 * written inside them are read as tags: counted too many, never too few). Each step starts after the
 * previous `<`: the scan is linear and always advances.
 */
function* tags(xml: string): Generator<Tag> {
  const n = xml.length;
  for (let i = xml.indexOf('<'); i !== -1; ) {
    let j = i + 1;
    const closing = xml.charCodeAt(j) === 47;
    if (closing) j++;
    const nameStart = j;
    let localStart = j;
    for (let ch = xml.charCodeAt(j); j < n && isNameChar(ch); ch = xml.charCodeAt(++j)) if (ch === 58) localStart = j + 1;
    let k = j;
    for (let quote = 0; k < n; k++) {
      const ch = xml.charCodeAt(k);
      if (ch === 60) break;
      if (quote) {
        if (ch === quote) quote = 0;
      } else if (ch === 34 || ch === 39) quote = ch;
      else if (ch === 62) break;
    }
    if (j > nameStart && k < n && xml.charCodeAt(k) === 62) {
      const empty = !closing && xml.charCodeAt(k - 1) === 47;
      yield [closing, xml.slice(localStart, j), xml.slice(j, empty ? k - 1 : k), empty, k + 1];
      i = xml.indexOf('<', k + 1);
    } else i = xml.indexOf('<', Math.max(k, i + 1));
  }
}

const ENTITY_DECLARATION = /<!ENTITY/i;

/** One attribute: name (any prefix) = quoted value, read from where the last one ended (sticky). */
const ATTRIBUTE = /\s*((?:[\w.-]+:)?)([\w.-]+)\s*=\s*(?:"([^"]*)"|'([^']*)')/y;

/**
 * The value of the attribute with this local name: the unprefixed one when there is one (SpreadsheetML
 * attributes have no prefix), else the first; `largest` takes the largest leading number of all of
 * them (for repeats and spans, whatever namespace a prefix stands for, the count is an upper bound).
 * Attributes are read one after another, so a name inside another attribute's value is never seen.
 */
function attribute(attributes: string, local: string, largest = false): string | undefined {
  if (!attributes.includes(local)) return undefined;
  ATTRIBUTE.lastIndex = 0;
  let found: string | undefined;
  let unprefixed = false;
  for (let m = ATTRIBUTE.exec(attributes); m; m = ATTRIBUTE.exec(attributes)) {
    if (m[2] !== local) continue;
    const value = m[3] ?? m[4]!;
    if (largest) found = found === undefined || repeat(value) > repeat(found) ? value : found;
    else if (m[1] === '' && !unprefixed) {
      found = value;
      unprefixed = true;
    } else found ??= value;
  }
  return found;
}

/** A repeat count as LibreOffice reads it (leading digits; absent, zero or unreadable: 1). */
function repeat(value: string | undefined): number {
  const digits = value === undefined ? undefined : /^\s*\+?(\d+)/.exec(value)?.[1];
  const n = digits === undefined ? 1 : Number(digits);
  return n >= 1 ? n : 1;
}

class Counter {
  readonly counted = emptyCount();
  constructor(private readonly budget: StructureBudget) {}

  add(kind: 'cells' | 'rows' | 'area' | 'sharedStrings' | 'slides' | 'shapes', n: number): void {
    this.counted[kind] += n;
    const limit: keyof StructureBudget =
      kind === 'cells' ? 'maxSheetCells'
      : kind === 'rows' ? 'maxSheetRows'
      : kind === 'area' ? 'maxSheetArea'
      : kind === 'sharedStrings' ? 'maxSharedStrings'
      : kind === 'slides' ? 'maxSlides'
      : 'maxShapes';
    if (this.counted[kind] > this.budget[limit]) throw structureTooComplex(limit, this.budget);
  }
}

function xmlText(bytes: Uint8Array, name: string): string {
  const text = decodeXmlBytes(bytes);
  if (ENTITY_DECLARATION.test(text)) {
    throw invalidFile(`The part ${name.replace(/^\//, '')} declares XML entities, which no office application writes; save the document again and resend it.`);
  }
  return text;
}

/** Column number (1-based) of a cell reference's letters, e.g. "AB12" → 28; undefined when it has none. */
function referenceColumn(ref: string): number | undefined {
  const letters = /^\$?([A-Za-z]{1,7})/.exec(ref)?.[1];
  if (!letters) return undefined;
  let n = 0;
  for (const ch of letters.toUpperCase()) n = n * 26 + (ch.charCodeAt(0) - 64);
  return n;
}

function referenceRow(ref: string): number | undefined {
  const digits = /^\$?[A-Za-z]{0,7}\$?(\d{1,9})/.exec(ref)?.[1];
  return digits === undefined ? undefined : Number(digits);
}

/** Cells of a range "A1:C3" (clamped to the sheet); a single reference is 1 cell. */
function rangeCells(ref: string | undefined): { cells: number; lastRow: number; lastColumn: number } | undefined {
  if (!ref) return undefined;
  const [from, to = from] = ref.trim().split(':');
  const rows = [referenceRow(from!), referenceRow(to!)];
  const columns = [referenceColumn(from!), referenceColumn(to!)];
  if (rows.some((r) => r === undefined) || columns.some((c) => c === undefined)) return undefined;
  const [r1, r2] = (rows as number[]).map((r) => Math.min(Math.max(r, 1), MAX_SHEET_ROWS)).sort((a, b) => a - b);
  const [c1, c2] = (columns as number[]).map((c) => Math.min(Math.max(c, 1), MAX_SHEET_COLUMNS)).sort((a, b) => a - b);
  return { cells: (r2! - r1! + 1) * (c2! - c1! + 1), lastRow: r2!, lastColumn: c2! };
}

/** Cells of a whole-column ("A:C") or whole-row ("1:3") range, clamped to the sheet. */
function lineRangeArea(text: string): number {
  let area = 0;
  for (const [, a, b] of text.matchAll(/(?<![\w$.])\$?([A-Za-z]{1,7})\s*:\s*\$?([A-Za-z]{1,7})(?![\w$(])/g)) {
    area += (Math.abs(Math.min(referenceColumn(a!)!, MAX_SHEET_COLUMNS) - Math.min(referenceColumn(b!)!, MAX_SHEET_COLUMNS)) + 1) * MAX_SHEET_ROWS;
  }
  for (const [, a, b] of text.matchAll(/(?<![\w$.])\$?(\d{1,9})\s*:\s*\$?(\d{1,9})(?![\w$])/g)) {
    area += (Math.abs(Math.min(Number(a), MAX_SHEET_ROWS) - Math.min(Number(b), MAX_SHEET_ROWS)) + 1) * MAX_SHEET_COLUMNS;
  }
  return area;
}

/** Cell ranges ("A1:C3", "$A$1:.$C$3", "Sheet1!$A$1:$C$3") in a print-range or defined-name text. */
const CELL_RANGE = /(\$?[A-Za-z]{1,7}\$?\d{1,9})\s*:\s*(?:[^\s:,;]*[.!])?(\$?[A-Za-z]{1,7}\$?\d{1,9})/g;

/** Printed area of explicit print ranges: each range from A1 to its far corner (where printing starts). */
function printRangesArea(text: string): number {
  let area = lineRangeArea(text);
  for (const [, from, to] of text.matchAll(CELL_RANGE)) {
    const range = rangeCells(`${from}:${to}`);
    if (range) area += range.lastRow * range.lastColumn;
  }
  return area;
}

/** The text after a tag, up to the next tag. */
const textAfter = (xml: string, start: number) => {
  const end = xml.indexOf('<', start);
  return xml.slice(start, end < 0 ? xml.length : end);
};

/**
 * SpreadsheetML of one part. Cells: `<c>` with children (a value, formula or inline string), an
 * array or data-table formula counted as its whole `ref` range. Rows: those holding such cells. The
 * printed area from A1 to the farthest of: such cells, styled empty cells (`<c s>`: Calc prints
 * borders and fills), merged ranges, formula ranges, drawing anchors (`<from>`/`<to>` row and
 * column); plus explicit print areas (`_xlnm.Print_Area` defined names). Shared strings: `<si>`.
 * A row's `spans` and the sheet's `<dimension>` are hints LibreOffice does not lay out (a dimension
 * of A1:XFD1048576 around one cell converted in 1.7 s): not counted.
 */
export function countSpreadsheetMl(xml: string, counter: Counter): void {
  let row = 0;
  let column = 0;
  let rowHasCells = false;
  let lastRow = 0;
  let lastColumn = 0;
  const reach = (r: number, c: number) => {
    lastRow = Math.max(lastRow, r);
    lastColumn = Math.max(lastColumn, c);
  };
  /** Inside a <c> with children: its row and column. */
  let cell: { row: number; column: number } | undefined;
  /** Inside a drawing anchor's <from> or <to>: its 0-based row and column so far. */
  let anchor: { row: number; column: number } | undefined;
  for (const [closing, name, attributes, empty, end] of tags(xml)) {
    if (anchor && (name === 'from' || name === 'to') && closing) {
      reach(Math.min(anchor.row + 1, MAX_SHEET_ROWS), Math.min(anchor.column + 1, MAX_SHEET_COLUMNS));
      anchor = undefined;
      continue;
    }
    if (anchor && (name === 'row' || name === 'col') && !closing && !empty && attributes.trim() === '') {
      // <xdr:row>5</xdr:row>: a 0-based position as the element's text (a sheet row has none).
      const position = /^\s*(\d{1,9})\s*$/.exec(textAfter(xml, end))?.[1];
      if (position !== undefined) {
        if (name === 'row') anchor.row = Number(position);
        else anchor.column = Number(position);
        continue;
      }
    }
    if (name === 'row') {
      if (closing) {
        if (rowHasCells) counter.add('rows', 1);
        rowHasCells = false;
        continue;
      }
      const r = Number(attribute(attributes, 'r'));
      row = Number.isInteger(r) && r >= 1 ? Math.min(r, MAX_SHEET_ROWS) : Math.min(row + 1, MAX_SHEET_ROWS);
      column = 0;
      rowHasCells = false;
    } else if (name === 'c' && !closing) {
      const ref = attribute(attributes, 'r');
      const c = ref === undefined ? undefined : referenceColumn(ref);
      column = c === undefined ? Math.min(column + 1, MAX_SHEET_COLUMNS) : Math.min(c, MAX_SHEET_COLUMNS);
      const r = ref === undefined ? undefined : referenceRow(ref);
      const cellRow = r === undefined ? Math.max(row, 1) : Math.min(r, MAX_SHEET_ROWS);
      if (empty) {
        const style = attribute(attributes, 's');
        if (style !== undefined && style.trim() !== '0') reach(cellRow, column);
        continue;
      }
      cell = { row: cellRow, column };
      counter.add('cells', 1);
      rowHasCells = true;
      reach(cellRow, column);
    } else if (name === 'c' && closing) {
      cell = undefined;
    } else if (name === 'f' && !closing && cell) {
      const type = attribute(attributes, 't');
      if (type !== 'array' && type !== 'dataTable') continue;
      const range = rangeCells(attribute(attributes, 'ref'));
      if (!range) continue;
      counter.add('cells', range.cells - 1);
      reach(range.lastRow, range.lastColumn);
    } else if (name === 'mergeCell' && !closing) {
      const range = rangeCells(attribute(attributes, 'ref'));
      if (range) reach(range.lastRow, range.lastColumn);
    } else if ((name === 'from' || name === 'to') && !closing && !empty) {
      anchor = { row: 0, column: 0 };
    } else if (name === 'definedName' && !closing && !empty && /Print_Area/i.test(attribute(attributes, 'name') ?? '')) {
      counter.add('area', printRangesArea(textAfter(xml, end)));
    } else if (name === 'si' && !closing) {
      counter.add('sharedStrings', 1);
    } else if (name === 'worksheet' && closing) {
      // One part holds one worksheet; a second one (not valid) is counted as a sheet of its own.
      counter.add('area', lastRow * lastColumn);
      lastRow = lastColumn = row = column = 0;
    }
  }
  counter.add('area', lastRow * lastColumn);
}

interface OdfTable {
  row: number;
  lastRow: number;
  lastColumn: number;
}

interface OdfRow {
  table: OdfTable;
  /** First row index (0-based) and how many times the row is repeated. */
  start: number;
  repeated: number;
  column: number;
  hasCells: boolean;
}

/** Calc does not print a cell format repeated over more rows than this at a column's end (SC_VISATTR_STOP). */
const FORMAT_ROWS_NOT_PRINTED = 84;

/**
 * OpenDocument spreadsheet content. Cells: those holding something (an office:value-type, a formula
 * or children), each counted columns-repeated × rows-repeated times. Rows: those holding such cells,
 * repeats multiplied out. The printed area of each table, from A1 to the farthest of: such cells,
 * their merged span (number-columns/rows-spanned), the end cell of drawings anchored to cells
 * (table:end-cell-address; drawings placed on the page by length are not counted), styled empty
 * cells (table:style-name) in rows
 * repeated at most 84 times (Calc leaves out formats repeated further, as LibreOffice writes them after
 * the last row: 10⁹ styled empty cells converted in 4.5 s), and the table's print ranges. Tables inside
 * cells (not Calc's, but valid ODF) are counted as tables of their own, multiplied by the enclosing repeats.
 */
export function countOdfTables(xml: string, counter: Counter): void {
  const tables: OdfTable[] = [];
  const rows: OdfRow[] = [];
  /** Product of the repeats of the rows and cells enclosing the current element. */
  const multipliers: number[] = [1];
  const multiplier = () => multipliers[multipliers.length - 1]!;
  const reach = (table: OdfTable, lastRow: number, lastColumn: number) => {
    table.lastRow = Math.max(table.lastRow, Math.min(lastRow, MAX_SHEET_ROWS));
    table.lastColumn = Math.max(table.lastColumn, Math.min(lastColumn, MAX_SHEET_COLUMNS));
  };
  for (const [closing, name, attributes, empty] of tags(xml)) {
    // A drawing anchored to cells ends at its table:end-cell-address ("Sheet1.XFD1048576").
    if (!closing && attributes.includes('end-cell-address') && tables.length > 0) {
      const end = attribute(attributes, 'end-cell-address')?.replace(/^.*[.!]/, '');
      const range = end === undefined ? undefined : rangeCells(end);
      if (range) reach(tables[tables.length - 1]!, range.lastRow, range.lastColumn);
    }
    if (name === 'table') {
      if (closing) {
        const table = tables.pop();
        if (table) counter.add('area', table.lastRow * table.lastColumn * multiplier());
      } else if (!empty) {
        tables.push({ row: 0, lastRow: 0, lastColumn: 0 });
        const printRanges = attribute(attributes, 'print-ranges');
        if (printRanges) counter.add('area', printRangesArea(printRanges) * multiplier());
      }
    } else if (name === 'table-row') {
      const table = tables[tables.length - 1];
      if (!table) continue;
      if (closing) {
        const row = rows.pop();
        if (multipliers.length > 1) multipliers.pop();
        if (row?.hasCells) counter.add('rows', row.repeated * multiplier());
        continue;
      }
      const repeated = repeat(attribute(attributes, 'number-rows-repeated', true));
      const start = table.row;
      table.row = Math.min(table.row + repeated, MAX_SHEET_ROWS * 2);
      if (empty) continue;
      rows.push({ table, start, repeated, column: 0, hasCells: false });
      multipliers.push(multiplier() * repeated);
    } else if (name === 'table-cell' || name === 'covered-table-cell') {
      const row = rows[rows.length - 1];
      if (closing) {
        if (row && multipliers.length > 1) multipliers.pop();
        continue;
      }
      if (!row) continue;
      const repeated = repeat(attribute(attributes, 'number-columns-repeated', true));
      const start = row.column;
      row.column = Math.min(row.column + repeated, MAX_SHEET_COLUMNS * 2);
      const holds = !empty || attribute(attributes, 'value-type') !== undefined || attribute(attributes, 'formula') !== undefined;
      if (!empty) multipliers.push(multiplier() * repeated);
      if (!holds) {
        if (attribute(attributes, 'style-name') !== undefined && row.repeated <= FORMAT_ROWS_NOT_PRINTED) reach(row.table, row.start + row.repeated, start + repeated);
        continue;
      }
      // multiplier() includes this cell's own repeat when it has children (pushed above), not otherwise.
      counter.add('cells', empty ? multiplier() * repeated : multiplier());
      row.hasCells = true;
      const spannedRows = repeat(attribute(attributes, 'number-rows-spanned', true));
      const spannedColumns = repeat(attribute(attributes, 'number-columns-spanned', true));
      reach(row.table, row.start + row.repeated - 1 + spannedRows, start + repeated - 1 + spannedColumns);
    }
  }
  for (const table of tables) counter.add('area', table.lastRow * table.lastColumn);
}

/** PresentationML shape elements (ECMA-376 §19.3.1): shapes, pictures, frames (tables, charts), groups, connectors. */
const PML_SHAPES = new Set(['sp', 'pic', 'graphicFrame', 'grpSp', 'cxnSp', 'contentPart']);
/** Shape elements of ODF's drawing namespace (ODF 1.3 §10.2–10.4), the elements that can stand on a page. */
const ODF_SHAPES = new Set([
  'rect', 'line', 'polyline', 'polygon', 'regular-polygon', 'path', 'circle', 'ellipse', 'connector', 'caption',
  'measure', 'control', 'page-thumbnail', 'frame', 'g', 'custom-shape',
]);

/** PresentationML of one part: slides (`<sld>`) and shape elements. */
export function countPresentationMl(xml: string, counter: Counter): void {
  for (const [closing, name] of tags(xml)) {
    if (closing) continue;
    if (name === 'sld') counter.add('slides', 1);
    else if (PML_SHAPES.has(name)) counter.add('shapes', 1);
  }
}

/** ODF presentation content: pages (`<draw:page>`) and drawing shapes. */
export function countOdfPresentation(xml: string, counter: Counter): void {
  for (const [closing, name] of tags(xml)) {
    if (closing) continue;
    if (name === 'page') counter.add('slides', 1);
    else if (ODF_SHAPES.has(name)) counter.add('shapes', 1);
  }
}

/**
 * CSV as Calc's text import reads it: records separated by line ends outside quotes, fields by the
 * separator outside quotes. Counts fields that hold anything (a space is a cell to Calc), records
 * holding such fields, and the printed area: lines up to the last record holding something (a blank
 * line is an empty row) × the widest such record. One pass over the text, one character at a time.
 */
export function countCsv(text: string, separator: number, counter: Counter): void {
  let line = 0;
  let lastLine = 0;
  let width = 0;
  let recordFields = 0;
  let recordHolds = false;
  let fieldHolds = false;
  let inQuotes = false;
  let charged = 0;
  const endField = () => {
    recordFields++;
    if (fieldHolds) {
      counter.add('cells', 1);
      recordHolds = true;
    }
    fieldHolds = false;
  };
  const endRecord = () => {
    endField();
    line++;
    if (recordHolds) {
      counter.add('rows', 1);
      lastLine = line;
      width = Math.max(width, recordFields);
      // The area so far, charged as it grows (the limit is met while reading, not after).
      if (lastLine * width > charged) {
        counter.add('area', lastLine * width - charged);
        charged = lastLine * width;
      }
    }
    recordFields = 0;
    recordHolds = false;
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inQuotes) {
      // "" inside quotes is a quote character; a lone quote ends the quoting.
      if (ch === 34) {
        if (text.charCodeAt(i + 1) === 34) i++;
        else inQuotes = false;
      }
      continue;
    }
    if (ch === 34 && !fieldHolds) {
      // A quote opens a quoted field only at the field's start (elsewhere it is a character, as for
      // Calc). Calc keeps a field quoted at least until the lone quote this scan stops at, so the
      // scan splits fields and records wherever Calc does: its counts bound Calc's.
      inQuotes = true;
      fieldHolds = true;
    } else if (ch === separator) endField();
    else if (ch === 10 || ch === 13) {
      if (ch === 13 && text.charCodeAt(i + 1) === 10) i++;
      endRecord();
    } else fieldHolds = true;
  }
  if (fieldHolds || recordFields > 0) endRecord();
}

/** Parts of an OOXML package that hold markup (not pictures or other media, whatever their declared type). */
function* markupParts(pkg: OpcPackage): Generator<[string, string]> {
  for (const part of pkg.partNames()) {
    const bytes = pkg.bytes(part);
    if (!bytes || pictureSize(bytes) || /^(image|audio|video)\//i.test(pkg.contentType(part) ?? '')) continue;
    yield [part, xmlText(bytes, part)];
  }
}

/** Counts an XLSX/XLSM or PPTX package; throws the 422 as soon as a limit is passed. */
export function assertOoxmlStructure(pkg: OpcPackage, kind: 'sheets' | 'slides', budget: StructureBudget = STRUCTURE_BUDGET): StructureCount {
  const counter = new Counter(budget);
  for (const [, text] of markupParts(pkg)) (kind === 'sheets' ? countSpreadsheetMl : countPresentationMl)(text, counter);
  return counter.counted;
}

/** Counts an ODS or ODP package's content (and, for presentations, its master pages in styles.xml). */
export function assertOdfStructure(entries: readonly ZipEntry[], kind: 'sheets' | 'slides', budget: StructureBudget = STRUCTURE_BUDGET): StructureCount {
  const counter = new Counter(budget);
  for (const entry of entries) {
    if (entry.name !== 'content.xml' && entry.name !== 'styles.xml') continue;
    const text = xmlText(entry.data, entry.name);
    if (kind === 'sheets') countOdfTables(text, counter);
    else countOdfPresentation(text, counter);
  }
  return counter.counted;
}

/** Counts a CSV document's text. */
export function assertCsvStructure(text: string, separator: number, budget: StructureBudget = STRUCTURE_BUDGET): StructureCount {
  const counter = new Counter(budget);
  countCsv(text, separator, counter);
  return counter.counted;
}

export { Counter as StructureCounter };
