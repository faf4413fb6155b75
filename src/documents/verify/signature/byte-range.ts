import type { RevisionEnd } from '../../pdf/document.js';
import { PdfString, type PdfValue } from '../../pdf/objects.js';
import type { Coverage } from '../types.js';

export interface ByteRangeCheck {
  /** Usable [start, end) ranges when they lie inside the file. */
  ranges?: Array<[number, number]>;
  signedEnd?: number;
  /** The signed data cannot be located (malformed or out of the file). */
  notFound?: string;
  /** The ranges are locatable but not what a PDF signature must look like. */
  formatProblem?: string;
  coverage: Coverage;
}

const isWhitespace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x0c || c === 0x00;

/** Checks /ByteRange against the file and against the position of this signature's /Contents string. */
export function checkByteRange(value: PdfValue | undefined, contents: PdfValue | undefined, data: Uint8Array, revisions: readonly RevisionEnd[]): ByteRangeCheck {
  const br = Array.isArray(value) ? value : [];
  const wellFormed = br.every((n) => typeof n === 'number' && Number.isInteger(n) && n >= 0);
  if (br.length === 2 && wellFormed) {
    // One range (pyHanko's coverage anomaly): what it covers can be hashed, but it leaves nothing out for /Contents.
    const [a, b] = br as number[] as [number, number];
    if (a + b > data.length) return { notFound: '/ByteRange points past the end of the file', coverage: 'unclear' };
    return { ranges: [[a, a + b]], signedEnd: a + b, formatProblem: '/ByteRange names a single range instead of the two around /Contents', coverage: 'unclear' };
  }
  if (br.length !== 4 || !wellFormed) {
    return { notFound: '/ByteRange is not four non-negative integers', coverage: 'unclear' };
  }
  const [a, b, c, d] = br as number[] as [number, number, number, number];
  if (a + b > data.length || c + d > data.length) return { notFound: '/ByteRange points past the end of the file', coverage: 'unclear' };
  const ranges: Array<[number, number]> = [
    [a, a + b],
    [c, c + d],
  ];
  const signedEnd = c + d;
  let formatProblem: string | undefined;
  if (a !== 0) formatProblem = '/ByteRange does not start at the beginning of the file';
  else if (a + b > c) formatProblem = '/ByteRange ranges overlap or are out of order';
  else if (!(contents instanceof PdfString) || contents.start !== b || contents.end !== c) {
    formatProblem = 'the gap in /ByteRange is not exactly this signature\'s /Contents string';
  }
  if (formatProblem) return { ranges, signedEnd, formatProblem, coverage: 'unclear' };
  return { ranges, signedEnd, coverage: coverageOf(signedEnd, data, revisions) };
}

function coverageOf(signedEnd: number, data: Uint8Array, revisions: readonly RevisionEnd[]): Coverage {
  if (!hasContentAfter(data, signedEnd)) return 'entireFile';
  return revisions.some((r) => signedEnd >= r.marker && signedEnd <= r.end) ? 'entireRevision' : 'unclear';
}

/** True when bytes other than whitespace follow `offset`. */
export function hasContentAfter(data: Uint8Array, offset: number): boolean {
  for (let i = offset; i < data.length; i++) if (!isWhitespace(data[i]!)) return true;
  return false;
}
