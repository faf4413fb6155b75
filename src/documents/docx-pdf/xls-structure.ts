import { readCompoundFile } from '../../inputs/compound-file.js';
import { MAX_SHEET_COLUMNS, MAX_SHEET_ROWS, STRUCTURE_BUDGET, StructureCounter, type StructureBudget, type StructureCount } from './structure-budget.js';

/**
 * What a binary Excel workbook (BIFF8, Excel 97–2003, in its `Workbook` stream; BIFF5, Excel 5/95,
 * in `Book`) asks of LibreOffice, counted on its records with the same limits as XLSX
 * (structure-budget.ts). One pass over the records, each one advancing by its 4-byte header plus
 * its length; a record running past the stream's end ends the walk (LibreOffice stops there too).
 *
 * Counted inside worksheet and macro-sheet substreams (BOF … EOF; workbook globals, charts and VB
 * modules hold no cells):
 * - cells: NUMBER, RK, LABELSST, LABEL, RSTRING, FORMULA, BOOLERR one each, MULRK one per RK it holds;
 *   an ARRAY or TABLE (data table) formula as its whole range, as XLSX counts `t="array"`/`dataTable`
 *   (SHRFMLA ranges are not: a shared formula only fills the cells that have a FORMULA record);
 * - rows: distinct rows of a sheet holding such cells;
 * - printed area, per sheet: rows × columns from A1 to the farthest such cell, formatted blank cell
 *   (BLANK, MULBLANK), merged range (MERGECELLS) or ARRAY/TABLE range; plus the Print_Area names of
 *   the workbook globals (BIFF8), each range from A1 to its far corner, as XLSX's `_xlnm.Print_Area`;
 * - shared strings: the SST's declared unique count, at most one string per 3 bytes of the SST and
 *   its CONTINUE records (the smallest string is 3 bytes), so a lying count cannot inflate it.
 *
 * DIMENSIONS, like XLSX's `<dimension>`, is a hint LibreOffice does not lay out: not counted.
 * An encrypted workbook (FILEPASS) keeps its record headers in clear but not their bodies: after
 * FILEPASS only cells are counted, by record type and length (MULRK by its length); rows, areas and
 * strings are left to the office memory watch and the conversion deadline, as before.
 */

const BOF = 0x0809;
const EOF = 0x000a;
const FILEPASS = 0x002f;
const CONTINUE = 0x003c;
const SST = 0x00fc;
const NAME = 0x0018;
const ONE_CELL = new Set([0x0203 /* NUMBER */, 0x027e /* RK */, 0x00fd /* LABELSST */, 0x0204 /* LABEL */, 0x00d6 /* RSTRING */, 0x0006 /* FORMULA */, 0x0205 /* BOOLERR */]);
const MULRK = 0x00bd;
const BLANK = 0x0201;
const MULBLANK = 0x00be;
const ARRAY = 0x0221;
const TABLE = 0x0236;
const MERGECELLS = 0x00e5;

/** BOF substream types holding cells: worksheet (or dialog sheet) and Excel 4 macro sheet. */
const SHEET_TYPES = new Set([0x0010, 0x0040]);

interface Sheet {
  rows: Set<number>;
  lastRow: number;
  lastColumn: number;
}

/** Print_Area (built-in name 0x06) ranges of a BIFF8 NAME record: the sum, for each range, of A1 to its far corner. */
function printAreaOfName(body: Buffer): number {
  if (body.length < 16 || !(body.readUInt16LE(0) & 0x0020)) return 0;
  const nameLength = body[3]!;
  const cce = body.readUInt16LE(4);
  const wide = body[14]! & 1;
  if (nameLength !== 1 || (wide ? body.readUInt16LE(15) : body[15]) !== 0x06) return 0;
  const formula = body.subarray(15 + (wide ? 2 : 1), 15 + (wide ? 2 : 1) + cce);
  let area = 0;
  // Tokens of the name's formula ([MS-XLS] 2.5.198): areas and references, their unions and
  // memory-area wrappers; anything else ends the scan (a print area holds nothing else).
  for (let at = 0; at < formula.length; ) {
    const token = formula[at]!;
    // Operand tokens come in three classes (0x20, 0x40, 0x60 added to the base type).
    const base = token >= 0x20 ? token & 0x1f : -1;
    const fields = formula.subarray(at + 1);
    if (base === 0x1b && fields.length >= 10) {
      area += (Math.max(fields.readUInt16LE(2), fields.readUInt16LE(4)) + 1) * ((Math.max(fields.readUInt16LE(6), fields.readUInt16LE(8)) & 0x3fff) + 1);
      at += 11;
    } else if (base === 0x05 && fields.length >= 8) {
      area += (Math.max(fields.readUInt16LE(0), fields.readUInt16LE(2)) + 1) * ((Math.max(fields.readUInt16LE(4), fields.readUInt16LE(6)) & 0x3fff) + 1);
      at += 9;
    } else if (base === 0x1a && fields.length >= 6) {
      area += (fields.readUInt16LE(2) + 1) * ((fields.readUInt16LE(4) & 0x3fff) + 1);
      at += 7;
    } else if (base === 0x04 && fields.length >= 4) {
      area += (fields.readUInt16LE(0) + 1) * ((fields.readUInt16LE(2) & 0x3fff) + 1);
      at += 5;
    } else if (token === 0x10 || token === 0x11 || token === 0x0f || token === 0x15) at += 1;
    else if (base === 0x09) at += 3;
    else if (base === 0x06 || base === 0x07 || base === 0x08) at += 7;
    else break;
  }
  return area;
}

/** Counts the cells, rows, printed area and shared strings of one BIFF5/BIFF8 workbook stream. */
export function countBiffWorkbook(stream: Buffer, counter: StructureCounter): void {
  /** Open substreams, innermost last: a sheet, or undefined for globals, charts and others. */
  const substreams: (Sheet | undefined)[] = [];
  let biff8 = false;
  let encrypted = false;
  const finish = (sheet: Sheet | undefined) => {
    if (sheet) counter.add('area', sheet.lastRow * sheet.lastColumn);
  };
  const reach = (sheet: Sheet, row: number, column: number) => {
    sheet.lastRow = Math.max(sheet.lastRow, Math.min(row, MAX_SHEET_ROWS));
    sheet.lastColumn = Math.max(sheet.lastColumn, Math.min(column, MAX_SHEET_COLUMNS));
  };
  /** A cell holding something at 0-based (row, column), and `more` cells to its right. */
  const cells = (sheet: Sheet, row: number, column: number, count: number) => {
    if (count <= 0) return;
    counter.add('cells', count);
    if (encrypted) return;
    if (!sheet.rows.has(row)) {
      sheet.rows.add(row);
      counter.add('rows', 1);
    }
    reach(sheet, row + 1, column + count);
  };

  for (let at = 0; at + 4 <= stream.length; ) {
    const type = stream.readUInt16LE(at);
    const length = stream.readUInt16LE(at + 2);
    const body = stream.subarray(at + 4, at + 4 + length);
    if (body.length < length) break;
    at += 4 + length;

    if (type === BOF) {
      const substream = length >= 4 ? body.readUInt16LE(2) : 0;
      if (substreams.length === 0 && length >= 2) biff8 = body.readUInt16LE(0) === 0x0600;
      substreams.push(SHEET_TYPES.has(substream) ? { rows: new Set(), lastRow: 0, lastColumn: 0 } : undefined);
      continue;
    }
    if (type === EOF) {
      finish(substreams.pop());
      continue;
    }
    if (type === FILEPASS) {
      encrypted = true;
      continue;
    }
    const sheet = substreams[substreams.length - 1];
    if (!sheet) {
      if (encrypted) continue;
      if (type === SST && length >= 8) {
        // The strings run on in the CONTINUE records that follow; the main loop steps over them after.
        let bytes = length - 8;
        for (let next = at; next + 4 <= stream.length && stream.readUInt16LE(next) === CONTINUE; next += 4 + stream.readUInt16LE(next + 2)) {
          bytes += stream.readUInt16LE(next + 2);
        }
        counter.add('sharedStrings', Math.min(body.readUInt32LE(4), Math.floor(bytes / 3)));
      } else if (type === NAME && biff8) counter.add('area', printAreaOfName(body));
      continue;
    }
    if (ONE_CELL.has(type)) {
      if (encrypted) counter.add('cells', 1);
      else if (length >= 4) cells(sheet, body.readUInt16LE(0), body.readUInt16LE(2), 1);
    } else if (type === MULRK) {
      const count = Math.floor((length - 6) / 6);
      if (encrypted) counter.add('cells', Math.max(count, 0));
      else if (length >= 6) cells(sheet, body.readUInt16LE(0), body.readUInt16LE(2), count);
    } else if (encrypted) {
      continue;
    } else if (type === BLANK && length >= 4) {
      reach(sheet, body.readUInt16LE(0) + 1, body.readUInt16LE(2) + 1);
    } else if (type === MULBLANK && length >= 6) {
      reach(sheet, body.readUInt16LE(0) + 1, body.readUInt16LE(2) + Math.floor((length - 6) / 2));
    } else if ((type === ARRAY || type === TABLE) && length >= 6) {
      const [r1, r2] = [body.readUInt16LE(0), body.readUInt16LE(2)].sort((a, b) => a - b);
      const [c1, c2] = [body[4]!, body[5]!].sort((a, b) => a - b);
      // The anchor cell's own FORMULA record is counted already.
      counter.add('cells', (r2! - r1! + 1) * (c2! - c1! + 1) - 1);
      reach(sheet, r2! + 1, c2! + 1);
    } else if (type === MERGECELLS && length >= 2) {
      const count = Math.min(body.readUInt16LE(0), Math.floor((length - 2) / 8));
      for (let i = 0; i < count; i++) {
        const range = 2 + i * 8;
        reach(sheet, Math.max(body.readUInt16LE(range), body.readUInt16LE(range + 2)) + 1, Math.max(body.readUInt16LE(range + 4), body.readUInt16LE(range + 6)) + 1);
      }
    }
  }
  for (const sheet of substreams) finish(sheet);
}

/**
 * Counts an XLS file's workbook stream; throws 422 DOCUMENT_TOO_COMPLEX as soon as a limit is passed,
 * 400 INVALID_FILE_FORMAT when the compound file cannot give the stream whole. A file without a
 * workbook stream (detect-format refuses those) counts nothing.
 */
export function assertXlsStructure(data: Buffer, budget: StructureBudget = STRUCTURE_BUDGET): StructureCount {
  const counter = new StructureCounter(budget);
  const file = readCompoundFile(data);
  const stream = file?.stream('Workbook') ?? file?.stream('Book');
  if (stream) countBiffWorkbook(stream, counter);
  return counter.counted;
}
