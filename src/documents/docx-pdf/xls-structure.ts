import { invalidFile } from '../../errors/domain-error.js';
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
/** Cell records LibreOffice's BIFF5/BIFF8 import reads in a sheet, the BIFF2–4 ids it also takes included. */
const ONE_CELL = new Set([
  0x0203, 0x0003 /* NUMBER */, 0x0002 /* INTEGER */, 0x027e /* RK */, 0x00fd /* LABELSST */, 0x0204, 0x0004 /* LABEL */,
  0x00d6 /* RSTRING */, 0x0006, 0x0206, 0x0406 /* FORMULA */, 0x0205, 0x0005 /* BOOLERR */,
]);
const MULRK = 0x00bd;
const BLANKS = new Set([0x0201, 0x0001]);
const MULBLANK = 0x00be;
/** ARRAY (BIFF3+, BIFF2) and TABLE: a formula over a range. */
const RANGE_FORMULAS = new Set([0x0221, 0x0021, 0x0236]);
const MERGECELLS = 0x00e5;

/** BOF substream types holding cells: worksheet (or dialog sheet) and Excel 4 macro sheet. */
const SHEET_TYPES = new Set([0x0010, 0x0040]);

/** What one sheet substream holds, as it is walked; charged to the budget for each time LibreOffice reads it. */
interface Sheet {
  cells: number;
  rows: Set<number>;
  lastRow: number;
  lastColumn: number;
}

/** One substream of the walk: its BOF record's position, its sheet (none for globals, charts, modules). */
interface Substream {
  start: number;
  sheet: Sheet | undefined;
}

/** A BIFF5/8 substream that starts with a BOF record 0x0809: what its sheet holds (none: no sheet) and where its EOF ends. */
interface SheetRead {
  counts?: { cells: number; rows: number; area: number };
  end: number;
}

/** More substreams than any workbook holds (LibreOffice makes at most 10 000 sheets); bounds the walk's memory. */
const MAX_SUBSTREAMS = 100_000;

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

/** BOF record ids of BIFF2–BIFF8: LibreOffice steps over a nested substream opened by any of them. */
const ANY_BOF = new Set([0x0009, 0x0209, 0x0409, BOF]);
const BOUNDSHEET = 0x0085;

/**
 * Counts the cells, rows, printed area and shared strings of one BIFF5/BIFF8 workbook stream.
 *
 * Sheets are charged as LibreOffice reads them: in BIFF8 each BOUNDSHEET record of the globals sends
 * it to a sheet's BOF by its stream offset (two BOUNDSHEETs naming one offset make two sheets of the
 * same cells), or, when no BOF is there, to the next BOF after the sheet it read last; so each
 * BOUNDSHEET charges the substream it leads to. An offset at a BOF the walk did not read as a record
 * (inside another record's body) would make LibreOffice read records the walk never saw: refused.
 * BIFF5, or BIFF8 without BOUNDSHEETs, charges each sheet substream once. (Checked with soffice 7.4:
 * seven BOUNDSHEETs at one substream gave seven sheets of its cells.) BIFF2–4 cell record ids count
 * too, and a substream opened by their BOF ids nests, as LibreOffice's import reads them.
 */
export function countBiffWorkbook(stream: Buffer, counter: StructureCounter): void {
  const open: Substream[] = [];
  /** Substreams opened by BOF 0x0809, by the position of that record, in stream order. */
  const reads = new Map<number, SheetRead>();
  const boundSheets: number[] = [];
  let biff8 = false;
  let encrypted = false;
  const close = (substream: Substream, end: number) => {
    const read = reads.get(substream.start);
    if (!read) return;
    read.end = end;
    const sheet = substream.sheet;
    if (sheet) read.counts = { cells: sheet.cells, rows: sheet.rows.size, area: sheet.lastRow * sheet.lastColumn };
  };
  const reach = (sheet: Sheet, row: number, column: number) => {
    sheet.lastRow = Math.max(sheet.lastRow, Math.min(row, MAX_SHEET_ROWS));
    sheet.lastColumn = Math.max(sheet.lastColumn, Math.min(column, MAX_SHEET_COLUMNS));
  };
  /** `count` cells holding something from 0-based (row, column) rightwards. */
  const cells = (sheet: Sheet, row: number, column: number, count: number) => {
    if (count <= 0) return;
    sheet.cells += count;
    if (encrypted) return;
    sheet.rows.add(row);
    reach(sheet, row + 1, column + count);
  };

  for (let at = 0; at + 4 <= stream.length; ) {
    const recordStart = at;
    const type = stream.readUInt16LE(at);
    const length = stream.readUInt16LE(at + 2);
    const body = stream.subarray(at + 4, at + 4 + length);
    if (body.length < length) break;
    at += 4 + length;

    if (ANY_BOF.has(type)) {
      const substreamType = length >= 4 ? body.readUInt16LE(2) : 0;
      if (reads.size === 0 && open.length === 0 && type === BOF && length >= 2) biff8 = body.readUInt16LE(0) === 0x0600;
      const sheet = type === BOF && SHEET_TYPES.has(substreamType) ? { cells: 0, rows: new Set<number>(), lastRow: 0, lastColumn: 0 } : undefined;
      open.push({ start: recordStart, sheet });
      if (type === BOF) reads.set(recordStart, { end: stream.length });
      if (open.length + reads.size > MAX_SUBSTREAMS) {
        throw invalidFile(`The workbook opens more than ${MAX_SUBSTREAMS.toLocaleString('en')} substreams (BOF records), more than any workbook holds; save it again and resend it.`);
      }
      continue;
    }
    if (type === EOF) {
      const substream = open.pop();
      if (substream) close(substream, at);
      continue;
    }
    if (type === FILEPASS) {
      encrypted = true;
      continue;
    }
    const sheet = open[open.length - 1]?.sheet;
    if (!sheet) {
      // The sheet offsets stay in clear in an encrypted file ([MS-XLS] 2.2.10).
      if (type === BOUNDSHEET && length >= 4) boundSheets.push(body.readUInt32LE(0));
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
      if (encrypted) sheet.cells += 1;
      else if (length >= 4) cells(sheet, body.readUInt16LE(0), body.readUInt16LE(2), 1);
    } else if (type === MULRK) {
      const count = Math.floor((length - 6) / 6);
      if (encrypted) sheet.cells += Math.max(count, 0);
      else if (length >= 6) cells(sheet, body.readUInt16LE(0), body.readUInt16LE(2), count);
    } else if (encrypted) {
      continue;
    } else if (BLANKS.has(type) && length >= 4) {
      reach(sheet, body.readUInt16LE(0) + 1, body.readUInt16LE(2) + 1);
    } else if (type === MULBLANK && length >= 6) {
      reach(sheet, body.readUInt16LE(0) + 1, body.readUInt16LE(2) + Math.floor((length - 6) / 2));
    } else if (RANGE_FORMULAS.has(type) && length >= 6) {
      const [r1, r2] = [body.readUInt16LE(0), body.readUInt16LE(2)].sort((a, b) => a - b);
      const [c1, c2] = [body[4]!, body[5]!].sort((a, b) => a - b);
      // The anchor cell's own FORMULA record is counted already.
      sheet.cells += (r2! - r1! + 1) * (c2! - c1! + 1) - 1;
      reach(sheet, r2! + 1, c2! + 1);
    } else if (type === MERGECELLS && length >= 2) {
      const count = Math.min(body.readUInt16LE(0), Math.floor((length - 2) / 8));
      for (let i = 0; i < count; i++) {
        const range = 2 + i * 8;
        reach(sheet, Math.max(body.readUInt16LE(range), body.readUInt16LE(range + 2)) + 1, Math.max(body.readUInt16LE(range + 4), body.readUInt16LE(range + 6)) + 1);
      }
    }
  }
  // A substream without its EOF runs to the end of the stream (LibreOffice finishes the sheet there too).
  for (const substream of open) close(substream, stream.length);

  const charge = (read: SheetRead) => {
    if (!read.counts) return;
    counter.add('cells', read.counts.cells);
    counter.add('rows', read.counts.rows);
    counter.add('area', read.counts.area);
  };
  if (!biff8 || boundSheets.length === 0) {
    for (const read of reads.values()) charge(read);
    return;
  }
  const starts = [...reads.keys()];
  /** Where LibreOffice is: after the globals substream (the first one), then after each sheet it read. */
  let position = reads.get(starts[0]!)?.end ?? 0;
  for (const offset of boundSheets) {
    let start: number | undefined;
    if (offset + 2 <= stream.length && stream.readUInt16LE(offset) === BOF) {
      if (!reads.has(offset)) throw invalidFile('The workbook names a sheet at a position inside another record (BOUNDSHEET); save it again and resend it.');
      start = offset;
    } else {
      start = firstAtOrAfter(starts, position);
      if (start === undefined) break;
    }
    const read = reads.get(start)!;
    charge(read);
    position = read.end;
  }
}

/** The first of the ascending `positions` at or after `position`, by binary search. */
function firstAtOrAfter(positions: readonly number[], position: number): number | undefined {
  let low = 0;
  let high = positions.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (positions[middle]! < position) low = middle + 1;
    else high = middle;
  }
  return positions[low];
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
