import { randomBytes } from 'node:crypto';
import { PDFRef } from 'pdf-lib';
import type { PdfStructure } from './structure.js';

/**
 * Writes an incremental update: the original bytes are kept as they are, and new or
 * replaced objects follow with their own cross-reference section (a classic table, or an
 * xref stream when the original uses xref streams) and a trailer whose /Prev points back.
 */
export interface WrittenUpdate {
  bytes: Buffer;
  /** Offset, in the whole file, of each written object's body (after "N G obj\n"). */
  bodyOffsets: Map<number, number>;
}

export class IncrementalUpdate {
  private nextNumber: number;
  private readonly objects = new Map<number, { ref: PDFRef; body: Buffer }>();

  constructor(private readonly structure: PdfStructure) {
    this.nextNumber = structure.firstFreeObjectNumber;
  }

  allocate(): PDFRef {
    return PDFRef.of(this.nextNumber++, 0);
  }

  /** Adds a new object or replaces an existing one (same number and generation). */
  set(ref: PDFRef, body: string | Buffer): void {
    this.objects.set(ref.objectNumber, { ref, body: typeof body === 'string' ? Buffer.from(body, 'latin1') : body });
  }

  setStream(ref: PDFRef, dictionaryEntries: string, data: Buffer): void {
    const head = Buffer.from(`<<${dictionaryEntries} /Length ${data.length}>>\nstream\n`, 'latin1');
    this.set(ref, Buffer.concat([head, data, Buffer.from('\nendstream', 'latin1')]));
  }

  write(): WrittenUpdate {
    const original = this.structure.bytes;
    const last = original[original.length - 1];
    const parts: Buffer[] = [original];
    let offset = original.length;
    const push = (b: Buffer) => { parts.push(b); offset += b.length; };
    if (last !== 0x0a && last !== 0x0d) push(Buffer.from('\n'));

    const objectOffsets = new Map<number, { offset: number; generation: number }>();
    const bodyOffsets = new Map<number, number>();
    const sorted = [...this.objects.values()].sort((a, b) => a.ref.objectNumber - b.ref.objectNumber);
    for (const { ref, body } of sorted) {
      const header = Buffer.from(`${ref.objectNumber} ${ref.generationNumber} obj\n`, 'latin1');
      objectOffsets.set(ref.objectNumber, { offset, generation: ref.generationNumber });
      bodyOffsets.set(ref.objectNumber, offset + header.length);
      push(header);
      push(body);
      push(Buffer.from('\nendobj\n', 'latin1'));
    }
    const xrefOffset = offset;
    push(this.structure.usesXrefStream ? this.xrefStream(objectOffsets, xrefOffset) : this.xrefTable(objectOffsets));
    push(Buffer.from(`startxref\n${xrefOffset}\n%%EOF\n`, 'latin1'));
    return { bytes: Buffer.concat(parts, offset), bodyOffsets };
  }

  private trailerEntries(size: number): string {
    const s = this.structure;
    const id = s.id ? s.id.toString() : (() => {
      const fresh = randomBytes(16).toString('hex').toUpperCase();
      return `[<${fresh}> <${fresh}>]`;
    })();
    return `/Size ${size} /Root ${s.rootRef.toString()}${s.info ? ` /Info ${s.info.toString()}` : ''} /ID ${id} /Prev ${s.startXref}`;
  }

  private xrefTable(entries: Map<number, { offset: number; generation: number }>): Buffer {
    const numbers = [...entries.keys()].sort((a, b) => a - b);
    let text = 'xref\n';
    for (const run of contiguousRuns(numbers)) {
      text += `${run[0]} ${run.length}\n`;
      for (const n of run) {
        const e = entries.get(n)!;
        text += `${String(e.offset).padStart(10, '0')} ${String(e.generation).padStart(5, '0')} n\r\n`;
      }
    }
    text += `trailer\n<<${this.trailerEntries(this.size(numbers))}>>\n`;
    return Buffer.from(text, 'latin1');
  }

  private xrefStream(entries: Map<number, { offset: number; generation: number }>, xrefOffset: number): Buffer {
    const selfNumber = this.nextNumber++;
    const all = new Map(entries);
    all.set(selfNumber, { offset: xrefOffset, generation: 0 });
    const numbers = [...all.keys()].sort((a, b) => a - b);
    const runs = contiguousRuns(numbers);
    const data = Buffer.alloc(numbers.length * 7);
    numbers.forEach((n, i) => {
      const e = all.get(n)!;
      data.writeUInt8(1, i * 7);
      data.writeUInt32BE(e.offset, i * 7 + 1);
      data.writeUInt16BE(e.generation, i * 7 + 5);
    });
    const index = runs.map((r) => `${r[0]} ${r.length}`).join(' ');
    const head = `${selfNumber} 0 obj\n<</Type /XRef /W [1 4 2] /Index [${index}] ${this.trailerEntries(this.size(numbers))} /Length ${data.length}>>\nstream\n`;
    return Buffer.concat([Buffer.from(head, 'latin1'), data, Buffer.from('\nendstream\nendobj\n', 'latin1')]);
  }

  private size(numbers: number[]): number {
    return Math.max(this.structure.firstFreeObjectNumber, this.nextNumber, (numbers.at(-1) ?? 0) + 1);
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
