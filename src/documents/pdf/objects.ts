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
