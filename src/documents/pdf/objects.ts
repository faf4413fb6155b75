/** The PDF object model used by the verifier: small, immutable, with byte positions kept where they matter. */

export class PdfName {
  constructor(readonly name: string) {}
}

export class PdfString {
  /** start/end are the token's byte offsets in the file (end exclusive, delimiters included); -1 when inside an object stream. */
  constructor(
    readonly bytes: Uint8Array,
    readonly hex: boolean,
    readonly start: number,
    readonly end: number,
  ) {}

  text(): string {
    const b = this.bytes;
    if (b.length >= 2 && b[0] === 0xfe && b[1] === 0xff) {
      let out = '';
      for (let i = 2; i + 1 < b.length; i += 2) out += String.fromCharCode((b[i]! << 8) | b[i + 1]!);
      return out;
    }
    if (b.length >= 3 && b[0] === 0xef && b[1] === 0xbb && b[2] === 0xbf) return Buffer.from(b.subarray(3)).toString('utf8');
    return Buffer.from(b).toString('latin1');
  }
}

export class PdfRef {
  constructor(
    readonly num: number,
    readonly gen: number,
  ) {}

  get key(): string {
    return `${this.num} ${this.gen}`;
  }
}

export class PdfDict {
  constructor(readonly entries: Map<string, PdfValue>) {}

  get(key: string): PdfValue | undefined {
    return this.entries.get(key);
  }

  has(key: string): boolean {
    return this.entries.has(key);
  }
}

export class PdfStream {
  /** dataStart/dataEnd: raw (still encoded) stream bytes, as offsets into `source`. */
  constructor(
    readonly dict: PdfDict,
    readonly source: Uint8Array,
    readonly dataStart: number,
    readonly dataEnd: number,
  ) {}

  raw(): Uint8Array {
    return this.source.subarray(this.dataStart, this.dataEnd);
  }
}

export type PdfValue = null | boolean | number | PdfName | PdfString | PdfRef | PdfDict | PdfStream | PdfValue[];

export const isName = (v: PdfValue | undefined, name?: string): v is PdfName =>
  v instanceof PdfName && (name === undefined || v.name === name);

export const isDict = (v: PdfValue | undefined): v is PdfDict => v instanceof PdfDict;

export const asDict = (v: PdfValue | undefined): PdfDict | undefined =>
  v instanceof PdfDict ? v : v instanceof PdfStream ? v.dict : undefined;

export const asArray = (v: PdfValue | undefined): PdfValue[] | undefined => (Array.isArray(v) ? v : undefined);

export const asNumber = (v: PdfValue | undefined): number | undefined => (typeof v === 'number' ? v : undefined);

export const asText = (v: PdfValue | undefined): string | undefined => (v instanceof PdfString ? v.text() : undefined);

export const nameOf = (v: PdfValue | undefined): string | undefined => (v instanceof PdfName ? v.name : undefined);

/** Structural equality of two objects (references compared by number, streams by their raw bytes). */
export function pdfEqual(a: PdfValue | undefined, b: PdfValue | undefined, depth = 0): boolean {
  if (depth > 64) return false;
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined) return false;
  if (typeof a !== 'object' || typeof b !== 'object') return a === b;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    return a.every((item, i) => pdfEqual(item, b[i], depth + 1));
  }
  if (a instanceof PdfName) return b instanceof PdfName && a.name === b.name;
  if (a instanceof PdfString) return b instanceof PdfString && Buffer.from(a.bytes).equals(b.bytes);
  if (a instanceof PdfRef) return b instanceof PdfRef && a.num === b.num && a.gen === b.gen;
  if (a instanceof PdfStream) {
    return b instanceof PdfStream && pdfEqual(a.dict, b.dict, depth + 1) && Buffer.from(a.raw()).equals(b.raw());
  }
  if (a instanceof PdfDict) {
    if (!(b instanceof PdfDict) || a.entries.size !== b.entries.size) return false;
    for (const [key, value] of a.entries) {
      if (!b.entries.has(key) || !pdfEqual(value, b.entries.get(key), depth + 1)) return false;
    }
    return true;
  }
  return false;
}

/* Building new objects (the writer serialises them; see writer.ts). */

export const pdfName = (name: string): PdfName => new PdfName(name);

/** A dictionary from a record; entries whose value is undefined are left out. */
export function pdfDict(entries: Record<string, PdfValue | undefined>): PdfDict {
  const map = new Map<string, PdfValue>();
  for (const [key, value] of Object.entries(entries)) if (value !== undefined) map.set(key, value);
  return new PdfDict(map);
}

/** A copy of `dict` with `changes` applied (an undefined value removes the key); the original is untouched. */
export function withEntries(dict: PdfDict, changes: Record<string, PdfValue | undefined>): PdfDict {
  const map = new Map(dict.entries);
  for (const [key, value] of Object.entries(changes)) {
    if (value === undefined) map.delete(key);
    else map.set(key, value);
  }
  return new PdfDict(map);
}

/** A new stream holding `data` as its raw (encoded) bytes; /Length is written by the writer. */
export const pdfStream = (dict: PdfDict, data: Uint8Array): PdfStream => new PdfStream(dict, data, 0, data.length);

/** A text string (ISO 32000-1 §7.9.2.2): literal bytes for printable ASCII, UTF-16BE with BOM otherwise. */
export function textString(text: string): PdfString {
  if (/^[\x20-\x7e]*$/.test(text)) return new PdfString(Buffer.from(text, 'latin1'), false, -1, -1);
  const utf16 = Buffer.from(`\ufeff${text}`, 'utf16le').swap16();
  return new PdfString(utf16, true, -1, -1);
}

/** A byte string (a hash, an ID, signature contents), written in hex. */
export const hexString = (bytes: Uint8Array): PdfString => new PdfString(bytes, true, -1, -1);
