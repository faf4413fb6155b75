import { invalidFile } from '../../errors/domain-error.js';
import type { CompoundFile } from '../../inputs/compound-file.js';
import { assertBlipPixels } from './blip-pictures.js';
import { LAYOUT_BUDGET, type LayoutBudget } from './layout-budget.js';
import { STRUCTURE_BUDGET, StructureCounter, type StructureBudget, type StructureCount } from './structure-budget.js';

/**
 * Slides and shapes of a PowerPoint 97–2003 presentation, counted on the record tree of its
 * "PowerPoint Document" stream ([MS-PPT] 2.3.1): every record is an 8-byte header (recVer and
 * recInstance in the first 16 bits, recType, recLen) and a body of recLen bytes; a body whose
 * recVer is 0xF is a container of further records. The walk steps from header to header by
 * 8 + recLen, each child bounded by its parent (progress by construction), at most MAX_DEPTH
 * containers deep.
 *
 * - Slides: SlidePersistAtoms (0x03F3) in a SlideListWithText (0x0FF0) of instance 0, the list
 *   LibreOffice's importer makes one page of each entry of (masters are instance 1, notes 2); every
 *   such list in the stream is counted, old ones a fast save left behind included (an upper bound).
 * - Shapes: OfficeArtSpContainers (0xF004) anywhere in the stream: slides, masters, notes, groups.
 *
 * LibreOffice finds slides, masters and notes through the persist directories (PersistDirectoryAtom
 * 0x1772: absolute offsets into the stream), not by walking the tree, so a slide could hide inside
 * an atom's body the walk steps over; every offset a persist directory gives must therefore be the
 * start of a record the walk has read, else the file is refused as damaged.
 */
const MAX_DEPTH = 64;
const HEADER = 8;

const RT_SLIDE_LIST_WITH_TEXT = 0x0ff0;
const RT_SLIDE_PERSIST_ATOM = 0x03f3;
const RT_PERSIST_DIRECTORY_ATOM = 0x1772;
const RT_OFFICE_ART_SP_CONTAINER = 0xf004;
const SLIDES_INSTANCE = 0;

const damaged = (why: string) => invalidFile(`The PowerPoint presentation is damaged (${why}); save it again and resend it.`);

/** Counts a "PowerPoint Document" stream; throws the 422 as soon as a limit is passed, 400 INVALID_FILE on an inconsistent record tree. */
export function countPptRecords(stream: Buffer, budget: StructureBudget = STRUCTURE_BUDGET): StructureCount {
  const counter = new StructureCounter(budget);
  /** One bit per byte of the stream: a record starts there. */
  const recordStarts = new Uint8Array((stream.length >> 3) + 1);
  const persistOffsets: number[] = [];
  /** Open containers: where each ends, and whether it is the slides' SlideListWithText. */
  const open: { end: number; slideList: boolean }[] = [];
  let at = 0;
  let end = stream.length;
  for (;;) {
    while (at === end && open.length > 0) {
      const closed = open.pop()!;
      at = closed.end;
      end = open.length > 0 ? open[open.length - 1]!.end : stream.length;
    }
    if (at === end) break;
    if (at + HEADER > end) throw damaged(`a record header at byte ${at} runs past its container`);
    const verInstance = stream.readUInt16LE(at);
    const type = stream.readUInt16LE(at + 2);
    const length = stream.readUInt32LE(at + 4);
    const bodyEnd = at + HEADER + length;
    if (bodyEnd > end) throw damaged(`the record at byte ${at} runs past its container`);
    recordStarts[at >> 3] = recordStarts[at >> 3]! | (1 << (at & 7));
    if (type === RT_SLIDE_PERSIST_ATOM && open.at(-1)?.slideList) counter.add('slides', 1);
    else if (type === RT_OFFICE_ART_SP_CONTAINER) counter.add('shapes', 1);
    else if (type === RT_PERSIST_DIRECTORY_ATOM) readPersistDirectory(stream, at + HEADER, bodyEnd, persistOffsets);
    if ((verInstance & 0x0f) === 0x0f) {
      if (open.length === MAX_DEPTH) throw damaged(`records nest more than ${MAX_DEPTH} levels deep`);
      open.push({ end: bodyEnd, slideList: type === RT_SLIDE_LIST_WITH_TEXT && verInstance >> 4 === SLIDES_INSTANCE });
      at += HEADER;
      end = bodyEnd;
    } else at = bodyEnd;
  }
  for (const offset of persistOffsets) {
    if (offset < stream.length && !(recordStarts[offset >> 3]! & (1 << (offset & 7)))) throw damaged(`a persist directory points at byte ${offset}, inside a record`);
  }
  return counter.counted;
}

/**
 * PersistDirectoryEntries ([MS-PPT] 2.3.6): a 32-bit word (persistId in the low 20 bits, cPersist in
 * the high 12) followed by cPersist 32-bit stream offsets, until the atom's end.
 */
function readPersistDirectory(stream: Buffer, start: number, end: number, offsets: number[]): void {
  for (let at = start; at + 4 <= end; ) {
    const count = stream.readUInt32LE(at) >>> 20;
    at += 4;
    for (let i = 0; i < count; i++, at += 4) {
      if (at + 4 > end) throw damaged('a persist directory entry runs past its atom');
      offsets.push(stream.readUInt32LE(at));
    }
  }
}

/** CurrentUserAtom.headerToken of an encrypted presentation ([MS-PPT] 2.3.2). */
const ENCRYPTED_TOKEN = 0xf3d1c4df;

/**
 * Counts a PPT's "PowerPoint Document" stream against the structure budget, and refuses a raster
 * picture of its Pictures stream past the layout budget's maxPicturePixels (as for a PPTX). An
 * encrypted presentation (its "Current User" stream says so) is not read: its records are
 * ciphertext, and LibreOffice cannot open it without the password either.
 */
export function assertPptBudget(file: CompoundFile, budget: StructureBudget = STRUCTURE_BUDGET, layout: LayoutBudget = LAYOUT_BUDGET): StructureCount | undefined {
  const currentUser = file.stream('Current User');
  if (currentUser && currentUser.length >= 16 && currentUser.readUInt32LE(12) === ENCRYPTED_TOKEN) return undefined;
  const stream = file.stream('PowerPoint Document');
  if (!stream) throw damaged('it has no PowerPoint Document stream');
  const counted = countPptRecords(stream, budget);
  assertBlipPixels(file.stream('Pictures'), layout);
  return counted;
}
