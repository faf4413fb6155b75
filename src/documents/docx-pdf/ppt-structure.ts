import { invalidFile } from '../../errors/domain-error.js';
import type { CompoundFile } from '../../inputs/compound-file.js';
import { assertBlipPixels } from './blip-pictures.js';
import { LAYOUT_BUDGET, type LayoutBudget } from './layout-budget.js';
import { STRUCTURE_BUDGET, StructureCounter, type StructureBudget, type StructureCount } from './structure-budget.js';

/**
 * Slides and shapes of a PowerPoint 97–2003 presentation, counted on its "PowerPoint Document"
 * stream ([MS-PPT]) the way LibreOffice's importer reaches them: the "Current User" stream gives the
 * offset of the last UserEditAtom; the chain of UserEditAtoms (offsetLastEdit) gives the persist
 * directories (persist id → stream offset, the newest edit winning) and the DocumentContainer;
 * its SlideListWithText records (instance 0 slides, 1 masters, 2 notes) list the pages by persist
 * id, and its DocumentAtom the notes master and handout master. Slides: the entries of the slides'
 * list (LibreOffice makes a page of each). Shapes: the OfficeArtSpContainers (0xF004) of every page
 * named so, a page named twice counted twice (each page object is walked once).
 *
 * A record is an 8-byte header (recVer and recInstance, recType, recLen) and a body of recLen bytes,
 * records inside it when recVer is 0xF. Each walk steps from header to header by 8 + recLen within
 * the object it walks (progress by construction), at most MAX_DEPTH containers deep. Real files
 * have records whose length runs past their container (10 of Apache POI's 111 test PPTs, all of
 * which LibreOffice converts), so such a record is read up to its container's end, not refused.
 * Without a usable Current User stream or edit chain (LibreOffice then searches the stream), every
 * record of the stream is walked in order instead: every slide list entry and shape of it is counted,
 * old versions a fast save left behind included (an upper bound). PowerPoint 95 files (another
 * record format, which LibreOffice also reads) count 0 slides and shapes: not bounded here.
 */
const MAX_DEPTH = 64;
const HEADER = 8;

const RT_DOCUMENT = 0x03e8;
const RT_DOCUMENT_ATOM = 0x03e9;
const RT_SLIDE_LIST_WITH_TEXT = 0x0ff0;
const RT_SLIDE_PERSIST_ATOM = 0x03f3;
const RT_USER_EDIT_ATOM = 0x0ff5;
const RT_PERSIST_DIRECTORY_ATOM = 0x1772;
const RT_OFFICE_ART_SP_CONTAINER = 0xf004;
const SLIDES_INSTANCE = 0;

const damaged = (why: string) => invalidFile(`The PowerPoint presentation is damaged (${why}); save it again and resend it.`);

/** One record met by a walk: its type, instance, body, and whether it lies in the slides' SlideListWithText. */
interface PptRecord {
  type: number;
  instance: number;
  body: number;
  bodyEnd: number;
  inSlideList: boolean;
  inSlideListInstance: number | undefined;
}

/**
 * The records of [start, end) in order, containers entered. A record whose length runs past its
 * container (or the range) is read to the container's end; a header that does not fit ends the container.
 */
function* records(stream: Buffer, start: number, end: number): Generator<PptRecord> {
  const open: { end: number; slideList: number | undefined }[] = [];
  let at = start;
  let limit = Math.min(end, stream.length);
  for (;;) {
    while (at + HEADER > limit && open.length > 0) {
      at = open.pop()!.end;
      limit = open.length > 0 ? open[open.length - 1]!.end : Math.min(end, stream.length);
    }
    if (at + HEADER > limit) return;
    const verInstance = stream.readUInt16LE(at);
    const type = stream.readUInt16LE(at + 2);
    const bodyEnd = Math.min(at + HEADER + stream.readUInt32LE(at + 4), limit);
    const slideList = open.at(-1)?.slideList;
    yield { type, instance: verInstance >> 4, body: at + HEADER, bodyEnd, inSlideList: slideList !== undefined, inSlideListInstance: slideList };
    if ((verInstance & 0x0f) === 0x0f && open.length < MAX_DEPTH) {
      open.push({ end: bodyEnd, slideList: type === RT_SLIDE_LIST_WITH_TEXT ? verInstance >> 4 : undefined });
      at += HEADER;
      limit = bodyEnd;
    } else at = bodyEnd;
  }
}

/** A record's end, read from its header at `at` (clamped to the stream); undefined when no header fits there. */
function recordEnd(stream: Buffer, at: number): number | undefined {
  if (at + HEADER > stream.length) return undefined;
  return Math.min(at + HEADER + stream.readUInt32LE(at + 4), stream.length);
}

/** The persist id → offset map of the edit chain starting at the UserEditAtom at `edit`; undefined when the chain cannot be read. */
function persistDirectory(stream: Buffer, edit: number): { offsets: Map<number, number>; document: number } | undefined {
  const offsets = new Map<number, number>();
  const seen = new Set<number>();
  let document: number | undefined;
  for (let at = edit; at !== 0 && !seen.has(at); ) {
    seen.add(at);
    if (at + HEADER + 20 > stream.length || stream.readUInt16LE(at + 2) !== RT_USER_EDIT_ATOM) return document === undefined ? undefined : { offsets, document };
    const body = at + HEADER;
    document ??= stream.readUInt32LE(body + 16);
    const directory = stream.readUInt32LE(body + 12);
    const directoryEnd = recordEnd(stream, directory);
    if (directoryEnd !== undefined && stream.readUInt16LE(directory + 2) === RT_PERSIST_DIRECTORY_ATOM) {
      // PersistDirectoryEntry: persistId (20 bits) and cPersist (12 bits), then cPersist offsets.
      for (let entry = directory + HEADER; entry + 4 <= directoryEnd; ) {
        const word = stream.readUInt32LE(entry);
        const first = word & 0xfffff;
        const count = word >>> 20;
        entry += 4;
        for (let i = 0; i < count && entry + 4 <= directoryEnd; i++, entry += 4) {
          if (!offsets.has(first + i)) offsets.set(first + i, stream.readUInt32LE(entry));
        }
      }
    }
    at = stream.readUInt32LE(body + 8);
  }
  return document === undefined ? undefined : { offsets, document };
}

/** Shapes of the record at `offset` and everything in it. */
function shapesOf(stream: Buffer, offset: number): number {
  const end = recordEnd(stream, offset);
  if (end === undefined) return 0;
  let shapes = 0;
  for (const record of records(stream, offset, end)) if (record.type === RT_OFFICE_ART_SP_CONTAINER) shapes++;
  return shapes;
}

/**
 * Counts a "PowerPoint Document" stream, from the edit the "Current User" stream names
 * (`currentEdit`, its offsetToCurrentEdit) or, without it, over every record; throws the 422 as soon
 * as a limit is passed. Never throws anything else: damaged parts are read as far as they go.
 */
export function countPptRecords(stream: Buffer, currentEdit: number | undefined, budget: StructureBudget = STRUCTURE_BUDGET): StructureCount {
  const counter = new StructureCounter(budget);
  const directory = currentEdit === undefined ? undefined : persistDirectory(stream, currentEdit);
  const documentAt = directory?.offsets.get(directory.document);
  const documentEnd = documentAt === undefined ? undefined : recordEnd(stream, documentAt);
  if (!directory || documentAt === undefined || documentEnd === undefined || stream.readUInt16LE(documentAt + 2) !== RT_DOCUMENT) {
    for (const record of records(stream, 0, stream.length)) {
      if (record.type === RT_SLIDE_PERSIST_ATOM && record.inSlideListInstance === SLIDES_INSTANCE) counter.add('slides', 1);
      else if (record.type === RT_OFFICE_ART_SP_CONTAINER) counter.add('shapes', 1);
    }
    return counter.counted;
  }
  const shapesByPage = new Map<number, number>();
  const countPage = (persistId: number) => {
    const page = directory.offsets.get(persistId);
    if (page === undefined) return;
    let shapes = shapesByPage.get(page);
    if (shapes === undefined) shapesByPage.set(page, (shapes = shapesOf(stream, page)));
    counter.add('shapes', shapes);
  };
  for (const record of records(stream, documentAt, documentEnd)) {
    if (record.type === RT_OFFICE_ART_SP_CONTAINER) counter.add('shapes', 1);
    else if (record.type === RT_DOCUMENT_ATOM && record.body + 32 <= record.bodyEnd) {
      // notesMasterPersistIdRef and handoutMasterPersistIdRef (0: none).
      for (const at of [record.body + 24, record.body + 28]) if (stream.readUInt32LE(at) !== 0) countPage(stream.readUInt32LE(at));
    } else if (record.type === RT_SLIDE_PERSIST_ATOM && record.inSlideList && record.body + 4 <= record.bodyEnd) {
      if (record.inSlideListInstance === SLIDES_INSTANCE) counter.add('slides', 1);
      countPage(stream.readUInt32LE(record.body));
    }
  }
  return counter.counted;
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
  const currentEdit = currentUser && currentUser.length >= 20 ? currentUser.readUInt32LE(16) : undefined;
  const counted = countPptRecords(stream, currentEdit, budget);
  assertBlipPixels(file.stream('Pictures'), layout);
  return counted;
}
