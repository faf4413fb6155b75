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
  private readonly objectStreams = new Map<number, { data: Uint8Array; offsets: Map<number, number>; first: number }>();
  private scanned?: Map<number, number>;
  readonly entries: Map<number, XrefEntry>;
  readonly trailer: PdfDict;
  readonly sectionOffsets: number[];
  /** Whether each section of `sectionOffsets` is a classic table (hybrid ones included) or an xref stream. */
  readonly sectionKinds: XrefSectionKind[];
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
    const direct = this.parseAt(entry.offset, num);
    if (direct !== undefined) return direct;
    const scannedOffset = this.scan().get(num);
    return scannedOffset === undefined ? undefined : this.parseAt(scannedOffset, num);
  }

  private parseAt(offset: number, num: number): PdfValue | undefined {
    if (!Number.isInteger(offset) || offset < 0 || offset >= this.limit) return undefined;
    try {
      const parser = new PdfParser(this.data, offset, true, this.limit, (ref) => asNumber(this.resolveLengthRef(ref)));
      const obj = parser.parseIndirectObject();
      return obj.num === num ? this.decryptObject(obj.value, num, obj.gen) : undefined;
    } catch {
      return undefined;
    }
  }

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

  private loadCompressed(streamNum: number, index: number, num: number): PdfValue | undefined {
    const objStm = this.objectStream(streamNum);
    if (!objStm) return undefined;
    void index;
    const rel = objStm.offsets.get(num);
    if (rel === undefined) return undefined;
    return new PdfParser(objStm.data, objStm.first + rel, false).parseObject();
  }

  private objectStream(streamNum: number): { data: Uint8Array; offsets: Map<number, number>; first: number } | undefined {
    let objStm = this.objectStreams.get(streamNum);
    if (!objStm) {
      const entry = this.entries.get(streamNum);
      if (entry?.kind !== 'offset') return undefined;
      const stream = this.parseAt(entry.offset, streamNum);
      if (!(stream instanceof PdfStream) || !isName(stream.dict.get('Type'), 'ObjStm')) return undefined;
      const data = decodeStream(stream, this.budget);
      const n = asNumber(stream.dict.get('N')) ?? 0;
      const first = asNumber(stream.dict.get('First')) ?? 0;
      const header = new PdfParser(data, 0, false, Math.min(first, data.length));
      const offsets = new Map<number, number>();
      for (let i = 0; i < n && i < 1_000_000; i++) {
        const objNum = header.parseObject();
        const objOffset = header.parseObject();
        if (typeof objNum !== 'number' || typeof objOffset !== 'number') break;
        if (!offsets.has(objNum)) offsets.set(objNum, objOffset);
      }
      objStm = { data, offsets, first };
      this.objectStreams.set(streamNum, objStm);
    }
    return objStm;
  }

  /** Offsets of "n g obj" found by scanning the bytes of this revision (later definitions win). */
  private scan(): Map<number, number> {
    if (this.scanned) return this.scanned;
    const found = new Map<number, number>();
    const text = Buffer.from(this.data.buffer, this.data.byteOffset, this.limit).toString('latin1');
    const re = /(?<![0-9])(\d{1,8})[ \t\r\n\f\0]+(\d{1,5})[ \t\r\n\f\0]+obj(?![A-Za-z])/g;
    for (let m = re.exec(text); m; m = re.exec(text)) found.set(Number(m[1]), m.index);
    this.scanned = found;
    return found;
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
        if (table.has(num)) continue;
        if (type === 'n') table.set(num, { kind: 'offset', offset, gen });
        else if (type === 'f') table.set(num, { kind: 'free' });
        else throw new PdfSyntaxError('bad xref entry type');
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
        if (entries.has(num)) continue;
        if (type === 0) entries.set(num, { kind: 'free' });
        else if (type === 1) entries.set(num, { kind: 'offset', offset: a, gen: b });
        else if (type === 2) entries.set(num, { kind: 'compressed', stream: a, index: b });
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

/** Where each "%%EOF" marker ends, in file order. */
export function revisionEnds(data: Uint8Array): RevisionEnd[] {
  const ends: RevisionEnd[] = [];
  for (let at = indexOf(data, '%%EOF', 0); at >= 0 && ends.length < 10_000; at = indexOf(data, '%%EOF', at + 5)) {
    let end = at + 5;
    if (data[end] === 0x0d) end++;
    if (data[end] === 0x0a) end++;
    ends.push({ marker: at + 5, end });
  }
  return ends;
}

export const isPdfRef = (v: PdfValue | undefined): v is PdfRef => v instanceof PdfRef;
