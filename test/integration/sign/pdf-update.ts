import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Hand-built PDF changes for tamper tests. Objects are read with qpdf (an independent reader,
 * which prints an object's newest revision in PDF syntax); updates are appended by hand as a
 * real incremental update: new object bodies, an xref section and a trailer whose /Prev points
 * back, so the original bytes stay untouched.
 */
export class PdfEditor {
  constructor(private readonly scratchDir: string) {}

  /** `qpdf --show-object` of an object number or 'trailer', for the newest revision. */
  show(pdf: Buffer, object: number | 'trailer'): string {
    const file = path.join(this.scratchDir, `show-${process.hrtime.bigint()}.pdf`);
    writeFileSync(file, pdf);
    try {
      return execFileSync('qpdf', [`--show-object=${object}`, file], { encoding: 'latin1', maxBuffer: 64 * 1024 * 1024 });
    } finally {
      rmSync(file, { force: true });
    }
  }

  /** Object number of an indirect reference `key N G R` inside a dictionary's text. */
  static ref(dictionary: string, key: string): number {
    const match = new RegExp(`${key}\\s+(\\d+)\\s+\\d+\\s+R`).exec(dictionary);
    if (!match) throw new Error(`no ${key} reference in ${dictionary.slice(0, 200)}`);
    return Number(match[1]);
  }

  /** The first free object number (the newest trailer's /Size). */
  nextObjectNumber(pdf: Buffer): number {
    return Number(/\/Size\s+(\d+)/.exec(this.show(pdf, 'trailer'))![1]);
  }

  /** Appends one incremental update that (re)defines `objects` (number → body text, generation 0). */
  appendUpdate(pdf: Buffer, objects: Map<number, string>): Buffer {
    const trailer = this.show(pdf, 'trailer');
    const prev = Number([...pdf.toString('latin1').matchAll(/startxref\s+(\d+)/g)].pop()![1]);
    const parts: Buffer[] = [pdf, Buffer.from(pdf[pdf.length - 1] === 0x0a ? '' : '\n', 'latin1')];
    let offset = parts.reduce((n, b) => n + b.length, 0);
    const offsets = new Map<number, number>();
    for (const [number, body] of [...objects].sort(([a], [b]) => a - b)) {
      const text = Buffer.from(`${number} 0 obj\n${body}\nendobj\n`, 'latin1');
      offsets.set(number, offset);
      parts.push(text);
      offset += text.length;
    }
    let xref = 'xref\n';
    for (const [number, at] of offsets) xref += `${number} 1\n${String(at).padStart(10, '0')} 00000 n\r\n`;
    const size = Math.max(Number(/\/Size\s+(\d+)/.exec(trailer)![1]), ...[...objects.keys()].map((n) => n + 1));
    const carried = ['/Root', '/Info'].flatMap((key) => {
      const match = new RegExp(`${key}\\s+\\d+\\s+\\d+\\s+R`).exec(trailer);
      return match ? [match[0]] : [];
    });
    const id = /\/ID\s*\[[^\]]*\]/.exec(trailer)?.[0];
    const entries = [`/Size ${size}`, ...carried, ...(id ? [id] : []), `/Prev ${prev}`].join(' ');
    parts.push(Buffer.from(`${xref}trailer\n<< ${entries} >>\nstartxref\n${offset}\n%%EOF\n`, 'latin1'));
    return Buffer.concat(parts);
  }
}

/** Offset and length of the signed ranges of the last signature (its /ByteRange). */
export function lastByteRange(pdf: Buffer): [number, number, number, number] {
  const s = pdf.toString('latin1');
  const at = s.lastIndexOf('/ByteRange');
  return /\[\s*(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\s*\]/.exec(s.slice(at))!.slice(1).map(Number) as [number, number, number, number];
}

/**
 * The PDF with one byte changed inside the first signed range: a byte in the middle of the data
 * of the first content stream, so the file still parses and only the digest can notice.
 */
export function flipByteInSignedRange(pdf: Buffer): { tampered: Buffer; offset: number } {
  const [start, length] = lastByteRange(pdf);
  const s = pdf.toString('latin1');
  const match = /\/Length\s+(\d+)[^>]*>>\s*stream\r?\n/.exec(s.slice(start, start + length));
  if (!match) throw new Error('no stream inside the signed range');
  const offset = start + match.index + match[0].length + Math.floor(Number(match[1]) / 2);
  if (offset >= start + length) throw new Error('stream data outside the signed range');
  const tampered = Buffer.from(pdf);
  tampered[offset] ^= 0x01;
  return { tampered, offset };
}
