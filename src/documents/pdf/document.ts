import { EncryptionError, firstId, openStandardSecurity, streamIsInTheClear, type Decryptor } from './encryption.js';
import { DecodeBudget, decodeStream } from './filters.js';
import { PdfDict, PdfRef, PdfStream, PdfString, asArray, asDict, asNumber, isName, type PdfValue } from './objects.js';
import { PdfParser, PdfSyntaxError, indexOf, lastIndexOf } from './parser.js';

export type XrefEntry =
  | { kind: 'offset'; offset: number; gen: number }
  | { kind: 'compressed'; stream: number; index: number }
  | { kind: 'free' };

const MAX_XREF_SECTIONS = 1000;
const MAX_OBJECT_NUMBER = 10_000_000;
const MAX_RESOLVE_HOPS = 32;
const MAX_AMBIGUITIES = 20;

interface ObjectStream {
  data: Uint8Array;
  /** The header's (number, offset) pairs in order: the xref's index counts slots. */
  slots: { num: number; offset: number }[];
  first: number;
}

const isHeaderSpace = (c: number | undefined) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0c || c === 0x00;
const isDigitByte = (c: number | undefined) => c !== undefined && c >= 0x30 && c <= 0x39;
const isLetter = (c: number | undefined) => c !== undefined && ((c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a));

/** Digits ending just before `end` (at most `max`, preceded by no digit): their start, or -1. */
function digitsBefore(data: Uint8Array, end: number, max: number): number {
  let start = end;
  while (start > 0 && isDigitByte(data[start - 1]) && end - start <= max) start--;
  return start === end || end - start > max ? -1 : start;
}

const sameEntry = (a: XrefEntry, b: XrefEntry) => JSON.stringify(a) === JSON.stringify(b);

const headerCache = new WeakMap<Uint8Array, { num: number; gen: number; offset: number }[]>();

/** Every "num gen obj" in the file, in order (found with a native search for "obj"; cached per buffer). */
export function objectHeaders(data: Uint8Array): { num: number; gen: number; offset: number }[] {
  let headers = headerCache.get(data);
  if (headers) return headers;
  headers = [];
  const bytes = Buffer.from(data.buffer, data.byteOffset, data.length);
  for (let at = bytes.indexOf('obj'); at >= 0; at = bytes.indexOf('obj', at + 3)) {
    if (isLetter(bytes[at + 3])) continue;
    let p = at;
    if (!isHeaderSpace(bytes[p - 1])) continue;
    while (p > 0 && isHeaderSpace(bytes[p - 1])) p--;
    const genStart = digitsBefore(bytes, p, 5);
    if (genStart < 0 || !isHeaderSpace(bytes[genStart - 1])) continue;
    p = genStart;
    while (p > 0 && isHeaderSpace(bytes[p - 1])) p--;
    const numStart = digitsBefore(bytes, p, 8);
    if (numStart < 0) continue;
    headers.push({ num: digitsValue(bytes, numStart, p), gen: digitsValue(bytes, genStart, genStart + digitsLength(bytes, genStart)), offset: numStart });
  }
  headerCache.set(data, headers);
  return headers;
}

/** The value of the decimal digits data[start, end) (at most 8 here: exact, without making a string). */
function digitsValue(data: Uint8Array, start: number, end: number): number {
  let value = 0;
  for (let i = start; i < end; i++) value = value * 10 + (data[i]! - 0x30);
  return value;
}

function digitsLength(data: Uint8Array, start: number): number {
  let n = 0;
  while (isDigitByte(data[start + n])) n++;
  return n;
}

export type XrefSectionKind = 'table' | 'stream';

interface XrefChain {
  entries: Map<number, XrefEntry>;
  trailer: PdfDict;
  sectionOffsets: number[];
  sectionKinds: XrefSectionKind[];
  /** Why the /Prev chain stopped before its natural end, if it did. */
  broken?: string;
}

/**
 * One state of a PDF: the objects visible through the cross-reference chain that starts at the
 * last `startxref` before `limit`. For an incremental file, a view with limit = end of revision N
 * shows the document exactly as it was when revision N was written.
 */
export class PdfView {
  private readonly cache = new Map<number, PdfValue>();
  private readonly objectStreams = new Map<number, ObjectStream>();
  private scanned?: Map<number, number>;
  private bodiesChecked = false;
  private revisionHeaders?: Map<number, Map<number, number[]>>;
  private headerCounts?: Map<number, number>;
  private readonly found: string[] = [];
  readonly entries: Map<number, XrefEntry>;
  readonly trailer: PdfDict;
  readonly sectionOffsets: number[];
  /** Whether each section of `sectionOffsets` is a classic table (hybrid ones included) or an xref stream. */
  readonly sectionKinds: XrefSectionKind[];
  /**
   * Where poppler, qpdf or pdf.js could read this file otherwise than we do: an object defined twice
   * in one revision, an object stream listing a number twice or not holding the object where the xref
   * says, a cross-reference section listing a number twice, an xref offset pointing at another
   * object, a dictionary repeating a key. The revisions' bodies are checked when this is first read;
   * objects add what they show when loaded, so read it after everything the caller relies on.
   */
  get ambiguities(): readonly string[] {
    if (!this.bodiesChecked) {
      this.bodiesChecked = true;
      this.checkBodies();
    }
    return this.found;
  }

  /** True when the cross-reference data was unusable and objects were located by scanning. */
  readonly reconstructed: boolean;
  /** What was wrong with the cross-reference data and how it was recovered (empty for a sound file). */
  readonly recovery: string[] = [];
  /** Set when the file is encrypted and cannot be opened with the empty user password. */
  readonly encryptionError?: EncryptionError;
  private decryptor?: Decryptor;
  private encryptNum?: number;

  /**
   * @param budget decoded-stream allowance; pass one budget to every view of the same file so the
   *   whole verification stays bounded.
   */
  constructor(
    readonly data: Uint8Array,
    readonly limit: number,
    private readonly budget = new DecodeBudget(),
  ) {
    const chain = this.readChain();
    if (chain) {
      this.entries = chain.entries;
      this.trailer = chain.trailer;
      this.sectionOffsets = chain.sectionOffsets;
      this.sectionKinds = chain.sectionKinds;
      this.reconstructed = false;
      this.encryptionError = this.openEncryption();
      if (chain.broken) this.recoverBrokenChain(chain.broken);
      else if (!this.catalog) this.recoverBrokenChain('the document catalog is in no cross-reference section');
    } else {
      const rebuilt = this.reconstruct();
      this.entries = rebuilt.entries;
      this.trailer = rebuilt.trailer;
      this.sectionOffsets = [];
      this.sectionKinds = [];
      this.reconstructed = true;
      this.encryptionError = this.openEncryption();
      this.recovery.push('the cross-reference data is unreadable; objects were located by scanning the file');
    }
  }

  /**
   * Objects only the unreachable older sections listed are found by scanning the file, so what they
   * hold (earlier signatures, above all) is still seen, as PDF readers do.
   */
  private recoverBrokenChain(reason: string): void {
    let added = 0;
    for (const [num, offset] of this.scan()) {
      if (this.entries.has(num)) continue;
      this.entries.set(num, { kind: 'offset', offset, gen: 0 });
      added++;
    }
    this.recovery.push(`the cross-reference chain is broken (${reason}); ${added} object(s) it no longer reaches were recovered by scanning the file`);
  }

  private ambiguous(problem: string): void {
    if (this.found.length < MAX_AMBIGUITIES && !this.found.includes(problem)) this.found.push(problem);
  }

  get startxref(): number | undefined {
    return this.sectionOffsets[0];
  }

  /** The first object number an update may use: past the trailer's /Size and every number the xref lists. */
  get nextObjectNumber(): number {
    let next = asNumber(this.trailer.get('Size')) ?? 0;
    for (const num of this.entries.keys()) if (num >= next) next = num + 1;
    return next;
  }

  /** A reference to object `num` with the generation its xref entry names (0 for compressed objects). */
  refTo(num: number): PdfRef {
    const entry = this.entries.get(num);
    return new PdfRef(num, entry?.kind === 'offset' ? entry.gen : 0);
  }

  /** Follows references (bounded) to the direct value; undefined for missing or unreadable objects. */
  resolve(value: PdfValue | undefined): PdfValue | undefined {
    let current = value;
    for (let hops = 0; current instanceof PdfRef; hops++) {
      if (hops > MAX_RESOLVE_HOPS) return undefined;
      current = this.getObject(current.num);
    }
    return current;
  }

  dict(value: PdfValue | undefined): PdfDict | undefined {
    return asDict(this.resolve(value));
  }

  array(value: PdfValue | undefined): PdfValue[] | undefined {
    return asArray(this.resolve(value));
  }

  /** The /Encrypt dictionary; `/Encrypt null` or a reference to nothing is no encryption (§7.3.9). */
  /** The decoded data of a stream object (within this file's decoding budget), or undefined. */
  streamData(value: PdfValue | undefined): Uint8Array | undefined {
    const stream = this.resolve(value);
    if (!(stream instanceof PdfStream)) return undefined;
    try {
      return decodeStream(stream, this.budget);
    } catch {
      return undefined;
    }
  }

  get encryption(): PdfDict | undefined {
    return this.dict(this.trailer.get('Encrypt'));
  }

  /**
   * Sets up decryption before any other object is read (the /Encrypt dictionary itself is never
   * encrypted, so it is read first, in the clear). Returns the reason when the file cannot be opened.
   */
  private openEncryption(): EncryptionError | undefined {
    const ref = this.trailer.get('Encrypt');
    if (ref instanceof PdfRef) this.encryptNum = ref.num;
    const encrypt = this.encryption;
    if (!encrypt) return undefined;
    try {
      this.decryptor = openStandardSecurity(encrypt, firstId(this.trailer, (v) => this.resolve(v)), (v) => this.resolve(v));
      return undefined;
    } catch (err) {
      return err instanceof EncryptionError ? err : new EncryptionError('unsupported', 'the encryption dictionary is malformed');
    }
  }

  /** Decrypts the strings and stream data of a directly stored object (not those inside object streams). */
  private decryptObject(value: PdfValue, num: number, gen: number, depth = 0): PdfValue {
    const decryptor = this.decryptor;
    if (!decryptor || num === this.encryptNum || depth > 64) return value;
    // §7.6.1: cross-reference streams are not encrypted (they are read before decryption can start).
    if (depth === 0 && value instanceof PdfStream && isName(value.dict.get('Type'), 'XRef')) return value;
    if (value instanceof PdfString) return new PdfString(decryptor.decryptString(value.bytes, num, gen), value.hex, value.start, value.end);
    if (Array.isArray(value)) return value.map((item) => this.decryptObject(item, num, gen, depth + 1));
    if (value instanceof PdfStream) {
      const dict = this.decryptObject(value.dict, num, gen, depth + 1) as PdfDict;
      if (streamIsInTheClear(value.dict, decryptor.encryptMetadata)) return new PdfStream(dict, value.source, value.dataStart, value.dataEnd);
      const data = decryptor.decryptStream(value.raw(), num, gen);
      return new PdfStream(dict, data, 0, data.length);
    }
    if (value instanceof PdfDict) {
      // §7.6.1: the /Contents of a signature dictionary is not encrypted.
      const signature = value.has('ByteRange') && value.has('Contents');
      const entries = new Map<string, PdfValue>();
      for (const [key, item] of value.entries) entries.set(key, signature && key === 'Contents' ? item : this.decryptObject(item, num, gen, depth + 1));
      return new PdfDict(entries);
    }
    return value;
  }

  get catalog(): PdfDict | undefined {
    return this.dict(this.trailer.get('Root'));
  }

  getObject(num: number): PdfValue | undefined {
    if (this.cache.has(num)) return this.cache.get(num);
    this.cache.set(num, undefined as unknown as PdfValue); // cycle guard while loading
    let value: PdfValue | undefined;
    try {
      value = this.loadObject(num);
    } catch {
      value = undefined;
    }
    if (value === undefined) this.cache.delete(num);
    else this.cache.set(num, value);
    return value;
  }

  private loadObject(num: number): PdfValue | undefined {
    const entry = this.entries.get(num);
    if (!entry || entry.kind === 'free') return undefined;
    if (entry.kind === 'compressed') return this.loadCompressed(entry.stream, entry.index, num);
    const direct = this.parseAt(entry.offset, num, entry.gen);
    if (direct !== undefined) return direct;
    const scannedOffset = this.scan().get(num);
    return scannedOffset === undefined ? undefined : this.parseAt(scannedOffset, num);
  }

  /** The object at `offset`; with `gen`, an object with another number or generation there is ambiguous. */
  private parseAt(offset: number, num: number, gen?: number): PdfValue | undefined {
    if (!Number.isInteger(offset) || offset < 0 || offset >= this.limit) return undefined;
    const parser = new PdfParser(this.data, offset, true, this.limit, this.lengthResolver, true);
    let obj: { num: number; gen: number; value: PdfValue };
    try {
      obj = parser.parseIndirectObject();
    } catch {
      this.reportParsed(parser, num);
      return undefined;
    }
    this.reportParsed(parser, num);
    if (gen !== undefined && (obj.num !== num || obj.gen !== gen)) {
      // poppler and qpdf then rebuild the cross-reference table; which object they show is their guess.
      this.ambiguous(`the cross-reference entry of object ${num} ${gen} points at object ${obj.num} ${obj.gen}`);
    }
    try {
      return obj.num === num ? this.decryptObject(obj.value, num, obj.gen) : undefined;
    } catch {
      return undefined;
    }
  }

  /** What a parser of object `num` found readers could read otherwise (met before any syntax error too). */
  private reportParsed(parser: PdfParser, num: number): void {
    for (const problem of parser.ambiguities ?? []) this.ambiguous(`object ${num}: ${problem}`);
  }

  /** One resolver per view for the parsers it makes (not a closure per object parsed). */
  private readonly lengthResolver = (ref: PdfRef): number | undefined => asNumber(this.resolveLengthRef(ref));

  private resolveLengthRef(ref: PdfRef): PdfValue | undefined {
    const entry = this.entries.get(ref.num);
    if (entry?.kind !== 'offset') return undefined;
    try {
      return new PdfParser(this.data, entry.offset, true, this.limit).parseIndirectObject().value;
    } catch {
      return undefined;
    }
  }

  /** The decoded bytes of object stream `streamNum` as this view sees it (undefined when unreadable). */
  objectStreamData(streamNum: number): Uint8Array | undefined {
    try {
      return this.objectStream(streamNum)?.data;
    } catch {
      return undefined;
    }
  }

  /** Object `num` from slot `index` of its object stream, as the xref names it (as poppler and pdf.js read it). */
  private loadCompressed(streamNum: number, index: number, num: number): PdfValue | undefined {
    const objStm = this.objectStream(streamNum);
    if (!objStm) return undefined;
    const slot = objStm.slots[index];
    if (slot?.num !== num) {
      this.ambiguous(`the xref puts object ${num} at index ${index} of object stream ${streamNum}, which holds ${slot ? `object ${slot.num}` : 'nothing'} there`);
      return undefined;
    }
    const parser = new PdfParser(objStm.data, objStm.first + slot.offset, false, objStm.data.length, undefined, true);
    try {
      return parser.parseObject();
    } finally {
      this.reportParsed(parser, num);
    }
  }

  private objectStream(streamNum: number): ObjectStream | undefined {
    let objStm = this.objectStreams.get(streamNum);
    if (!objStm) {
      const entry = this.entries.get(streamNum);
      if (entry?.kind !== 'offset') return undefined;
      const stream = this.parseAt(entry.offset, streamNum, entry.gen);
      if (!(stream instanceof PdfStream) || !isName(stream.dict.get('Type'), 'ObjStm')) return undefined;
      const data = decodeStream(stream, this.budget);
      const n = asNumber(stream.dict.get('N')) ?? 0;
      const first = asNumber(stream.dict.get('First')) ?? 0;
      const header = new PdfParser(data, 0, false, Math.min(first, data.length));
      const slots: ObjectStream['slots'] = [];
      const listed = new Set<number>();
      for (let i = 0; i < n && i < 1_000_000; i++) {
        const objNum = header.parseObject();
        const objOffset = header.parseObject();
        if (typeof objNum !== 'number' || typeof objOffset !== 'number') break;
        if (listed.has(objNum)) this.ambiguous(`object stream ${streamNum} lists object ${objNum} twice`);
        listed.add(objNum);
        slots.push({ num: objNum, offset: objOffset });
      }
      objStm = { data, slots, first };
      this.objectStreams.set(streamNum, objStm);
      this.checkStreamAgainstBody(streamNum, entry.offset, listed);
    }
    return objStm;
  }

  /** Offsets of "n g obj" found by scanning the bytes of this revision (later definitions win). */
  private scan(): Map<number, number> {
    if (this.scanned) return this.scanned;
    const found = new Map<number, number>();
    for (const header of objectHeaders(this.data)) {
      if (header.offset >= this.limit) break;
      found.set(header.num, header.offset);
    }
    this.scanned = found;
    return found;
  }

  /**
   * Objects defined twice in the body of one revision: the xref names
   * one, a reader that rebuilds the table takes the last. Bodies are walked object by object only
   * where a number's header occurs twice, so text inside a stream is never taken for an object.
   */
  private checkBodies(): void {
    // No number defined twice anywhere in the file: none twice in one revision (no body split needed).
    if (![...this.headerCountsBelowLimit().values()].some((count) => count > 1)) return;
    for (const [revisionEnd, byNumber] of this.headersByRevision()) {
      const repeated = [...byNumber].filter(([, offsets]) => offsets.length > 1).map(([num]) => num);
      if (repeated.length === 0) continue;
      const defined = this.topLevelObjects(byNumber);
      for (const num of repeated) {
        if ((defined.get(num) ?? 0) > 1) this.ambiguous(`object ${num} is defined twice in the revision body that ends at byte ${revisionEnd}`);
      }
    }
  }

  /** A stream's objects must not also be defined directly in the revision the stream belongs to. */
  private checkStreamAgainstBody(streamNum: number, streamOffset: number, nums: Set<number>): void {
    const counts = this.headerCountsBelowLimit();
    if (![...nums].some((num) => counts.has(num))) return; // none defined directly in any revision body
    for (const [revisionEnd, byNumber] of this.headersByRevision()) {
      if (streamOffset >= revisionEnd) continue;
      const candidates = [...nums].filter((num) => byNumber.has(num));
      if (candidates.length === 0) return;
      const defined = this.topLevelObjects(byNumber);
      for (const num of candidates) {
        if (defined.has(num)) this.ambiguous(`object ${num} is defined both in object stream ${streamNum} and directly in the same revision body (which ends at byte ${revisionEnd})`);
      }
      return;
    }
  }

  /** How often each number has an "n g obj" header in this view's bytes (all revisions together). */
  private headerCountsBelowLimit(): Map<number, number> {
    if (this.headerCounts) return this.headerCounts;
    const counts = new Map<number, number>();
    for (const header of objectHeaders(this.data)) {
      if (header.offset >= this.limit) break;
      counts.set(header.num, (counts.get(header.num) ?? 0) + 1);
    }
    this.headerCounts = counts;
    return counts;
  }

  /**
   * Object headers of this view, grouped by the revision body they lie in (keyed by the body's end),
   * then by number. A body ends where its cross-reference section starts (after the header of an xref
   * stream, which belongs to the body it closes) and at every %%EOF marker.
   */
  private headersByRevision(): Map<number, Map<number, number[]>> {
    if (this.revisionHeaders) return this.revisionHeaders;
    // An xref stream is itself an object of the body it closes. Revisions the chain skips (a /Prev
    // that jumps back) are bodies of their own, split at their %%EOF markers.
    const bounds = [
      ...this.sectionOffsets.map((offset, i) => offset + (this.sectionKinds[i] === 'stream' ? 1 : 0)),
      ...revisionEnds(this.data).map((r) => r.end),
    ];
    const ends = [...new Set(bounds.filter((end) => end < this.limit))].sort((a, b) => a - b);
    ends.push(this.limit);
    const out = new Map<number, Map<number, number[]>>();
    let r = 0;
    for (const header of objectHeaders(this.data)) {
      if (header.offset >= this.limit) break;
      while (header.offset >= ends[r]!) r++;
      let byNumber = out.get(ends[r]!);
      if (!byNumber) out.set(ends[r]!, (byNumber = new Map()));
      const offsets = byNumber.get(header.num);
      if (offsets) offsets.push(header.offset);
      else byNumber.set(header.num, [header.offset]);
    }
    this.revisionHeaders = out;
    return out;
  }

  /** How often each number is defined by a top-level object of one revision body (objects parsed in sequence). */
  private topLevelObjects(byNumber: Map<number, number[]>): Map<number, number> {
    const starts = [...byNumber.values()].flat().sort((a, b) => a - b);
    const counts = new Map<number, number>();
    let pos = 0;
    for (const start of starts) {
      if (start < pos) continue; // inside the previous object (stream data, a string)
      try {
        const parser = new PdfParser(this.data, start, true, this.limit, this.lengthResolver);
        const obj = parser.parseIndirectObject();
        counts.set(obj.num, (counts.get(obj.num) ?? 0) + 1);
        pos = parser.pos;
      } catch {
        pos = start + 1;
      }
    }
    return counts;
  }

  private reconstruct(): { entries: Map<number, XrefEntry>; trailer: PdfDict } {
    const entries = new Map<number, XrefEntry>();
    for (const [num, offset] of this.scan()) entries.set(num, { kind: 'offset', offset, gen: 0 });
    let trailer: PdfDict | undefined;
    for (let at = lastIndexOf(this.data, 'trailer', this.limit); at >= 0 && !trailer; at = lastIndexOf(this.data, 'trailer', at)) {
      try {
        const parser = new PdfParser(this.data, at + 'trailer'.length, true, this.limit);
        const value = parser.parseObject();
        if (value instanceof PdfDict && value.has('Root')) trailer = value;
      } catch {
        /* keep looking */
      }
    }
    if (!trailer) {
      for (const [num] of entries) {
        const value = this.parseAt((entries.get(num) as { offset: number }).offset, num);
        const dict = asDict(value);
        if (value instanceof PdfStream && isName(dict?.get('Type'), 'XRef') && dict?.has('Root')) trailer = dict;
        else if (isName(dict?.get('Type'), 'Catalog')) trailer = new PdfDict(new Map([['Root', new PdfRef(num, 0)]]));
      }
    }
    if (!trailer) throw new PdfSyntaxError('no document catalog found');
    return { entries, trailer };
  }

  private readChain(): XrefChain | undefined {
    const at = lastIndexOf(this.data, 'startxref', this.limit);
    if (at < 0) return undefined;
    let start: number;
    try {
      const value = new PdfParser(this.data, at + 'startxref'.length, true, this.limit).parseObject();
      if (typeof value !== 'number') return undefined;
      start = value;
    } catch {
      return undefined;
    }
    const entries = new Map<number, XrefEntry>();
    const sectionOffsets: number[] = [];
    const sectionKinds: XrefSectionKind[] = [];
    let trailer: PdfDict | undefined;
    const visited = new Set<number>();
    let broken: string | undefined;
    let offset: number | undefined = start;
    while (offset !== undefined) {
      if (sectionOffsets.length >= MAX_XREF_SECTIONS) {
        broken = `more than ${MAX_XREF_SECTIONS} sections`;
        break;
      }
      if (visited.has(offset)) {
        broken = `/Prev ${offset} loops back to a section already read`;
        break;
      }
      if (!Number.isInteger(offset) || offset < 0 || offset >= this.limit) {
        broken = `/Prev ${offset} points outside the file`;
        break;
      }
      visited.add(offset);
      const section = this.readSection(offset, entries);
      if (!section) {
        if (sectionOffsets.length === 0) return undefined;
        broken = `/Prev ${offset} does not point at a cross-reference section`;
        break;
      }
      sectionOffsets.push(offset);
      sectionKinds.push(section.kind);
      trailer ??= section.trailer;
      const prev = section.trailer.get('Prev');
      if (prev !== undefined && typeof prev !== 'number') {
        broken = 'a /Prev entry is not a number';
        break;
      }
      offset = prev;
    }
    if (!trailer || !trailer.has('Root')) return undefined;
    return { entries, trailer, sectionOffsets, sectionKinds, broken };
  }

  /** Reads one xref section (table or stream) at offset into entries (entries already set win). */
  private readSection(offset: number, entries: Map<number, XrefEntry>): { trailer: PdfDict; kind: XrefSectionKind } | undefined {
    const parser = new PdfParser(this.data, offset, true, this.limit);
    try {
      if (parser.peekKeyword() === 'xref') {
        parser.readKeyword();
        const table = new Map<number, XrefEntry>();
        const trailer = this.readXrefTable(parser, table);
        // ISO 32000-1 §7.5.8.4: in a hybrid section the table's entries come first; the /XRefStm
        // only supplies objects the table lacks (it cannot override what the table says). Objects
        // the table lists as free are, in hybrid files as Word writes them, the ones the /XRefStm
        // holds in object streams: the table's free entries apply after it (as in qpdf and poppler).
        for (const [num, entry] of table) if (entry.kind !== 'free' && !entries.has(num)) entries.set(num, entry);
        const hybrid = trailer.get('XRefStm');
        if (typeof hybrid === 'number' && hybrid >= 0 && hybrid < this.limit) {
          try {
            this.readXrefStream(new PdfParser(this.data, hybrid, true, this.limit), entries);
          } catch {
            /* the table still stands */
          }
        }
        for (const [num, entry] of table) if (entry.kind === 'free' && !entries.has(num)) entries.set(num, entry);
        return { trailer, kind: 'table' };
      }
      return { trailer: this.readXrefStream(parser, entries), kind: 'stream' };
    } catch {
      return undefined;
    }
  }

  private readXrefTable(parser: PdfParser, table: Map<number, XrefEntry>): PdfDict {
    for (let subsections = 0; subsections < 100_000; subsections++) {
      // A table needs at least one subsection (§7.5.4); qpdf treats "xref" directly followed by
      // "trailer" as a damaged file and rebuilds it by scanning, and so do we.
      if (subsections === 0 && parser.peekKeyword() === 'trailer') throw new PdfSyntaxError('xref table without subsections');
      if (parser.peekKeyword() === 'trailer') {
        parser.readKeyword();
        const trailer = parser.parseObject();
        if (!(trailer instanceof PdfDict)) throw new PdfSyntaxError('trailer is not a dictionary');
        return trailer;
      }
      const first = parser.parseObject();
      const count = parser.parseObject();
      if (typeof first !== 'number' || typeof count !== 'number' || count < 0 || first < 0 || first + count > MAX_OBJECT_NUMBER) {
        throw new PdfSyntaxError('bad xref subsection');
      }
      for (let i = 0; i < count; i++) {
        const offset = parser.parseObject();
        const gen = parser.parseObject();
        const type = parser.readKeyword();
        if (typeof offset !== 'number' || typeof gen !== 'number') throw new PdfSyntaxError('bad xref entry');
        const num = first + i;
        if (type !== 'n' && type !== 'f') throw new PdfSyntaxError('bad xref entry type');
        const entry: XrefEntry = type === 'n' ? { kind: 'offset', offset, gen } : { kind: 'free' };
        const listed = table.get(num);
        if (listed) {
          if (num !== 0 && !sameEntry(listed, entry)) this.ambiguous(`a cross-reference table lists object ${num} twice`);
          continue;
        }
        table.set(num, entry);
      }
    }
    throw new PdfSyntaxError('too many xref subsections');
  }

  private readXrefStream(parser: PdfParser, entries: Map<number, XrefEntry>): PdfDict {
    const { value } = parser.parseIndirectObject();
    if (!(value instanceof PdfStream) || !isName(value.dict.get('Type'), 'XRef')) throw new PdfSyntaxError('not an xref stream');
    const dict = value.dict;
    const widths = (asArray(dict.get('W')) ?? []).map((w) => asNumber(w) ?? -1);
    if (widths.length < 3 || widths.some((w) => w < 0 || w > 8)) throw new PdfSyntaxError('bad /W in xref stream');
    const size = asNumber(dict.get('Size')) ?? 0;
    const index = (asArray(dict.get('Index')) ?? [0, size]).map((v) => asNumber(v) ?? -1);
    const data = decodeStream(value, this.budget);
    const rowLength = widths[0]! + widths[1]! + widths[2]!;
    if (rowLength === 0) throw new PdfSyntaxError('empty xref rows');
    let pos = 0;
    const listed = new Map<number, XrefEntry>();
    const field = (width: number, fallback: number) => {
      if (width === 0) return fallback;
      let v = 0;
      for (let i = 0; i < width; i++) v = v * 256 + data[pos++]!;
      return v;
    };
    for (let k = 0; k + 1 < index.length; k += 2) {
      const first = index[k]!;
      const count = index[k + 1]!;
      if (first < 0 || count < 0 || first + count > MAX_OBJECT_NUMBER) throw new PdfSyntaxError('bad /Index');
      for (let i = 0; i < count && pos + rowLength <= data.length; i++) {
        const type = field(widths[0]!, 1);
        const a = field(widths[1]!, 0);
        const b = field(widths[2]!, 0);
        const num = first + i;
        const entry: XrefEntry | undefined = type === 0 ? { kind: 'free' } : type === 1 ? { kind: 'offset', offset: a, gen: b } : type === 2 ? { kind: 'compressed', stream: a, index: b } : undefined;
        if (!entry) continue;
        const before = listed.get(num);
        if (before) {
          if (num !== 0 && !sameEntry(before, entry)) this.ambiguous(`an xref stream lists object ${num} twice`);
          continue;
        }
        listed.set(num, entry);
        if (!entries.has(num)) entries.set(num, entry);
      }
    }
    return dict;
  }
}

export interface RevisionEnd {
  /** Offset just past "%%EOF". */
  marker: number;
  /** Offset past the end-of-line that follows the marker, if any. */
  end: number;
}

const revisionEndsCache = new WeakMap<Uint8Array, readonly RevisionEnd[]>();

/** Where each "%%EOF" marker ends, in file order (cached per buffer: verify and the reader's body check both need them). */
export function revisionEnds(data: Uint8Array): readonly RevisionEnd[] {
  const cached = revisionEndsCache.get(data);
  if (cached) return cached;
  const ends: RevisionEnd[] = [];
  for (let at = indexOf(data, '%%EOF', 0); at >= 0 && ends.length < 10_000; at = indexOf(data, '%%EOF', at + 5)) {
    let end = at + 5;
    if (data[end] === 0x0d) end++;
    if (data[end] === 0x0a) end++;
    ends.push(Object.freeze({ marker: at + 5, end }));
  }
  Object.freeze(ends);
  revisionEndsCache.set(data, ends);
  return ends;
}

export const isPdfRef = (v: PdfValue | undefined): v is PdfRef => v instanceof PdfRef;
