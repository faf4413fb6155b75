import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../../src/errors/domain-error.js';
import { STRUCTURE_BUDGET, StructureCounter } from '../../../src/documents/docx-pdf/structure-budget.js';
import { assertXlsStructure, countBiffWorkbook } from '../../../src/documents/docx-pdf/xls-structure.js';
import { buildBiff8Stream, buildXls, type BiffCellKind, type BiffSheet } from '../../support/office/biff-builder.js';
import { buildCompoundFile } from '../../support/office/compound-file-builder.js';
import { CORPUS_DIR } from '../../support/corpus.js';

/**
 * The XLS structure count against python3-xlrd 1.2 (Debian), an independent BIFF reader, on the real
 * workbooks and on generated ones, and against the structure each generated workbook was built from.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 6502);
const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/formats');
const ORACLE = path.resolve(import.meta.dirname, '../../support/xlrd_counts.py');
const work = mkdtempSync(path.join(tmpdir(), 'docproc-xls-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

type XlrdCounts = { cells: number; rows: number; area: number; sharedStrings: number } | { error: string };
const xlrd = (files: string[], formatting: boolean): Record<string, XlrdCounts> =>
  JSON.parse(execFileSync('/usr/bin/python3', [ORACLE, ...(formatting ? ['--formatting'] : []), ...files], { encoding: 'utf8', maxBuffer: 1 << 26 })) as Record<string, XlrdCounts>;

function xlsFilesUnder(dir: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.xl[st]$/i.test(name)) found.push(p);
    }
  };
  walk(dir);
  return found;
}

const KINDS: BiffCellKind[] = ['number', 'rk', 'labelsst', 'label', 'formula', 'boolerr'];
const range = (maxRow: number, maxColumn: number) =>
  fc.tuple(fc.nat({ max: maxRow }), fc.nat({ max: 20 }), fc.nat({ max: maxColumn }), fc.nat({ max: 5 })).map(([r, h, c, w]) => [r, r + h, c, Math.min(c + w, 255)] as [number, number, number, number]);
const sheetArb: fc.Arbitrary<BiffSheet> = fc.record({
  // Distinct positions in columns 0–149; MULRK runs in 150–249, one per row; arrays from row 3000.
  cells: fc.uniqueArray(fc.record({ row: fc.nat({ max: 2000 }), column: fc.nat({ max: 149 }), kind: fc.constantFrom(...KINDS) }), { maxLength: 80, selector: (c) => `${c.row}:${c.column}` }),
  mulrk: fc.uniqueArray(fc.record({ row: fc.nat({ max: 2000 }), column: fc.integer({ min: 150, max: 200 }), count: fc.integer({ min: 1, max: 49 }) }), { maxLength: 6, selector: (m) => m.row }),
  blanks: fc.array(fc.record({ row: fc.nat({ max: 4000 }), column: fc.nat({ max: 255 }) }), { maxLength: 4 }),
  mulblank: fc.array(fc.record({ row: fc.nat({ max: 4000 }), column: fc.nat({ max: 200 }), count: fc.integer({ min: 1, max: 50 }) }), { maxLength: 3 }),
  merges: fc.array(range(4000, 250), { maxLength: 4 }),
  arrays: fc.uniqueArray(range(100, 250).map(([r1, r2, c1, c2]) => [r1 + 3000, r2 + 3000, c1, c2] as [number, number, number, number]), { maxLength: 3, selector: (a) => `${a[0]}:${a[2]}` }),
  printArea: fc.option(range(60000, 250), { nil: undefined }),
  chart: fc.boolean(),
});
const workbookArb = fc.record({
  sheets: fc.array(sheetArb, { minLength: 1, maxLength: 4 }),
  strings: fc.array(fc.string({ maxLength: 30 }).map((s) => s.replace(/[^\x20-\x7e]/g, 'x')), { minLength: 1, maxLength: 3000 }),
});

/** What the counter should find, from the description alone. */
function expected({ sheets, strings }: { sheets: BiffSheet[]; strings: string[] }) {
  let cells = 0;
  let rows = 0;
  let area = 0;
  let records = 0;
  for (const s of sheets) {
    const arrayAnchors = (s.arrays ?? []).map(([r1, , c1]) => ({ row: r1, column: c1 }));
    const holding = [...s.cells, ...(s.mulrk ?? []), ...arrayAnchors];
    records += s.cells.length + (s.mulrk ?? []).reduce((n, m) => n + m.count, 0) + arrayAnchors.length;
    cells += s.cells.length + (s.mulrk ?? []).reduce((n, m) => n + m.count, 0) + (s.arrays ?? []).reduce((n, [r1, r2, c1, c2]) => n + (r2 - r1 + 1) * (c2 - c1 + 1), 0);
    rows += new Set(holding.map((c) => c.row)).size;
    const extents: [number, number][] = [
      ...s.cells.map((c) => [c.row + 1, c.column + 1] as [number, number]),
      ...(s.mulrk ?? []).map((m) => [m.row + 1, m.column + m.count] as [number, number]),
      ...(s.blanks ?? []).map((b) => [b.row + 1, b.column + 1] as [number, number]),
      ...(s.mulblank ?? []).map((m) => [m.row + 1, m.column + m.count] as [number, number]),
      ...[...(s.merges ?? []), ...(s.arrays ?? [])].map(([, r2, , c2]) => [r2 + 1, c2 + 1] as [number, number]),
    ];
    area += Math.max(0, ...extents.map(([r]) => r)) * Math.max(0, ...extents.map(([, c]) => c));
    if (s.printArea) area += (s.printArea[1] + 1) * (s.printArea[3] + 1);
  }
  return { counted: { cells, rows, area, sharedStrings: strings.length, slides: 0, shapes: 0 }, records };
}

describe('XLS structure count', () => {
  it('counts the real workbooks as xlrd reads them (cells, rows, used area with blanks and merges, shared strings)', () => {
    // (datasets-encrypted.xls is xlrd's "Workbook is encrypted": its own test below.)
    const files = [...xlsFilesUnder(FIXTURES), ...xlsFilesUnder(CORPUS_DIR)].filter((f) => !f.endsWith('-encrypted.xls'));
    expect(files.map((f) => path.basename(f))).toEqual(expect.arrayContaining(['datasets.xls', 'namesdemo.xls']));
    const theirs = xlrd(files, true);
    for (const f of files) {
      const { slides, shapes, ...ours } = assertXlsStructure(readFileSync(f));
      expect([slides, shapes]).toEqual([0, 0]);
      expect(ours, f).toEqual(theirs[f]);
    }
    // The numbers the structure-budget header quotes for readxl's datasets.
    expect(assertXlsStructure(readFileSync(path.join(FIXTURES, 'datasets.xls')))).toMatchObject({ cells: 6267, rows: 1257, area: 6267 });
    // namesdemo.xls's Print_Area (Sheet3!$A$1:$N$4) is in its area: 391 from its cells + 4 × 14.
    expect(assertXlsStructure(readFileSync(path.join(FIXTURES, 'namesdemo.xls')))).toMatchObject({ cells: 61, rows: 25, area: 391 + 56 });
  });

  it('counts generated workbooks as they were built, and xlrd reads the same cells, rows and strings', () => {
    const samples = fc.sample(workbookArb, { numRuns: 40, seed: SEED });
    const paths = samples.map((sample, i) => {
      const p = path.join(work, `generated-${i}.xls`);
      writeFileSync(p, buildXls(sample.sheets, sample.strings));
      return p;
    });
    const theirs = xlrd(paths, false);
    samples.forEach((sample, i) => {
      const want = expected(sample);
      expect(assertXlsStructure(readFileSync(paths[i]!)), paths[i]).toEqual(want.counted);
      // xlrd has no array ranges, print areas or (without formatting) blanks and merges: cells holding something, their rows, the strings.
      expect(theirs[paths[i]!], paths[i]).toMatchObject({ cells: want.records, rows: want.counted.rows, sharedStrings: sample.strings.length });
    });
  });

  it('refuses past each limit with 422 DOCUMENT_TOO_COMPLEX naming it', () => {
    const tooComplex = (data: Buffer, budget = STRUCTURE_BUDGET) => {
      try {
        assertXlsStructure(data, budget);
      } catch (err) {
        return err as DomainError;
      }
      return undefined;
    };
    // One array formula over a whole BIFF8 sheet: 65 536 × 256 cells from two records.
    expect(tooComplex(buildXls([{ cells: [], arrays: [[0, 65535, 0, 255]] }]))).toMatchObject({ code: 'DOCUMENT_TOO_COMPLEX', extensions: { limit: { name: 'convert.maxSheetCells' } } });
    // MULRK runs: 100 001 rows of one RK run each.
    const rows = Array.from({ length: 25_001 }, (_, r) => ({ row: r, column: 0, count: 1 }));
    expect(tooComplex(buildXls([0, 1, 2, 3].map(() => ({ cells: [], mulrk: rows }))))).toMatchObject({ extensions: { limit: { name: 'convert.maxSheetRows' } } });
    // Printed area: merged ranges to the corner of 31 sheets (65 536 × 256 = 1.7·10⁷ each).
    expect(tooComplex(buildXls(Array.from({ length: 31 }, () => ({ cells: [], merges: [[65535, 65535, 255, 255]] }))))).toMatchObject({ extensions: { limit: { name: 'convert.maxSheetArea' } } });
    // (with a smaller budget: a million strings is a 3 MB file to build)
    expect(tooComplex(buildXls([{ cells: [] }], Array.from({ length: 10_001 }, () => '')), { ...STRUCTURE_BUDGET, maxSharedStrings: 10_000 })).toMatchObject({ extensions: { limit: { name: 'convert.maxSharedStrings' } } });
    // A declared unique count with no strings behind it counts what the bytes can hold.
    const lying = buildBiff8Stream([{ cells: [] }], ['abc']);
    const sstAt = lying.indexOf(Buffer.from([0xfc, 0x00, 14, 0]));
    lying.writeUInt32LE(0xffffffff, sstAt + 8);
    const counter = new StructureCounter(STRUCTURE_BUDGET);
    countBiffWorkbook(lying, counter);
    expect(counter.counted.sharedStrings).toBe(2);
  });

  it('charges each sheet as often as a BOUNDSHEET leads LibreOffice to it', () => {
    const one: BiffSheet = { cells: [{ row: 0, column: 0, kind: 'number' }, { row: 4, column: 2, kind: 'rk' }] };
    const two: BiffSheet = { cells: [{ row: 1, column: 1, kind: 'boolerr' }] };
    const count = (stream: Buffer) => {
      const counter = new StructureCounter(STRUCTURE_BUDGET);
      countBiffWorkbook(stream, counter);
      return counter.counted;
    };
    expect(count(buildBiff8Stream([one, two]))).toMatchObject({ cells: 3, rows: 3, area: 5 * 3 + 2 * 2 });
    // 1 000 BOUNDSHEETs at the first sheet: LibreOffice makes 1 000 sheets of its cells.
    expect(count(buildBiff8Stream([one, two], ['s'], ([first]) => Array.from({ length: 1000 }, () => first!)))).toMatchObject({ cells: 2000, rows: 2000, area: 15_000 });
    // Offsets at no BOF: LibreOffice reads on from where it is, the next BOF each time (sheet one, then two, then none).
    expect(count(buildBiff8Stream([one, two], ['s'], (o) => o.map(() => 3)))).toMatchObject({ cells: 3, rows: 3 });
    expect(count(buildBiff8Stream([one, two], ['s'], (o) => [...o.map(() => 3), 3]))).toMatchObject({ cells: 3, rows: 3 });
    // An offset at bytes 09 08 inside another record's body (here a NUMBER's value) would be read as a BOF there: refused.
    const hidden = buildBiff8Stream([{ cells: [{ row: 0x0809, column: 0x0010, kind: 'number' }] }]);
    const numberAt = hidden.indexOf(Buffer.from([0x03, 0x02, 14, 0, 0x09, 0x08]));
    const forged = buildBiff8Stream([{ cells: [{ row: 0x0809, column: 0x0010, kind: 'number' }] }], ['s'], () => [numberAt + 4]);
    expect(forged.readUInt16LE(numberAt + 4)).toBe(0x0809);
    expect(() => count(forged)).toThrow(expect.objectContaining({ code: 'INVALID_FILE_FORMAT' }));
  });

  it('counts only cells after FILEPASS (their bodies are encrypted), and BIFF5 Book streams', () => {
    // LibreOffice's password-protected save of datasets.xls: the cell records of the plain file, nothing else.
    expect(assertXlsStructure(readFileSync(path.join(FIXTURES, 'datasets-encrypted.xls')))).toMatchObject({ cells: 6267, rows: 0, area: 0, sharedStrings: 0 });
    const stream = buildBiff8Stream([{ cells: [{ row: 5, column: 5, kind: 'number' }, { row: 9, column: 1, kind: 'rk' }], mulrk: [{ row: 1, column: 1, count: 3 }], merges: [[0, 900, 0, 9]] }]);
    const filepass = Buffer.from([0x2f, 0x00, 0x00, 0x00]);
    const encrypted = Buffer.concat([stream.subarray(0, 20), filepass, stream.subarray(20)]);
    const counter = new StructureCounter(STRUCTURE_BUDGET);
    countBiffWorkbook(encrypted, counter);
    expect(counter.counted).toMatchObject({ cells: 5, rows: 0, area: 0, sharedStrings: 0 });

    const biff5 = buildBiff8Stream([{ cells: [{ row: 2, column: 3, kind: 'label' }, { row: 7, column: 0, kind: 'number' }] }], []);
    for (let at = biff5.indexOf(Buffer.from([0x09, 0x08])); at >= 0; at = biff5.indexOf(Buffer.from([0x09, 0x08]), at + 1)) {
      if (biff5.readUInt16LE(at + 4) === 0x0600) biff5.writeUInt16LE(0x0500, at + 4);
    }
    expect(assertXlsStructure(buildCompoundFile([{ name: 'Book', data: biff5 }]))).toMatchObject({ cells: 2, rows: 2, area: 8 * 4 });
  });

  it('on a damaged .xls (compound file and records) refuses only with 400 INVALID_FILE_FORMAT or the 422', () => {
    const base = fc.sample(workbookArb, { numRuns: 20, seed: SEED + 3 }).map((w) => buildXls(w.sheets, w.strings));
    const codes = new Map<string, number>();
    for (const [i, [changes, cut]] of fc.sample(fc.tuple(fc.array(fc.tuple(fc.nat(), fc.nat({ max: 255 })), { minLength: 1, maxLength: 10 }), fc.nat()), { numRuns: 300, seed: SEED + 4 }).entries()) {
      const data = Buffer.from(base[i % base.length]!);
      // Half the changes in the first sectors (header, FAT, directory), half anywhere.
      for (const [at, value] of changes) data[at % 2 ? at % Math.min(data.length, 2048) : at % data.length] = value;
      const file = cut % 3 ? data : data.subarray(0, 512 + (cut % (data.length - 512)));
      let code = 'counted';
      try {
        assertXlsStructure(file, { ...STRUCTURE_BUDGET, maxSheetCells: 5_000 });
      } catch (err) {
        expect(err).toBeInstanceOf(DomainError);
        code = (err as DomainError).code;
        expect(['INVALID_FILE_FORMAT', 'DOCUMENT_TOO_COMPLEX']).toContain(code);
      }
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
    // The mutations reach both the compound file's refusal and the count.
    expect(codes.get('INVALID_FILE_FORMAT')).toBeGreaterThan(10);
    expect(codes.get('counted')).toBeGreaterThan(10);
  });

  it('ends on any damaged workbook stream, refusing only with the documented errors', () => {
    const base = fc.sample(workbookArb, { numRuns: 30, seed: SEED + 1 });
    const mutation = fc.array(fc.tuple(fc.nat(), fc.nat({ max: 255 })), { minLength: 1, maxLength: 12 });
    for (const [i, [changes, cut]] of fc.sample(fc.tuple(mutation, fc.nat()), { numRuns: 300, seed: SEED + 2 }).entries()) {
      const stream = buildBiff8Stream(base[i % base.length]!.sheets, base[i % base.length]!.strings);
      for (const [at, value] of changes) stream[at % stream.length] = value;
      const data = stream.subarray(0, cut % 2 ? stream.length : cut % stream.length);
      const counter = new StructureCounter({ ...STRUCTURE_BUDGET, maxSheetCells: 5_000 });
      const started = performance.now();
      try {
        countBiffWorkbook(data, counter);
      } catch (err) {
        expect(err).toBeInstanceOf(DomainError);
        // INVALID_FILE_FORMAT: a BOUNDSHEET offset landing on a BOF inside another record.
        expect(['DOCUMENT_TOO_COMPLEX', 'INVALID_FILE_FORMAT']).toContain((err as DomainError).code);
      }
      expect(performance.now() - started).toBeLessThan(1000);
    }
  });
});
