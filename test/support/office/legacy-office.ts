import { readFileSync } from 'node:fs';
import { DOMParser } from '@xmldom/xmldom';
import PizZip from 'pizzip';
import { tableShape } from '../table-shape.js';

/**
 * Builders of binary Office 97–2003 streams for tests: PowerPoint record streams ([MS-PPT]) and Word
 * streams ([MS-DOC]: FIB, piece table, PAPX FKPs); compound-file-builder.ts puts them in a file.
 * Each builder returns what it built next to the bytes, so a test compares a reader's counts with
 * the structure it was given.
 */

// ---------------------------------------------------------------- PowerPoint

/** One record: an atom (bytes) or a container (child records, recVer 0xF). */
export const pptAtom = (type: number, body: Buffer = Buffer.alloc(0), instance = 0): Buffer => {
  const header = Buffer.alloc(8);
  header.writeUInt16LE((instance << 4) & 0xfff0, 0);
  header.writeUInt16LE(type, 2);
  header.writeUInt32LE(body.length, 4);
  return Buffer.concat([header, body]);
};
export const pptContainer = (type: number, children: Buffer[], instance = 0): Buffer => {
  const record = pptAtom(type, Buffer.concat(children), instance);
  record.writeUInt16LE(record.readUInt16LE(0) | 0x0f, 0);
  return record;
};

/** A shape tree: a leaf is one shape, an array a group of shapes (itself a shape too). */
export type ShapeTree = 'shape' | ShapeTree[];

/** A shape: OfficeArtSpContainer with its OfficeArtFSP (shape id and flags). */
const spContainer = () => pptContainer(0xf004, [pptAtom(0xf00a, Buffer.alloc(8), 1)]);
const shapeRecords = (tree: ShapeTree): Buffer => (tree === 'shape' ? spContainer() : pptContainer(0xf003, [spContainer(), ...tree.map(shapeRecords)]));
export const shapeCount = (tree: ShapeTree): number => (tree === 'shape' ? 1 : 1 + tree.reduce((n, t) => n + shapeCount(t), 0));

/** A page's drawing: PPDrawing { DgContainer { SpgrContainer { patriarch, shapes… } } }. */
const drawing = (shapes: ShapeTree[]) =>
  pptContainer(0x040c, [pptContainer(0xf002, [pptAtom(0xf008, Buffer.alloc(8)), pptContainer(0xf003, [spContainer(), ...shapes.map(shapeRecords)])])]);

export interface PptSpec {
  slides: ShapeTree[][];
  masters: ShapeTree[][];
  notes: ShapeTree[][];
  /** A notes master page, named by the DocumentAtom (not by a slide list). */
  notesMaster?: ShapeTree[];
}

/**
 * A "PowerPoint Document" stream: the DocumentContainer (persist id 1) with its three
 * SlideListWithText (masters 1, slides 0, notes 2) of SlidePersistAtoms naming each page's persist
 * id, then one container per page, a junk atom (bytes no walk should read as records), the persist
 * directory giving each object's offset, and the UserEditAtom naming it and the document; and the
 * "Current User" stream pointing at that edit. Shapes: the given ones plus one patriarch per page.
 */
export function buildPptStream(spec: PptSpec): { stream: Buffer; currentUser: Buffer; currentEdit: number; slides: number; shapes: number } {
  const persist = (id: number) => {
    const body = Buffer.alloc(20);
    body.writeUInt32LE(id, 0);
    return pptAtom(0x03f3, body);
  };
  let id = 2;
  const lists = ([[1, spec.masters], [0, spec.slides], [2, spec.notes]] as const).map(([instance, pages]) =>
    pptContainer(0x0ff0, pages.flatMap(() => [persist(id++), pptAtom(0x0f9f, Buffer.alloc(4))]), instance),
  );
  const documentAtom = Buffer.alloc(40);
  if (spec.notesMaster) documentAtom.writeUInt32LE(id, 24); // notesMasterPersistIdRef: the last page
  const document = pptContainer(0x03e8, [pptAtom(0x03e9, documentAtom), ...lists]);
  const pages = [
    ...spec.masters.map((s) => pptContainer(0x03f8, [pptAtom(0x03ef, Buffer.alloc(24)), drawing(s)])),
    ...spec.slides.map((s) => pptContainer(0x03ee, [pptAtom(0x03ef, Buffer.alloc(24)), drawing(s)])),
    ...spec.notes.map((s) => pptContainer(0x03f0, [pptAtom(0x03f1, Buffer.alloc(8)), drawing(s)])),
    ...(spec.notesMaster ? [pptContainer(0x03f0, [pptAtom(0x03f1, Buffer.alloc(8)), drawing(spec.notesMaster)])] : []),
  ];
  const offsets = [0];
  let at = document.length;
  for (const page of pages) {
    offsets.push(at);
    at += page.length;
  }
  // Junk between objects, as fast saves leave: a header whose length runs past the stream.
  const junk = Buffer.from([0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0x0f, 0x01, 0x02]);
  at += junk.length;
  const directory = Buffer.alloc(4 + 4 * offsets.length);
  directory.writeUInt32LE(1 | (offsets.length << 20), 0);
  offsets.forEach((offset, i) => directory.writeUInt32LE(offset, 4 + 4 * i));
  const directoryAt = at;
  const directoryAtom = pptAtom(0x1772, directory);
  const currentEdit = directoryAt + directoryAtom.length;
  const edit = Buffer.alloc(28);
  edit.writeUInt32LE(0, 8); // offsetLastEdit: none
  edit.writeUInt32LE(directoryAt, 12);
  edit.writeUInt32LE(1, 16); // docPersistIdRef
  const stream = Buffer.concat([document, ...pages, junk, directoryAtom, pptAtom(0x0ff5, edit)]);
  const currentUser = Buffer.alloc(8 + 20);
  currentUser.writeUInt16LE(0x0ff6, 2);
  currentUser.writeUInt32LE(20, 4);
  currentUser.writeUInt32LE(20, 8);
  currentUser.writeUInt32LE(0xe391c05f, 12);
  currentUser.writeUInt32LE(currentEdit, 16);
  const all = [...spec.masters, ...spec.slides, ...spec.notes, ...(spec.notesMaster ? [spec.notesMaster] : [])];
  return { stream, currentUser, currentEdit, slides: spec.slides.length, shapes: all.reduce((n, page) => n + 1 + page.reduce((m, t) => m + shapeCount(t), 0), 0) };
}

// ---------------------------------------------------------------- Word

/** Body content: a paragraph, or a table of rows of cells, each cell holding blocks. */
export type DocBlock = 'p' | { rows: DocBlock[][][] };

interface Paragraph {
  mark: 0x07 | 0x0d;
  sprms: Buffer[];
  /** Put the sprms in the Data stream behind sprmPHugePapx. */
  huge: boolean;
}

const sprm = (code: number, operand: Buffer) => {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(code, 0);
  return Buffer.concat([b, operand]);
};
const byte = (v: number) => Buffer.from([v]);
const int32 = (v: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32LE(v, 0);
  return b;
};
/** A sprmTDefTable with `cells` cells (its operand's 16-bit size is one more than the rest). */
const tDefTable = (cells: number) => {
  const rest = Buffer.concat([byte(cells), Buffer.alloc((cells + 1) * 2), Buffer.alloc(cells * 20)]);
  const size = Buffer.alloc(2);
  size.writeUInt16LE(rest.length + 1, 0);
  return sprm(0xd608, Buffer.concat([size, rest]));
};

function paragraphs(blocks: DocBlock[], depth: number, out: Paragraph[], random: () => number): { cells: number; nesting: number } {
  let cells = 0;
  let nesting = 0;
  const inTable = (d: number) => (d === 0 ? [] : d === 1 && random() < 0.5 ? [sprm(0x2416, byte(1))] : [sprm(0x2416, byte(1)), sprm(0x6649, int32(d))]);
  for (const block of blocks) {
    if (block === 'p') {
      out.push({ mark: 0x0d, sprms: inTable(depth), huge: false });
      continue;
    }
    const level = depth + 1;
    nesting = Math.max(nesting, level);
    for (const row of block.rows) {
      for (const cell of row) {
        const inner = paragraphs(cell, level, out, random);
        cells += inner.cells + 1;
        nesting = Math.max(nesting, inner.nesting);
        out.push(level === 1 ? { mark: 0x07, sprms: inTable(1), huge: false } : { mark: 0x0d, sprms: [...inTable(level), sprm(0x244b, byte(1))], huge: false });
      }
      const rowEnd = level === 1 ? [sprm(0x2417, byte(1))] : [sprm(0x244b, byte(1)), sprm(0x244c, byte(1))];
      out.push({ mark: level === 1 ? 0x07 : 0x0d, sprms: [...inTable(level), tDefTable(row.length), ...rowEnd], huge: random() < 0.5 });
    }
  }
  return { cells, nesting };
}

export interface DocStreams {
  word: Buffer;
  table: Buffer;
  data: Buffer;
  cells: number;
  nesting: number;
}

const FIB_BYTES = 898;
const TEXT_AT = 1024;

/**
 * A Word 97 document's streams holding `blocks`: each paragraph one letter and its mark; the text
 * split into pieces (some 8-bit, some UTF-16) stored in shuffled order; one PAPX per paragraph in
 * 512-byte FKPs; row ends (with a sprmTDefTable) sometimes behind sprmPHugePapx in the Data stream.
 * The table stream is "1Table".
 */
export function buildDocStreams(blocks: DocBlock[], seed = 1): DocStreams {
  let state = seed >>> 0 || 1;
  const random = () => ((state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const paras: Paragraph[] = [];
  const { cells, nesting } = paragraphs(blocks, 0, paras, random);
  paras.push({ mark: 0x0d, sprms: [], huge: false });

  // Pieces: runs of whole paragraphs, each 8-bit or UTF-16, stored in a shuffled order.
  const pieces: { first: number; count: number; width: 1 | 2 }[] = [];
  for (let i = 0; i < paras.length; ) {
    const count = Math.min(paras.length - i, 1 + Math.floor(random() * 6));
    pieces.push({ first: i, count, width: random() < 0.5 ? 1 : 2 });
    i += count;
  }
  const stored = pieces.map((_, i) => i).sort(() => random() - 0.5);
  const texts: Buffer[] = [];
  const pieceFc = new Map<number, number>();
  /** Byte range of each paragraph in the stream, in stream order. */
  const runs: { start: number; end: number; para: Paragraph }[] = [];
  let at = TEXT_AT;
  for (const index of stored) {
    const piece = pieces[index]!;
    pieceFc.set(index, at);
    for (let p = piece.first; p < piece.first + piece.count; p++) {
      const para = paras[p]!;
      const chars = Buffer.from(`x${String.fromCharCode(para.mark)}`, piece.width === 1 ? 'latin1' : 'utf16le');
      runs.push({ start: at, end: at + chars.length, para });
      texts.push(chars);
      at += chars.length;
    }
  }
  const textEnd = at;

  // Data stream: PrcData (16-bit size, grpprl) for the huge PAPXs.
  const dataParts: Buffer[] = [Buffer.alloc(16)];
  let dataAt = 16;
  const grpprlOf = (para: Paragraph): Buffer => {
    const grpprl = Buffer.concat(para.sprms);
    if (!para.huge && grpprl.length < 200) return grpprl;
    const size = Buffer.alloc(2);
    size.writeUInt16LE(grpprl.length, 0);
    dataParts.push(size, grpprl);
    const offset = dataAt;
    dataAt += 2 + grpprl.length;
    return sprm(0x6646, int32(offset));
  };

  // FKPs: from the first 512-byte page after the text, as many runs a page as fit.
  const firstPage = Math.ceil(textEnd / 512);
  const pages: Buffer[] = [];
  const bte: { fc: number; page: number }[] = [];
  for (let r = 0; r < runs.length; ) {
    const page = Buffer.alloc(512);
    let papxAt = 511;
    let crun = 0;
    const entries: { start: number; end: number; offset: number }[] = [];
    for (; r < runs.length; r++) {
      const grpprl = grpprlOf(runs[r]!.para);
      const plain = runs[r]!.para.sprms.length === 0 && random() < 0.5;
      // PapxInFkp with cb = 0: cb' then istd + grpprl in 2·cb' bytes (padded to even).
      const body = Buffer.concat([Buffer.alloc(2), grpprl, Buffer.alloc(grpprl.length % 2)]);
      const size = plain ? 0 : 2 + body.length;
      const papxStart = (papxAt - size) & ~1;
      if ((crun + 2) * 4 + (crun + 1) * 13 > papxStart) break;
      if (!plain) {
        page[papxStart] = 0;
        page[papxStart + 1] = body.length / 2;
        body.copy(page, papxStart + 2);
        papxAt = papxStart;
      }
      entries.push({ start: runs[r]!.start, end: runs[r]!.end, offset: plain ? 0 : papxStart / 2 });
      crun++;
    }
    if (crun === 0) throw new Error('a paragraph property too large for one FKP');
    entries.forEach((e, i) => page.writeUInt32LE(e.start, i * 4));
    page.writeUInt32LE(entries[crun - 1]!.end, crun * 4);
    entries.forEach((e, i) => (page[(crun + 1) * 4 + i * 13] = e.offset));
    page[511] = crun;
    bte.push({ fc: entries[0]!.start, page: firstPage + pages.length });
    pages.push(page);
  }

  // Table stream: the CLX (a Prc, then the Pcdt) and the PlcBtePapx.
  const cps = [0];
  for (const piece of pieces) cps.push(cps.at(-1)! + piece.count * 2);
  const plcPcd = Buffer.alloc(cps.length * 4 + pieces.length * 8);
  cps.forEach((cp, i) => plcPcd.writeUInt32LE(cp, i * 4));
  pieces.forEach((piece, i) => {
    const fc = pieceFc.get(i)!;
    plcPcd.writeUInt32LE(piece.width === 1 ? (fc * 2) | 0x40000000 : fc, cps.length * 4 + i * 8 + 2);
  });
  const prc = Buffer.concat([byte(0x01), Buffer.from([3, 0]), sprm(0x2416, byte(0))]);
  const pcdtHeader = Buffer.alloc(5);
  pcdtHeader[0] = 0x02;
  pcdtHeader.writeUInt32LE(plcPcd.length, 1);
  const clx = Buffer.concat([prc, pcdtHeader, plcPcd]);
  const plcBte = Buffer.alloc((bte.length + 1) * 4 + bte.length * 4);
  bte.forEach((b, i) => plcBte.writeUInt32LE(b.fc, i * 4));
  plcBte.writeUInt32LE(textEnd, bte.length * 4);
  bte.forEach((b, i) => plcBte.writeUInt32LE(b.page, (bte.length + 1) * 4 + i * 4));
  const tableBody = Buffer.concat([Buffer.alloc(8), clx, plcBte]);
  const table = tableBody;

  // FIB: FibBase, 14 words, 22 longs (ccpText), 93 fc/lcb pairs (PlcfBtePapx 13, Clx 33).
  const word = Buffer.alloc((firstPage + pages.length) * 512);
  word.writeUInt16LE(0xa5ec, 0);
  word.writeUInt16LE(0x00c1, 2);
  word.writeUInt16LE(0x0200, 0x0a); // fWhichTblStm: 1Table
  word.writeUInt16LE(14, 32);
  word.writeUInt16LE(22, 62);
  word.writeUInt32LE(cps.at(-1)!, 64 + 3 * 4);
  word.writeUInt16LE(93, 152);
  const pair = (index: number, fc: number, lcb: number) => {
    word.writeUInt32LE(fc, 154 + index * 8);
    word.writeUInt32LE(lcb, 154 + index * 8 + 4);
  };
  pair(33, 8, clx.length);
  pair(13, 8 + clx.length, plcBte.length);
  if (154 + 93 * 8 + 2 > FIB_BYTES + 2 || FIB_BYTES > TEXT_AT) throw new Error('FIB layout');
  Buffer.concat(texts).copy(word, TEXT_AT);
  pages.forEach((page, i) => page.copy(word, (firstPage + i) * 512));
  return { word, table, data: Buffer.concat(dataParts), cells, nesting };
}

// ---------------------------------------------------------------- LibreOffice's view

const ODF_TABLE_NS = 'urn:oasis:names:tc:opendocument:xmlns:table:1.0';

/**
 * Cells and nesting of the tables of an ODT's content and styles (headers and footers), by a DOM
 * walk: the independent view of a DOC's tables (LibreOffice's ODT of it). Cells are table:table-cell:
 * the covered-table-cells ODF adds to make a grid of rows of different widths are no cells of Writer's.
 */
export function odtTables(file: string): { cells: number; nesting: number } {
  const zip = new PizZip(readFileSync(file));
  const roots = ['content.xml', 'styles.xml'].map((part) => new DOMParser().parseFromString(zip.file(part)!.asText(), 'text/xml'));
  return tableShape(roots, (e) => e.localName === 'table' && e.namespaceURI === ODF_TABLE_NS, (e) => e.localName === 'table-cell');
}
