import { inflateSync, constants } from 'node:zlib';
import { PdfSyntaxError } from './parser.js';
import { asArray, asDict, asNumber, nameOf, type PdfStream, type PdfValue } from './objects.js';

/** Decoded object and xref streams are capped: a small compressed stream must not expand into gigabytes. */
export const MAX_DECODED_STREAM = 64 * 1024 * 1024;
/** All the structural streams one verification decodes, together (many small bombs are one big one). */
export const MAX_DECODED_TOTAL = 256 * 1024 * 1024;

/** How many decoded bytes one verification may still produce; shared by all views of one file. */
export class DecodeBudget {
  constructor(public remaining = MAX_DECODED_TOTAL) {}

  spend(bytes: number): void {
    this.remaining -= bytes;
    if (this.remaining < 0) throw new PdfSyntaxError('the structural streams of this file expand beyond the limit');
  }
}

function inflate(data: Uint8Array, budget: DecodeBudget): Uint8Array {
  const limit = Math.max(0, Math.min(MAX_DECODED_STREAM, budget.remaining));
  try {
    const out = inflateSync(data, { maxOutputLength: Math.max(1, limit) });
    budget.spend(out.length);
    return out;
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') throw new PdfSyntaxError('stream expands beyond the limit');
    // Truncated or slightly corrupt streams: take what inflates.
    let out: Uint8Array;
    try {
      out = inflateSync(data, { maxOutputLength: Math.max(1, limit), finishFlush: constants.Z_SYNC_FLUSH });
    } catch {
      throw new PdfSyntaxError('stream cannot be decompressed');
    }
    budget.spend(out.length);
    return out;
  }
}

function unpredict(data: Uint8Array, params: PdfValue | undefined): Uint8Array {
  const dict = asDict(params);
  const predictor = asNumber(dict?.get('Predictor')) ?? 1;
  if (predictor < 10) {
    if (predictor === 1) return data;
    throw new PdfSyntaxError('TIFF predictor is not supported');
  }
  const colors = asNumber(dict?.get('Colors')) ?? 1;
  const bpc = asNumber(dict?.get('BitsPerComponent')) ?? 8;
  const columns = asNumber(dict?.get('Columns')) ?? 1;
  const bpp = Math.max(1, Math.ceil((colors * bpc) / 8));
  const rowLength = Math.ceil((colors * bpc * columns) / 8);
  if (rowLength <= 0 || rowLength > 1 << 20) throw new PdfSyntaxError('bad predictor parameters');
  const rows = Math.floor(data.length / (rowLength + 1));
  const out = new Uint8Array(rows * rowLength);
  let prev = new Uint8Array(rowLength);
  for (let r = 0; r < rows; r++) {
    const type = data[r * (rowLength + 1)]!;
    const row = data.subarray(r * (rowLength + 1) + 1, (r + 1) * (rowLength + 1));
    const cur = out.subarray(r * rowLength, (r + 1) * rowLength);
    for (let i = 0; i < rowLength; i++) {
      const left = i >= bpp ? cur[i - bpp]! : 0;
      const up = prev[i]!;
      const upLeft = i >= bpp ? prev[i - bpp]! : 0;
      let v = row[i]!;
      if (type === 1) v += left;
      else if (type === 2) v += up;
      else if (type === 3) v += (left + up) >> 1;
      else if (type === 4) {
        const p = left + up - upLeft;
        const pa = Math.abs(p - left);
        const pb = Math.abs(p - up);
        const pc = Math.abs(p - upLeft);
        v += pa <= pb && pa <= pc ? left : pb <= pc ? up : upLeft;
      }
      cur[i] = v & 0xff;
    }
    prev = cur;
  }
  return out;
}

/** Decodes a stream whose filters are FlateDecode (with predictors) or none; other filters are not needed for structure. */
export function decodeStream(stream: PdfStream, budget = new DecodeBudget()): Uint8Array {
  const filterValue = stream.dict.get('Filter');
  const filters = filterValue === undefined ? [] : (asArray(filterValue) ?? [filterValue]);
  const paramsValue = stream.dict.get('DecodeParms');
  const params = asArray(paramsValue) ?? [paramsValue ?? null];
  let data = stream.raw();
  filters.forEach((filter, i) => {
    const name = nameOf(filter);
    if (name !== 'FlateDecode' && name !== 'Fl') throw new PdfSyntaxError(`unsupported structural filter ${name}`);
    data = unpredict(inflate(data, budget), params[i] ?? undefined);
  });
  return data;
}
