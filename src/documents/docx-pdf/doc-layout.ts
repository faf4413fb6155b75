import { invalidFile } from '../../errors/domain-error.js';
import type { CompoundFile } from '../../inputs/compound-file.js';
import { assertBlipPixels } from './blip-pictures.js';
import { LAYOUT_BUDGET, layoutTooComplex, type LayoutBudget, type TableShape } from './layout-budget.js';

/**
 * Table cells and table nesting of a Word 97–2003 document ([MS-DOC]), the binary analogue of
 * layout-budget.ts's DOCX count, read from the "WordDocument" stream and its table stream ("0Table"
 * or "1Table", as the FIB's fWhichTblStm says):
 *
 * - The text is the piece table's (the CLX's PlcPcd, [MS-DOC] 2.9.38): every story, each piece read
 *   from the WordDocument stream, 8-bit or UTF-16.
 * - Paragraph properties come from the PAPX FKPs the PlcBtePapx points at (2.9.176): one run of
 *   bytes per paragraph, with its grpprl of sprms.
 * - A cell of an outermost table ends with a cell mark (0x07) whose paragraph is not a row end
 *   (sprmPFTtp); a cell of a nested table ends with a paragraph mark whose paragraph has
 *   sprmPFInnerTableCell and not sprmPFInnerTtp (2.4.3, "Overview of Tables").
 * - Nesting is the largest sprmPItap of any paragraph (sprmPFInTable alone is depth 1).
 * - A paragraph's properties moved to the Data stream by sprmPHugePapx are read there.
 *
 * Word 6.0/95 documents (nFib below Word 97's) are not read: the memory watch and the deadline bound them.
 *
 * Not seen (properties Word does not write there, so they bound what Word writes, not what a
 * crafted file can): table properties in paragraph styles or in a piece's Prm (fast-saved files). Every count is a loop over the stream's bytes with a fixed
 * step, bounded by the stream; the text read is bounded by MAX_TEXT_PER_STREAM_BYTE times the stream.
 */
/** nFib of Word 97 (0x00C1, and of every later Word, which writes its own in the FIB's extension); Word 6.0 wrote 0x0065, Word 95 0x0068. */
const FIB_WORD_97 = 0x00c0;
const FLAG_WHICH_TABLE_STREAM = 0x0200;
const FLAG_ENCRYPTED = 0x0100;
/** Index of a field in FibRgFcLcb97 (pairs of fc, lcb). */
const FC_PLCF_BTE_PAPX = 13;
const FC_CLX = 33;
const FKP_BYTES = 512;

const SPRM_P_F_IN_TABLE = 0x2416;
const SPRM_P_F_TTP = 0x2417;
const SPRM_P_F_INNER_TABLE_CELL = 0x244b;
const SPRM_P_F_INNER_TTP = 0x244c;
const SPRM_P_ITAP = 0x6649;
const SPRM_P_DTAP = 0x664a;
const SPRM_P_HUGE_PAPX = 0x6646;
const SPRM_T_DEF_TABLE = 0xd608;
const SPRM_P_CHG_TABS = 0xc615;

/** Pieces may share bytes; Word never writes that, so a text this much longer than its stream is a damaged (or crafted) file. */
const MAX_TEXT_PER_STREAM_BYTE = 4;

const damaged = (why: string) => invalidFile(`The Word document is damaged (${why}); save it again and resend it.`);

/**
 * Which table stream the document uses; undefined when it is not read: encrypted (LibreOffice asks
 * for the password and fails), or a Word 6.0/95 (or older) document by its nFib, whose FIB and
 * properties have another layout, with no table stream.
 */
export function docTableStreamName(wordDocument: Buffer): '0Table' | '1Table' | undefined {
  if (wordDocument.length < 34) throw damaged('its File Information Block is missing');
  if (wordDocument.readUInt16LE(2) < FIB_WORD_97) return undefined;
  const flags = wordDocument.readUInt16LE(0x0a);
  if (flags & FLAG_ENCRYPTED) return undefined;
  return flags & FLAG_WHICH_TABLE_STREAM ? '1Table' : '0Table';
}

/** The (fc, lcb) pair at an index of FibRgFcLcb, or undefined past the FIB's own count. */
function fcLcb(word: Buffer, index: number): { fc: number; lcb: number } | undefined {
  if (word.length < 34) throw damaged('its File Information Block is missing');
  const csw = word.readUInt16LE(32);
  const cslwAt = 34 + csw * 2;
  if (cslwAt + 2 > word.length) throw damaged('its File Information Block is cut short');
  const countAt = cslwAt + 2 + word.readUInt16LE(cslwAt) * 4;
  if (countAt + 2 > word.length) throw damaged('its File Information Block is cut short');
  if (index >= word.readUInt16LE(countAt)) return undefined;
  const at = countAt + 2 + index * 8;
  if (at + 8 > word.length) throw damaged('its File Information Block is cut short');
  return { fc: word.readUInt32LE(at), lcb: word.readUInt32LE(at + 4) };
}

interface ParagraphProperties {
  /** Ends a row of an outermost table. */
  rowEnd: boolean;
  /** Ends a cell of a nested table. */
  innerCell: boolean;
  innerRowEnd: boolean;
  depth: number;
}

/** A paragraph's bytes in the WordDocument stream, [start, end), and its properties. */
interface ParagraphRun extends ParagraphProperties {
  start: number;
  end: number;
}

/** Size of a sprm's operand at `at` (after the two sprm bytes), per its spra; undefined when it cannot be read. */
function operandSize(bytes: Buffer, sprm: number, at: number, end: number): number | undefined {
  switch (sprm >> 13) {
    case 0:
    case 1:
      return 1;
    case 2:
    case 4:
    case 5:
      return 2;
    case 3:
      return 4;
    case 7:
      return 3;
    default: {
      if (sprm === SPRM_T_DEF_TABLE) return at + 2 <= end ? bytes.readUInt16LE(at) + 1 : undefined;
      if (at + 1 > end) return undefined;
      const cb = bytes[at]!;
      if (sprm === SPRM_P_CHG_TABS && cb === 255) {
        // PChgTabsOperand with cb 255: deleted tab stops (4 bytes each) then added ones (3 bytes each).
        const deleted = bytes[at + 1];
        const added = deleted === undefined ? undefined : bytes[at + 2 + deleted * 4];
        return added === undefined ? undefined : 3 + deleted! * 4 + added * 3;
      }
      return 1 + cb;
    }
  }
}

interface TableSprms {
  inTable: boolean;
  itap?: number;
  dtap: number;
}

/**
 * The table properties of a paragraph's grpprl (a run of Prl: sprm + operand), stopping at the first
 * that runs past the end. sprmPHugePapx moves the rest of the grpprl into the Data stream (a PrcData:
 * 16-bit size, then the grpprl), where Word and LibreOffice put a row end's long table definition.
 */
function tableProperties(bytes: Buffer, start: number, end: number, data: Buffer | undefined): ParagraphProperties {
  const props: ParagraphProperties = { rowEnd: false, innerCell: false, innerRowEnd: false, depth: 0 };
  const sprms: TableSprms = { inTable: false, dtap: 0 };
  readTableSprms(bytes, start, end, props, sprms, data);
  props.depth = Math.max(0, (sprms.itap ?? (sprms.inTable ? 1 : 0)) + sprms.dtap);
  return props;
}

function readTableSprms(bytes: Buffer, start: number, end: number, props: ParagraphProperties, sprms: TableSprms, data: Buffer | undefined): void {
  for (let at = start; at + 2 <= end; ) {
    const sprm = bytes.readUInt16LE(at);
    const size = operandSize(bytes, sprm, at + 2, end);
    if (size === undefined || at + 2 + size > end) break;
    const operand = at + 2;
    if (sprm === SPRM_P_F_IN_TABLE) sprms.inTable = bytes[operand] !== 0;
    else if (sprm === SPRM_P_F_TTP) props.rowEnd = bytes[operand] !== 0;
    else if (sprm === SPRM_P_F_INNER_TABLE_CELL) props.innerCell = bytes[operand] !== 0;
    else if (sprm === SPRM_P_F_INNER_TTP) props.innerRowEnd = bytes[operand] !== 0;
    else if (sprm === SPRM_P_ITAP) sprms.itap = Math.max(0, bytes.readInt32LE(operand));
    else if (sprm === SPRM_P_DTAP) sprms.dtap += bytes.readInt32LE(operand);
    else if (sprm === SPRM_P_HUGE_PAPX && data && bytes !== data) {
      // Followed once: a grpprl in the Data stream is not read for a further sprmPHugePapx.
      const from = bytes.readUInt32LE(operand);
      if (from + 2 > data.length) throw damaged('a paragraph’s properties lie outside its Data stream');
      const to = from + 2 + data.readUInt16LE(from);
      if (to > data.length) throw damaged('a paragraph’s properties lie outside its Data stream');
      readTableSprms(data, from + 2, to, props, sprms, data);
    }
    at = operand + size;
  }
}

/** Paragraph runs of every PAPX FKP the PlcBtePapx names, sorted by start. */
function paragraphRuns(word: Buffer, table: Buffer, data: Buffer | undefined): ParagraphRun[] {
  const bte = fcLcb(word, FC_PLCF_BTE_PAPX);
  if (!bte || bte.lcb === 0) return [];
  if (bte.fc + bte.lcb > table.length || bte.lcb < 4 || (bte.lcb - 4) % 8 !== 0) throw damaged('its paragraph property index is out of bounds');
  const pages = (bte.lcb - 4) / 8;
  const runs: ParagraphRun[] = [];
  for (let i = 0; i < pages; i++) {
    const page = (table.readUInt32LE(bte.fc + (pages + 1) * 4 + i * 4) & 0x3fffff) * FKP_BYTES;
    if (page + FKP_BYTES > word.length) throw damaged('a paragraph property page lies outside the document');
    const crun = word[page + FKP_BYTES - 1]!;
    if ((crun + 1) * 4 + crun * 13 > FKP_BYTES - 1) throw damaged('a paragraph property page holds too many runs');
    for (let r = 0; r < crun; r++) {
      const start = word.readUInt32LE(page + r * 4);
      const end = word.readUInt32LE(page + (r + 1) * 4);
      const offset = word[page + (crun + 1) * 4 + r * 13]! * 2;
      let props: ParagraphProperties = { rowEnd: false, innerCell: false, innerRowEnd: false, depth: 0 };
      if (offset !== 0) {
        // PapxInFkp: cb; if 0, cb' follows and the grpprl (istd first) is 2·cb' bytes, else 2·cb − 1.
        const cb = word[page + offset]!;
        const grpprlAt = page + offset + (cb === 0 ? 2 : 1);
        const length = cb === 0 ? 2 * (word[page + offset + 1] ?? 0) : 2 * cb - 1;
        const grpprlEnd = Math.min(grpprlAt + length, page + FKP_BYTES - 1);
        props = tableProperties(word, grpprlAt + 2, grpprlEnd, data);
      }
      runs.push({ start, end, ...props });
    }
  }
  return runs.sort((a, b) => a.start - b.start);
}

/** The run holding the byte at `fc` (runs sorted by start), or undefined. */
function runAt(runs: readonly ParagraphRun[], fc: number): ParagraphRun | undefined {
  let low = 0;
  let high = runs.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const run = runs[middle]!;
    if (fc < run.start) high = middle - 1;
    else if (fc >= run.end) low = middle + 1;
    else return run;
  }
  return undefined;
}

interface Piece {
  /** Byte offset of the piece's text in the WordDocument stream. */
  start: number;
  chars: number;
  /** 1 byte a character (8-bit) or 2 (UTF-16). */
  width: 1 | 2;
}

/** The pieces of the CLX ([MS-DOC] 2.9.38): Prc entries (0x01) are stepped over, then the Pcdt (0x02). */
function pieces(word: Buffer, table: Buffer): Piece[] {
  const clx = fcLcb(word, FC_CLX);
  if (!clx || clx.lcb === 0) return [];
  const end = clx.fc + clx.lcb;
  if (end > table.length) throw damaged('its piece table lies outside the table stream');
  let at = clx.fc;
  while (at < end && table[at] === 0x01) {
    if (at + 3 > end) throw damaged('its piece table is cut short');
    at += 3 + table.readUInt16LE(at + 1);
  }
  if (at + 5 > end || table[at] !== 0x02) throw damaged('its piece table is missing');
  const plcBytes = table.readUInt32LE(at + 1);
  const plc = at + 5;
  if (plc + plcBytes > end || plcBytes < 4 || (plcBytes - 4) % 12 !== 0) throw damaged('its piece table is out of bounds');
  const count = (plcBytes - 4) / 12;
  const result: Piece[] = [];
  let textBytes = 0;
  for (let i = 0; i < count; i++) {
    const from = table.readUInt32LE(plc + i * 4);
    const to = table.readUInt32LE(plc + (i + 1) * 4);
    if (to < from) throw damaged('its piece table runs backwards');
    const fc = table.readUInt32LE(plc + (count + 1) * 4 + i * 8 + 2);
    const width = fc & 0x40000000 ? 1 : 2;
    const start = width === 1 ? (fc & 0x3fffffff) >>> 1 : fc;
    const chars = to - from;
    if (start + chars * width > word.length) throw damaged('a piece of its text lies outside the document');
    textBytes += chars * width;
    if (textBytes > MAX_TEXT_PER_STREAM_BYTE * word.length) throw damaged('its pieces of text overlap');
    result.push({ start, chars, width });
  }
  return result;
}

/**
 * Table nesting and cells of a DOC's text; throws the 422 (layout-budget.ts's, naming the limit) as
 * soon as one is passed, 400 INVALID_FILE when the FIB, CLX or FKPs point outside their streams.
 */
export function measureDocTables(word: Buffer, table: Buffer, data: Buffer | undefined, budget: LayoutBudget = LAYOUT_BUDGET): TableShape {
  const counted: TableShape = { nesting: 0, cells: 0 };
  const runs = paragraphRuns(word, table, data);
  for (const run of runs) {
    if (run.depth > counted.nesting) counted.nesting = run.depth;
  }
  if (counted.nesting > budget.maxTableNesting) throw layoutTooComplex('maxTableNesting', budget);
  for (const piece of pieces(word, table)) {
    const text = word.subarray(piece.start, piece.start + piece.chars * piece.width);
    for (const mark of [0x07, 0x0d]) {
      for (let at = text.indexOf(mark); at !== -1; at = text.indexOf(mark, at + 1)) {
        // UTF-16: only a code unit's first byte, with a zero second byte, is the mark.
        if (piece.width === 2 && (at % 2 !== 0 || text[at + 1] !== 0)) continue;
        const run = runAt(runs, piece.start + at);
        const cell = mark === 0x07 ? !run?.rowEnd : !!run?.innerCell && !run.innerRowEnd;
        if (cell && ++counted.cells > budget.maxTableCells) throw layoutTooComplex('maxTableCells', budget);
      }
    }
  }
  return counted;
}

/**
 * Checks a DOC or DOT against the layout budget: its tables (measureDocTables) and the raster
 * pictures of its WordDocument, table and Data streams. An encrypted document is not read (its
 * table stream is ciphertext; LibreOffice cannot open it without the password either).
 */
export function assertDocBudget(file: CompoundFile, budget: LayoutBudget = LAYOUT_BUDGET): TableShape | undefined {
  const word = file.stream('WordDocument');
  if (!word) throw damaged('it has no WordDocument stream');
  const tableName = docTableStreamName(word);
  if (!tableName) return undefined;
  const table = file.stream(tableName);
  if (!table) throw damaged(`its FIB names a ${tableName} stream it does not have`);
  const data = file.stream('Data');
  const counted = measureDocTables(word, table, data, budget);
  for (const stream of [word, table, data]) assertBlipPixels(stream, budget);
  return counted;
}
