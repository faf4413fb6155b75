import { PdfDict, PdfName, PdfRef, PdfStream, PdfString, pdfEqual, type PdfValue } from './objects.js';

/** Thrown for syntax the parser cannot make sense of; callers treat the object as unreadable. */
export class PdfSyntaxError extends Error {}

const MAX_DEPTH = 64;
const MAX_COLLECTION_ITEMS = 200_000;

const isWhite = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0c || c === 0x00;
const isDelimiter = (c: number) =>
  c === 0x28 || c === 0x29 || c === 0x3c || c === 0x3e || c === 0x5b || c === 0x5d || c === 0x7b || c === 0x7d || c === 0x2f || c === 0x25;
const isRegular = (c: number) => !isWhite(c) && !isDelimiter(c);
const isDigit = (c: number) => c >= 0x30 && c <= 0x39;

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

/** A growable byte buffer (a number[] costs 8 bytes per byte: a 50 MB string would take 400 MB). */
class ByteSink {
  private buf = new Uint8Array(64);
  length = 0;

  push(byte: number): void {
    if (this.length === this.buf.length) {
      const grown = new Uint8Array(this.buf.length * 2);
      grown.set(this.buf);
      this.buf = grown;
    }
    this.buf[this.length++] = byte;
  }

  bytes(): Uint8Array {
    return this.buf.slice(0, this.length);
  }
}

const ESCAPES: Record<number, number> = { 0x6e: 10, 0x72: 13, 0x74: 9, 0x62: 8, 0x66: 12, 0x28: 0x28, 0x29: 0x29, 0x5c: 0x5c };

type Keyword = { keyword: string };
type Token = PdfValue | Keyword | { open: '<<' | '[' } | { close: '>>' | ']' };
const OPEN_DICT = { open: '<<' } as const;
const OPEN_ARRAY = { open: '[' } as const;
const CLOSE_DICT = { close: '>>' } as const;
const CLOSE_ARRAY = { close: ']' } as const;
/** Up to 15 decimal digits a double holds exactly, so summing them digit by digit equals Number(text). */
const MAX_EXACT_DIGITS = 15;

/** Resolves an indirect /Length while a stream is being read (the xref may already know it). */
export type LengthResolver = (ref: PdfRef) => number | undefined;


/**
 * A PDF object parser over a byte buffer. `base` maps positions to file offsets: it is 0 for
 * the file itself and -1 for decoded object-stream data (strings there have no file position).
 */
export class PdfParser {
  pos: number;
  private names?: (string | undefined)[];
  /**
   * Syntax readers resolve differently (a key repeated with another value), in the order met; kept
   * only when `collectAmbiguities` (the caller reports them, even when the object turns out unreadable).
   */
  ambiguities?: string[];

  constructor(
    readonly data: Uint8Array,
    start = 0,
    readonly inFile = true,
    readonly limit = data.length,
    readonly resolveLength?: LengthResolver,
    readonly collectAmbiguities = false,
  ) {
    this.pos = start;
  }

  skipWhitespace(): void {
    const d = this.data;
    while (this.pos < this.limit) {
      const c = d[this.pos]!;
      if (isWhite(c)) this.pos++;
      else if (c === 0x25) {
        while (this.pos < this.limit && d[this.pos] !== 0x0a && d[this.pos] !== 0x0d) this.pos++;
      } else break;
    }
  }

  private readRegular(): string {
    const start = this.pos;
    while (this.pos < this.limit && isRegular(this.data[this.pos]!)) this.pos++;
    return latin1(this.data, start, this.pos);
  }

  private readName(): PdfName {
    return new PdfName(this.readNameText());
  }

  /** A name's text (after `#` escapes); short plain ones come from the names already read in this buffer. */
  private readNameText(): string {
    this.pos++; // '/'
    const start = this.pos;
    let end = start;
    while (end < this.limit && isRegular(this.data[end]!) && this.data[end] !== 0x23) end++;
    if (end >= this.limit || !isRegular(this.data[end]!)) {
      this.pos = end;
      return end - start <= MAX_SHARED_NAME ? sharedName(this.names ??= namesOf(this.data), this.data, start, end) : latin1(this.data, start, end);
    }
    // A '#' escape: decoded byte by byte.
    const bytes = new ByteSink();
    while (this.pos < this.limit && isRegular(this.data[this.pos]!)) {
      const c = this.data[this.pos]!;
      if (c === 0x23 && this.pos + 2 < this.limit) {
        const h = hexValue(this.data[this.pos + 1]!);
        const l = hexValue(this.data[this.pos + 2]!);
        if (h >= 0 && l >= 0) {
          bytes.push(h * 16 + l);
          this.pos += 3;
          continue;
        }
      }
      bytes.push(c);
      this.pos++;
    }
    return Buffer.from(bytes.bytes()).toString('latin1');
  }

  private readLiteralString(): PdfString {
    const start = this.pos;
    const d = this.data;
    this.pos++;
    const out = new ByteSink();
    let depth = 1;
    while (this.pos < this.limit) {
      const c = d[this.pos++]!;
      if (c === 0x5c) {
        if (this.pos >= this.limit) break;
        const e = d[this.pos++]!;
        const simple = ESCAPES[e];
        if (simple !== undefined) out.push(simple);
        else if (e >= 0x30 && e <= 0x37) {
          let v = e - 0x30;
          for (let k = 0; k < 2 && this.pos < this.limit && d[this.pos]! >= 0x30 && d[this.pos]! <= 0x37; k++) {
            v = v * 8 + (d[this.pos++]! - 0x30);
          }
          out.push(v & 0xff);
        } else if (e === 0x0d) {
          if (d[this.pos] === 0x0a) this.pos++;
        } else if (e !== 0x0a) out.push(e);
        continue;
      }
      if (c === 0x28) depth++;
      else if (c === 0x29 && --depth === 0) break;
      out.push(c);
    }
    if (depth !== 0) throw new PdfSyntaxError('unterminated string');
    return new PdfString(out.bytes(), false, this.inFile ? start : -1, this.inFile ? this.pos : -1);
  }

  private readHexString(): PdfString {
    const start = this.pos;
    const d = this.data;
    this.pos++;
    const close = indexOf(d, '>', this.pos, this.limit);
    if (close < 0) throw new PdfSyntaxError('unterminated hex string');
    const bytes = new Uint8Array(Math.ceil((close - this.pos) / 2));
    let count = 0;
    let high = -1;
    for (; this.pos < close; this.pos++) {
      const v = hexValue(d[this.pos]!);
      if (v < 0) {
        if (!isWhite(d[this.pos]!)) throw new PdfSyntaxError('bad hex string');
        continue;
      }
      if (high < 0) high = v;
      else {
        bytes[count++] = high * 16 + v;
        high = -1;
      }
    }
    if (high >= 0) bytes[count++] = high * 16;
    this.pos = close + 1;
    return new PdfString(bytes.subarray(0, count), true, this.inFile ? start : -1, this.inFile ? this.pos : -1);
  }

  private nextToken(): Token {
    this.skipWhitespace();
    if (this.pos >= this.limit) throw new PdfSyntaxError('unexpected end of data');
    const d = this.data;
    const c = d[this.pos]!;
    if (c === 0x2f) return this.readName();
    if (c === 0x28) return this.readLiteralString();
    if (c === 0x3c) {
      if (d[this.pos + 1] === 0x3c) {
        this.pos += 2;
        return OPEN_DICT;
      }
      return this.readHexString();
    }
    if (c === 0x3e && d[this.pos + 1] === 0x3e) {
      this.pos += 2;
      return CLOSE_DICT;
    }
    if (c === 0x5b) {
      this.pos++;
      return OPEN_ARRAY;
    }
    if (c === 0x5d) {
      this.pos++;
      return CLOSE_ARRAY;
    }
    if (!isRegular(c)) {
      this.pos++;
      throw new PdfSyntaxError(`unexpected character 0x${c.toString(16)}`);
    }
    if (isDigit(c)) {
      const integer = this.readUnsignedInteger();
      if (integer !== undefined) return integer;
    }
    const word = this.readRegular();
    if (/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/.test(word)) return Number(word);
    if (word === 'true') return true;
    if (word === 'false') return false;
    if (word === 'null') return null;
    return { keyword: word };
  }

  /**
   * A token of digits only (the most common one: offsets, counts, object numbers), summed without
   * making a string; undefined, with nothing consumed, for any other token (signs, reals, long ones).
   */
  private readUnsignedInteger(): number | undefined {
    const d = this.data;
    let p = this.pos;
    let value = 0;
    while (p < this.limit && p - this.pos <= MAX_EXACT_DIGITS && isDigit(d[p]!)) value = value * 10 + (d[p++]! - 0x30);
    if (p - this.pos > MAX_EXACT_DIGITS || (p < this.limit && isRegular(d[p]!))) return undefined;
    this.pos = p;
    return value;
  }

  /** Tries to read "<int> <int> R" after an integer already consumed. */
  private tryReference(first: number): PdfRef | undefined {
    if (!Number.isInteger(first) || first < 0) return undefined;
    const save = this.pos;
    this.skipWhitespace();
    const d = this.data;
    let p = this.pos;
    while (p < this.limit && isDigit(d[p]!)) p++;
    if (p === this.pos || p - this.pos > 10) {
      this.pos = save;
      return undefined;
    }
    let gen = 0;
    for (let i = this.pos; i < p; i++) gen = gen * 10 + (d[i]! - 0x30);
    let q = p;
    while (q < this.limit && isWhite(d[q]!)) q++;
    if (d[q] === 0x52 && (q + 1 >= this.limit || !isRegular(d[q + 1]!))) {
      this.pos = q + 1;
      return new PdfRef(first, gen);
    }
    this.pos = save;
    return undefined;
  }

  /** Reads one direct object (a dictionary followed by `stream` becomes a PdfStream). */
  parseObject(depth = 0): PdfValue {
    if (depth > MAX_DEPTH) throw new PdfSyntaxError('objects nested too deeply');
    const token = this.nextToken();
    if (typeof token === 'number') return this.tryReference(token) ?? token;
    if (token === null || typeof token !== 'object' || token instanceof PdfName || token instanceof PdfString) return token as PdfValue;
    if ('open' in token) return token.open === '[' ? this.parseArray(depth) : this.parseDictOrStream(depth);
    if ('close' in token) throw new PdfSyntaxError(`unexpected ${token.close}`);
    if ('keyword' in token) throw new PdfSyntaxError(`unexpected keyword ${token.keyword}`);
    return token as PdfValue;
  }

  private parseArray(depth: number): PdfValue[] {
    const items: PdfValue[] = [];
    for (;;) {
      this.skipWhitespace();
      if (this.data[this.pos] === 0x5d) {
        this.pos++;
        return items;
      }
      if (items.length >= MAX_COLLECTION_ITEMS) throw new PdfSyntaxError('array too large');
      items.push(this.parseObject(depth + 1));
    }
  }

  private parseDictOrStream(depth: number): PdfDict | PdfStream {
    const entries = new Map<string, PdfValue>();
    for (let items = 0; ; items++) {
      this.skipWhitespace();
      if (this.atDictEnd()) {
        this.pos += 2;
        break;
      }
      if (items >= MAX_COLLECTION_ITEMS) throw new PdfSyntaxError('dictionary too large');
      if (this.data[this.pos] !== 0x2f) {
        // A value where a key belongs (a damaged dictionary): skipped, as poppler and qpdf recover.
        this.parseObject(depth + 1);
        continue;
      }
      const key = this.readNameText();
      this.skipWhitespace();
      if (this.atDictEnd()) continue; // a last key without a value: null, i.e. absent (§7.3.7)
      const value = this.parseObject(depth + 1);
      // Readers differ on which value counts (qpdf and pdf.js keep the last; poppler searches sorted large dictionaries).
      if (this.collectAmbiguities && entries.has(key) && !pdfEqual(entries.get(key), value)) (this.ambiguities ??= []).push(`a dictionary repeats the key /${key} with another value`);
      entries.set(key, value);
    }
    const dict = new PdfDict(entries);
    const save = this.pos;
    this.skipWhitespace();
    if (this.matchKeyword('stream')) return this.readStreamBody(dict);
    this.pos = save;
    return dict;
  }

  /** At `>>` (a method, not a closure made for every dictionary parsed). */
  private atDictEnd(): boolean {
    return this.data[this.pos] === 0x3e && this.data[this.pos + 1] === 0x3e;
  }

  private matchKeyword(word: string): boolean {
    const d = this.data;
    for (let i = 0; i < word.length; i++) if (d[this.pos + i] !== word.charCodeAt(i)) return false;
    const after = this.pos + word.length;
    if (after < this.limit && isRegular(d[after]!)) return false;
    this.pos = after;
    return true;
  }

  private readStreamBody(dict: PdfDict): PdfStream {
    const d = this.data;
    if (d[this.pos] === 0x0d) this.pos++;
    if (d[this.pos] === 0x0a) this.pos++;
    const start = this.pos;
    let length: number | undefined;
    const lengthValue = dict.get('Length');
    if (typeof lengthValue === 'number') length = lengthValue;
    else if (lengthValue instanceof PdfRef) length = this.resolveLength?.(lengthValue);
    if (length !== undefined && Number.isInteger(length) && length >= 0 && start + length <= this.limit) {
      const p = new PdfParser(d, start + length, this.inFile, this.limit);
      p.skipWhitespace();
      if (p.matchKeyword('endstream')) {
        this.pos = p.pos;
        return new PdfStream(dict, d, start, start + length);
      }
    }
    const end = indexOf(d, 'endstream', start, this.limit);
    if (end < 0) throw new PdfSyntaxError('stream without endstream');
    let dataEnd = end;
    if (d[dataEnd - 1] === 0x0a) dataEnd--;
    if (d[dataEnd - 1] === 0x0d) dataEnd--;
    this.pos = end + 'endstream'.length;
    return new PdfStream(dict, d, start, Math.max(start, dataEnd));
  }

  /** Reads "num gen obj <object>" at the current position. */
  parseIndirectObject(): { num: number; gen: number; value: PdfValue } {
    const num = this.nextToken();
    const gen = this.nextToken();
    const kw = this.nextToken();
    if (typeof num !== 'number' || typeof gen !== 'number' || !isKeyword(kw, 'obj')) {
      throw new PdfSyntaxError('not an indirect object');
    }
    const value = this.parseObject();
    return { num, gen, value };
  }

  /** Reads a bare keyword (e.g. "xref", "trailer") if it is next; returns it or undefined. */
  peekKeyword(): string | undefined {
    const save = this.pos;
    this.skipWhitespace();
    if (this.pos < this.limit && isRegular(this.data[this.pos]!)) {
      const word = this.readRegular();
      this.pos = save;
      return word;
    }
    this.pos = save;
    return undefined;
  }

  readKeyword(): string {
    this.skipWhitespace();
    return this.readRegular();
  }
}

const isKeyword = (t: Token, word: string) => t !== null && typeof t === 'object' && 'keyword' in t && t.keyword === word;

const MAX_SHARED_NAME = 32;
const NAME_SLOTS = 512;
/**
 * Per buffer (a request's file, a decoded object stream), the names read in it, one per slot of a
 * small direct-mapped table: a page tree repeats the same few names, and a string made once (its
 * hash kept) costs less in dictionary maps than one made again from bytes. Nothing outlives the buffer.
 */
const namesByBuffer = new WeakMap<Uint8Array, (string | undefined)[]>();

function namesOf(data: Uint8Array): (string | undefined)[] {
  let names = namesByBuffer.get(data);
  if (!names) namesByBuffer.set(data, (names = new Array<string | undefined>(NAME_SLOTS)));
  return names;
}

/** The text of data[start, end) from the table when the slot holds exactly it, else made and stored. */
function sharedName(names: (string | undefined)[], data: Uint8Array, start: number, end: number): string {
  let hash = end - start;
  for (let i = start; i < end; i++) hash = (hash * 31 + data[i]!) | 0;
  const slot = hash & (NAME_SLOTS - 1);
  const known = names[slot];
  if (known !== undefined && known.length === end - start) {
    let same = true;
    for (let i = 0; i < known.length && same; i++) same = known.charCodeAt(i) === data[start + i];
    if (same) return known;
  }
  const text = latin1(data, start, end);
  names[slot] = text;
  return text;
}

/**
 * The latin1 text of data[start, end) without copying the bytes; tokens are short, and for them a
 * loop costs less than a native call (names and keywords were a tenth of verify's page walk).
 */
function latin1(data: Uint8Array, start: number, end: number): string {
  if (end - start <= 32) {
    let text = '';
    for (let i = start; i < end; i++) text += String.fromCharCode(data[i]!);
    return text;
  }
  return Buffer.from(data.buffer, data.byteOffset + start, end - start).toString('latin1');
}

export function indexOf(data: Uint8Array, needle: string, from: number, to = data.length): number {
  const idx = Buffer.from(data.buffer, data.byteOffset, Math.min(to, data.length)).indexOf(needle, from, 'latin1');
  return idx;
}

export function lastIndexOf(data: Uint8Array, needle: string, before: number): number {
  if (before <= 0) return -1;
  return Buffer.from(data.buffer, data.byteOffset, data.length).lastIndexOf(needle, before - 1, 'latin1');
}
