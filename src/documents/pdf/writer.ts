import { randomBytes } from 'node:crypto';
import type { PdfView } from './document.js';
import { PdfDict, PdfName, PdfRef, PdfStream, PdfString, hexString, pdfDict, pdfName, type PdfValue } from './objects.js';

/**
 * The one PDF writer: serialises the object model of objects.ts and appends incremental updates
 * (ISO 32000-1 §7.5.6) to a file read by PdfView. The original bytes are never touched; new and
 * replaced objects follow with a cross-reference section of the kind the file's last section is
 * (a classic table, or an xref stream) and a trailer whose /Prev points back.
 */

export class PdfWriteError extends Error {}

/** Where a value that was asked to be tracked landed in the output (end exclusive). */
export interface Span {
  start: number;
  end: number;
}

const DELIMITERS = new Set([...'()<>[]{}/%#'].map((c) => c.charCodeAt(0)));

function formatNumber(n: number): string {
  if (!Number.isFinite(n)) throw new PdfWriteError(`${n} is not a PDF number`);
  if (Number.isInteger(n)) return Math.abs(n) < 1e21 ? String(n) : BigInt(n).toString();
  const plain = String(n);
  if (!plain.includes('e')) return plain;
  // PDF has no exponent notation (§7.3.3).
  return n.toFixed(20).replace(/0+$/, '').replace(/\.$/, '');
}

function formatName(name: string): string {
  let out = '/';
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (c > 0xff) throw new PdfWriteError('a name holds a character that is not a byte');
    out += c < 0x21 || c > 0x7e || DELIMITERS.has(c) ? `#${c.toString(16).toUpperCase().padStart(2, '0')}` : name[i];
  }
  return out;
}

function formatString(s: PdfString): string {
  if (s.hex) return `<${Buffer.from(s.bytes).toString('hex').toUpperCase()}>`;
  let out = '(';
  for (const c of s.bytes) {
    if (c === 0x28 || c === 0x29 || c === 0x5c) out += `\\${String.fromCharCode(c)}`;
    else if (c < 0x20 || c > 0x7e) out += `\\${c.toString(8).padStart(3, '0')}`;
    else out += String.fromCharCode(c);
  }
  return `${out})`;
}

/**
 * Collects output as chunks and records where tracked values were written. Syntax is gathered as
 * one string between binary chunks (every character a byte: names, strings and numbers are
 * written in Latin-1), instead of a Buffer per token.
 */
class Sink {
  private readonly parts: Uint8Array[] = [];
  private pending = '';
  length = 0;

  constructor(
    private readonly tracked: ReadonlySet<object>,
    readonly spans: Map<object, Span>,
  ) {}

  get chunks(): Uint8Array[] {
    this.flush();
    return this.parts;
  }

  private flush(): void {
    if (this.pending.length === 0) return;
    this.parts.push(Buffer.from(this.pending, 'latin1'));
    this.pending = '';
  }

  text(s: string): void {
    this.pending += s;
    this.length += s.length;
  }

  bytes(b: Uint8Array): void {
    this.flush();
    this.parts.push(b);
    this.length += b.length;
  }

  value(v: PdfValue, depth = 0): void {
    if (depth > 256) throw new PdfWriteError('objects nested too deeply to write');
    const track = v !== null && typeof v === 'object' && this.tracked.has(v);
    const start = this.length;
    if (v === null) this.text('null');
    else if (typeof v === 'boolean') this.text(v ? 'true' : 'false');
    else if (typeof v === 'number') this.text(formatNumber(v));
    else if (v instanceof PdfName) this.text(formatName(v.name));
    else if (v instanceof PdfString) this.text(formatString(v));
    else if (v instanceof PdfRef) this.text(`${v.num} ${v.gen} R`);
    else if (Array.isArray(v)) {
      this.text('[');
      v.forEach((item, i) => {
        if (i > 0) this.text(' ');
        this.value(item, depth + 1);
      });
      this.text(']');
    } else if (v instanceof PdfDict) {
      this.text('<<');
      for (const [key, item] of v.entries) {
        this.text(`${formatName(key)} `);
        this.value(item, depth + 1);
        this.text(' ');
      }
      this.text('>>');
    } else if (v instanceof PdfStream) {
      if (depth > 0) throw new PdfWriteError('a stream can only be an indirect object');
      const raw = v.raw();
      const dict = new Map(v.dict.entries);
      dict.set('Length', raw.length);
      this.value(new PdfDict(dict), depth + 1);
      this.text('\nstream\n');
      this.bytes(raw);
      this.text('\nendstream');
    }
    if (track) this.spans.set(v, { start, end: this.length });
  }
}

/** The bytes of one object as PDF syntax (for tests and for sizing). */
export function serializeValue(value: PdfValue): Buffer {
  const sink = new Sink(new Set(), new Map());
  sink.value(value);
  return Buffer.concat(sink.chunks, sink.length);
}

export interface WrittenUpdate {
  /** The whole file: the original bytes followed by the update. */
  bytes: Buffer;
  /** Offsets in `bytes` of the values passed to write() as `track`. */
  spans: Map<object, Span>;
}

const XREF_STREAM_WIDTHS = [1, 4, 2];

/**
 * An incremental update of the document `view` shows (a view of the whole file, as the verifier
 * reads it). Objects are set by reference; replacing an existing object keeps its number and
 * generation (use view.refTo). Writes nothing until write(), which refuses a file the view found
 * ambiguous (view.ambiguities).
 */
export class IncrementalWriter {
  private nextNumber: number;
  private readonly objects = new Map<number, { ref: PdfRef; value: PdfValue }>();

  constructor(readonly view: PdfView) {
    if (view.limit !== view.data.length) throw new PdfWriteError('an update is appended to the whole file, not to an earlier revision');
    if (view.reconstructed || view.startxref === undefined) throw new PdfWriteError('the file has no cross-reference section to append to');
    if (view.encryption) throw new PdfWriteError('encrypted files are not written');
    this.nextNumber = view.nextObjectNumber;
  }

  allocate(): PdfRef {
    return new PdfRef(this.nextNumber++, 0);
  }

  /** Adds a new object or replaces an existing one. */
  set(ref: PdfRef, value: PdfValue): void {
    this.objects.set(ref.num, { ref, value });
  }

  /** The value this update gives object `num`, if it sets one. */
  get(num: number): PdfValue | undefined {
    return this.objects.get(num)?.value;
  }

  /**
   * The file with this update appended. `track` lists values (by identity) whose position in the
   * output the caller needs, such as a signature's /Contents and /ByteRange.
   */
  write(track: Iterable<object> = []): WrittenUpdate {
    // An update extends what the reader read; where readers disagree, it would extend a guess.
    if (this.view.ambiguities.length > 0) throw new PdfWriteError(`the file can be read in more than one way: ${this.view.ambiguities[0]}`);
    const data = this.view.data;
    const sink = new Sink(new Set(track), new Map());
    const last = data[data.length - 1];
    if (last !== 0x0a && last !== 0x0d) sink.text('\n');
    const base = data.length;
    const offsets = new Map<number, { offset: number; gen: number }>();
    for (const { ref, value } of [...this.objects.values()].sort((a, b) => a.ref.num - b.ref.num)) {
      offsets.set(ref.num, { offset: base + sink.length, gen: ref.gen });
      sink.text(`${ref.num} ${ref.gen} obj\n`);
      sink.value(value);
      sink.text('\nendobj\n');
    }
    const xrefOffset = base + sink.length;
    if (this.view.sectionKinds[0] === 'stream') this.xrefStream(sink, offsets, xrefOffset);
    else this.xrefTable(sink, offsets);
    sink.text(`startxref\n${xrefOffset}\n%%EOF\n`);
    const spans = new Map<object, Span>();
    for (const [value, span] of sink.spans) spans.set(value, { start: base + span.start, end: base + span.end });
    return { bytes: Buffer.concat([data, ...sink.chunks], base + sink.length), spans };
  }

  private trailer(size: number): Record<string, PdfValue | undefined> {
    const old = this.view.trailer;
    const id = old.get('ID');
    const validId = Array.isArray(id) && id.length === 2 && id.every((part) => part instanceof PdfString);
    const fresh = validId ? undefined : hexString(randomBytes(16));
    const root = old.get('Root');
    const info = old.get('Info');
    return {
      Size: size,
      Root: root instanceof PdfRef ? root : undefined,
      Info: info instanceof PdfRef ? info : undefined,
      ID: fresh ? [fresh, fresh] : id,
      Prev: this.view.startxref,
    };
  }

  private size(): number {
    return Math.max(this.view.nextObjectNumber, this.nextNumber);
  }

  private xrefTable(sink: Sink, entries: Map<number, { offset: number; gen: number }>): void {
    let text = 'xref\n';
    for (const run of contiguousRuns([...entries.keys()].sort((a, b) => a - b))) {
      text += `${run[0]} ${run.length}\n`;
      for (const num of run) {
        const e = entries.get(num)!;
        text += `${String(e.offset).padStart(10, '0')} ${String(e.gen).padStart(5, '0')} n\r\n`;
      }
    }
    sink.text(`${text}trailer\n`);
    sink.value(pdfDict(this.trailer(this.size())));
    sink.text('\n');
  }

  private xrefStream(sink: Sink, entries: Map<number, { offset: number; gen: number }>, xrefOffset: number): void {
    const self = this.allocate();
    const all = new Map(entries).set(self.num, { offset: xrefOffset, gen: 0 });
    const numbers = [...all.keys()].sort((a, b) => a - b);
    const row = XREF_STREAM_WIDTHS.reduce((a, b) => a + b, 0);
    const rows = Buffer.alloc(numbers.length * row);
    numbers.forEach((num, i) => {
      const e = all.get(num)!;
      if (e.offset > 0xffffffff) throw new PdfWriteError('the file is too large for this update');
      rows.writeUInt8(1, i * row);
      rows.writeUInt32BE(e.offset, i * row + 1);
      rows.writeUInt16BE(e.gen, i * row + 5);
    });
    const index = contiguousRuns(numbers).flatMap((run) => [run[0]!, run.length]);
    const dict = pdfDict({ Type: pdfName('XRef'), W: XREF_STREAM_WIDTHS, Index: index, ...this.trailer(this.size()) });
    sink.text(`${self.num} 0 obj\n`);
    sink.value(new PdfStream(dict, rows, 0, rows.length));
    sink.text('\nendobj\n');
  }
}

function contiguousRuns(sorted: number[]): number[][] {
  const runs: number[][] = [];
  for (const n of sorted) {
    const run = runs.at(-1);
    if (run && run[run.length - 1] === n - 1) run.push(n);
    else runs.push([n]);
  }
  return runs;
}
