import { buildCompoundFile } from './compound-file-builder.js';

/**
 * Writes a BIFF8 workbook stream (and an .xls around it) from a plain description, for the XLS
 * structure tests: workbook globals (BOF, 16 XF, BOUNDSHEET per sheet with its stream offset, an SST split
 * into CONTINUE records at string boundaries, optional Print_Area names, EOF) and one worksheet
 * substream per sheet (BOF, cell records, MERGECELLS, EOF). Positions are 0-based as in the records.
 */
export type BiffCellKind = 'number' | 'rk' | 'labelsst' | 'label' | 'formula' | 'boolerr';
export interface BiffSheet {
  cells: { row: number; column: number; kind: BiffCellKind }[];
  /** MULRK records: `count` RK cells from (row, column) rightwards. */
  mulrk?: { row: number; column: number; count: number }[];
  blanks?: { row: number; column: number }[];
  /** MULBLANK records: `count` blank cells from (row, column). */
  mulblank?: { row: number; column: number; count: number }[];
  /** Merged ranges, inclusive: [firstRow, lastRow, firstColumn, lastColumn]. */
  merges?: [number, number, number, number][];
  /** Array formulas, inclusive ranges: a FORMULA at the first cell and an ARRAY record over the range. */
  arrays?: [number, number, number, number][];
  /** A Print_Area name for this sheet, inclusive range. */
  printArea?: [number, number, number, number];
  /** An embedded chart substream (BOF type 0x20 … EOF) with cell-like records the counter must not count. */
  chart?: boolean;
}

const record = (type: number, body: Buffer) => {
  const header = Buffer.alloc(4);
  header.writeUInt16LE(type, 0);
  header.writeUInt16LE(body.length, 2);
  return Buffer.concat([header, body]);
};
const u16 = (...values: number[]) => {
  const b = Buffer.alloc(values.length * 2);
  values.forEach((v, i) => b.writeUInt16LE(v, i * 2));
  return b;
};
const u32 = (v: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(v, 0);
  return b;
};
const bof = (substream: number) => record(0x0809, Buffer.concat([u16(0x0600, substream, 0x0dbb, 0x07cc), u32(0x80c9), u32(0x0206)]));
const eof = () => record(0x000a, Buffer.alloc(0));
const double = (v: number) => {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(v, 0);
  return b;
};
const XF = 15;

function cellRecord(row: number, column: number, kind: BiffCellKind, n: number): Buffer {
  const at = u16(row, column, XF);
  switch (kind) {
    case 'number':
      return record(0x0203, Buffer.concat([at, double(n + 0.5)]));
    case 'rk':
      return record(0x027e, Buffer.concat([at, u32(((n & 0xffff) << 2) | 2)]));
    case 'labelsst':
      return record(0x00fd, Buffer.concat([at, u32(0)]));
    case 'label':
      return record(0x0204, Buffer.concat([at, u16(3), Buffer.from([0]), Buffer.from('abc', 'latin1')]));
    case 'formula':
      return record(0x0006, Buffer.concat([at, double(n), u16(0), u32(0), u16(0)]));
    case 'boolerr':
      return record(0x0205, Buffer.concat([at, Buffer.from([1, 0])]));
  }
}

/** SST with `strings`, its CONTINUE records starting at string boundaries. */
function sst(strings: readonly string[]): Buffer {
  const encoded = strings.map((s) => Buffer.concat([u16(s.length), Buffer.from([0]), Buffer.from(s, 'latin1')]));
  const records: Buffer[] = [];
  let current: Buffer[] = [u32(strings.length), u32(strings.length)];
  let size = 8;
  let type = 0x00fc;
  for (const string of encoded) {
    if (size + string.length > 8224) {
      records.push(record(type, Buffer.concat(current)));
      type = 0x003c;
      current = [];
      size = 0;
    }
    current.push(string);
    size += string.length;
  }
  records.push(record(type, Buffer.concat(current)));
  return Buffer.concat(records);
}

function printAreaName(sheet: number, [r1, r2, c1, c2]: [number, number, number, number]): Buffer {
  const formula = Buffer.concat([Buffer.from([0x3b]), u16(0, r1, r2, c1, c2)]);
  return record(0x0018, Buffer.concat([u16(0x0020), Buffer.from([0, 1]), u16(formula.length, 0, sheet + 1), Buffer.from([0, 0, 0, 0]), Buffer.from([0, 0x06]), formula]));
}

function worksheet(sheet: BiffSheet): Buffer {
  const parts: Buffer[] = [bof(0x0010), record(0x0200, Buffer.concat([u32(0), u32(0), u16(0, 0, 0)]))];
  sheet.cells.forEach((c, i) => parts.push(cellRecord(c.row, c.column, c.kind, i)));
  for (const m of sheet.mulrk ?? []) {
    const cells = Array.from({ length: m.count }, (_, i) => Buffer.concat([u16(XF), u32((i << 2) | 2)]));
    parts.push(record(0x00bd, Buffer.concat([u16(m.row, m.column), ...cells, u16(m.column + m.count - 1)])));
  }
  for (const b of sheet.blanks ?? []) parts.push(record(0x0201, u16(b.row, b.column, XF)));
  for (const m of sheet.mulblank ?? []) parts.push(record(0x00be, Buffer.concat([u16(m.row, m.column), ...Array.from({ length: m.count }, () => u16(XF)), u16(m.column + m.count - 1)])));
  for (const [r1, r2, c1, c2] of sheet.arrays ?? []) {
    parts.push(cellRecord(r1, c1, 'formula', 0));
    parts.push(record(0x0221, Buffer.concat([u16(r1, r2), Buffer.from([c1, c2]), u16(0), u32(0), u16(0)])));
  }
  if (sheet.chart) {
    // A chart inside the sheet: its own BOF/EOF; a NUMBER-typed record inside must not count.
    parts.push(bof(0x0020), cellRecord(60000, 200, 'number', 0), eof());
  }
  const merges = sheet.merges ?? [];
  for (let i = 0; i < merges.length; i += 1026) {
    const chunk = merges.slice(i, i + 1026);
    parts.push(record(0x00e5, Buffer.concat([u16(chunk.length), ...chunk.map(([r1, r2, c1, c2]) => u16(r1, r2, c1, c2))])));
  }
  parts.push(eof());
  return Buffer.concat(parts);
}

/**
 * `sheetOffsets` rewrites the BOUNDSHEET offsets written (given the true ones, one per sheet; it must
 * return as many for any input of one length): to point several at one sheet, or elsewhere.
 */
export function buildBiff8Stream(sheets: readonly BiffSheet[], sharedStrings: readonly string[] = ['s'], sheetOffsets: (offsets: number[]) => number[] = (o) => o): Buffer {
  const bodies = sheets.map(worksheet);
  const boundSheet = (offset: number, i: number) => {
    const name = `Sheet${i + 1}`;
    return record(0x0085, Buffer.concat([u32(offset), Buffer.from([0, 0, name.length, 0]), Buffer.from(name, 'latin1')]));
  };
  const names = sheets.flatMap((s, i) => (s.printArea ? [printAreaName(i, s.printArea)] : []));
  // Sixteen cell formats (XF, all General), so readers that map a cell's XF to its type find index 15.
  const formats = Array.from({ length: 16 }, () => record(0x00e0, Buffer.alloc(20)));
  const globalsLength = (offsets: number[]) =>
    Buffer.concat([bof(0x0005), ...formats, ...offsets.map(boundSheet), ...names, sst(sharedStrings), eof()]).length;
  const start = globalsLength(sheetOffsets(sheets.map(() => 0)));
  const offsets: number[] = [];
  bodies.reduce((at, body) => (offsets.push(at), at + body.length), start);
  return Buffer.concat([bof(0x0005), ...formats, ...sheetOffsets(offsets).map(boundSheet), ...names, sst(sharedStrings), eof(), ...bodies]);
}

export function buildXls(sheets: readonly BiffSheet[], sharedStrings: readonly string[] = ['s']): Buffer {
  return buildCompoundFile([{ name: 'Workbook', data: buildBiff8Stream(sheets, sharedStrings) }]);
}
