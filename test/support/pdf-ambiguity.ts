/**
 * Generators for files that PDF readers can read in more than one way (issue 22, "Readers as exact as
 * the display readers"). Each appends one revision to a signed PDF whose page is object 3 (the test
 * PDFs of test/unit/verify/helpers/pdf.ts): the reading the cross-reference names shows the page as
 * signed, while another reading (the first copy of a number, a rebuilt table, the other value of a
 * repeated key) shows a forged page that says "PAY 999 EUR". Without refusing the ambiguity, a
 * verifier that follows the xref finds nothing changed.
 *
 * The bytes are written by hand (not with the project's writer), so the writer cannot make a class
 * harmless; what qpdf reads from each file is asserted in test/integration/pdf/ambiguity.test.ts.
 */

const FORGED_TEXT = 'BT /F1 24 Tf 72 650 Td (PAY 999 EUR) Tj ET';

/** The page of TestPdf.base() pointing at `contents`, with the base document's annotations. */
export const pageDict = (contents: string) =>
  `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents ${contents} /Resources << /Font << /F1 6 0 R >> >> /Annots [7 0 R 8 0 R 9 0 R] >>`;

const SIGNED_PAGE = pageDict('4 0 R');

type Row = { num: number; type: 0 | 1 | 2; a: number; b: number };

/** One hand-written revision: bodies in the order given, then a table or an xref stream with the rows given. */
class RawRevision {
  private readonly parts: Buffer[];
  private length: number;
  readonly prev: number;
  readonly size: number;

  constructor(pdf: Buffer) {
    const text = pdf.toString('latin1');
    this.prev = Number([...text.matchAll(/startxref\s+(\d+)/g)].pop()![1]);
    this.size = Math.max(...[...text.matchAll(/\/Size\s+(\d+)/g)].map((m) => Number(m[1])));
    this.parts = [pdf, Buffer.from(pdf[pdf.length - 1] === 0x0a ? '' : '\n', 'latin1')];
    this.length = this.parts.reduce((n, b) => n + b.length, 0);
  }

  /** Writes "num 0 obj <text> endobj"; returns its offset. */
  object(num: number, text: string): number {
    const at = this.length;
    this.push(Buffer.from(`${num} 0 obj\n${text}\nendobj\n`, 'latin1'));
    return at;
  }

  /** An object stream with the header exactly as given (number and body per slot). */
  objectStream(num: number, slots: Array<{ num: number; text: string }>): number {
    let header = '';
    let body = '';
    for (const slot of slots) {
      header += `${slot.num} ${body.length} `;
      body += `${slot.text}\n`;
    }
    const content = `${header}\n${body}`;
    return this.object(num, `<< /Type /ObjStm /N ${slots.length} /First ${header.length + 1} /Length ${content.length} >>\nstream\n${content}\nendstream`);
  }

  contentStream(num: number, text = FORGED_TEXT): number {
    return this.object(num, `<< /Length ${text.length} >>\nstream\n${text}\nendstream`);
  }

  /** A classic table listing the rows one subsection each, in the order given. */
  table(rows: Row[], size: number): Buffer {
    const at = this.length;
    let xref = 'xref\n';
    for (const row of rows) xref += `${row.num} 1\n${String(row.type === 0 ? 0 : row.a).padStart(10, '0')} ${row.type === 0 ? '65535 f' : '00000 n'}\r\n`;
    this.push(Buffer.from(`${xref}trailer\n<< /Size ${size} /Root 1 0 R /Prev ${this.prev} >>\nstartxref\n${at}\n%%EOF\n`, 'latin1'));
    return this.bytes();
  }

  /** An xref stream (object `num`) listing the rows one /Index pair each, in the order given. */
  xrefStream(num: number, rows: Row[], size: number): Buffer {
    const at = this.length;
    const all = [...rows, { num, type: 1 as const, a: at, b: 0 }];
    const be = (v: number, width: number) => Array.from({ length: width }, (_, i) => Math.floor(v / 256 ** (width - 1 - i)) % 256);
    const data = Buffer.from(all.flatMap((r) => [r.type, ...be(r.a, 4), ...be(r.b, 2)]));
    const index = all.map((r) => `${r.num} 1`).join(' ');
    this.push(Buffer.concat([
      Buffer.from(`${num} 0 obj\n<< /Type /XRef /W [1 4 2] /Index [${index}] /Size ${size} /Root 1 0 R /Prev ${this.prev} /Length ${data.length} >>\nstream\n`, 'latin1'),
      data,
      Buffer.from(`\nendstream\nendobj\nstartxref\n${at}\n%%EOF\n`, 'latin1'),
    ]));
    return this.bytes();
  }

  private push(b: Buffer): void {
    this.parts.push(b);
    this.length += b.length;
  }

  private bytes(): Buffer {
    return Buffer.concat(this.parts, this.length);
  }
}

export interface AmbiguityClass {
  name: string;
  /** What a reader that does not follow the xref exactly would show instead. */
  otherReading: string;
  apply(pdf: Buffer): Buffer;
}

const offset = (num: number, a: number): Row => ({ num, type: 1, a, b: 0 });

/** Offset of the first body of object `num` in the file. */
const firstBody = (pdf: Buffer, num: number) => pdf.indexOf(`\n${num} 0 obj`, 0, 'latin1') + 1;

export const AMBIGUITY_CLASSES: AmbiguityClass[] = [
  {
    name: 'an object stream lists the page twice; the xref names the signed copy',
    otherReading: 'a reader taking the first copy of the number shows the forged page',
    apply(pdf) {
      const r = new RawRevision(pdf);
      const [forged, stream, xref] = [r.size, r.size + 1, r.size + 2];
      const content = r.contentStream(forged);
      const at = r.objectStream(stream, [{ num: 3, text: pageDict(`${forged} 0 R`) }, { num: 3, text: SIGNED_PAGE }]);
      return r.xrefStream(xref, [offset(forged, content), offset(stream, at), { num: 3, type: 2, a: stream, b: 1 }], xref + 1);
    },
  },
  {
    name: 'the xref puts the page at an index of its object stream that holds another object',
    otherReading: 'a reader finding the page by number in the stream shows the forged page; poppler shows none',
    apply(pdf) {
      const r = new RawRevision(pdf);
      const [forged, stream, xref, spare] = [r.size, r.size + 1, r.size + 2, r.size + 3];
      const content = r.contentStream(forged);
      const at = r.objectStream(stream, [{ num: 3, text: pageDict(`${forged} 0 R`) }, { num: spare, text: SIGNED_PAGE }]);
      return r.xrefStream(xref, [offset(forged, content), offset(stream, at), { num: 3, type: 2, a: stream, b: 1 }, { num: spare, type: 2, a: stream, b: 1 }], spare + 1);
    },
  },
  {
    name: 'the page is defined twice in one revision; the xref names the signed copy',
    otherReading: 'a reader that rebuilds the cross-reference table takes the last body: the forged page',
    apply(pdf) {
      const r = new RawRevision(pdf);
      const forged = r.size;
      const content = r.contentStream(forged);
      const signedCopy = r.object(3, SIGNED_PAGE);
      r.object(3, pageDict(`${forged} 0 R`));
      return r.table([offset(3, signedCopy), offset(forged, content)], forged + 1);
    },
  },
  {
    name: 'the page is in an object stream and also written directly in the same revision',
    otherReading: 'a reader that rebuilds the table by scanning finds only the direct body: the forged page',
    apply(pdf) {
      const r = new RawRevision(pdf);
      const [forged, stream, xref] = [r.size, r.size + 1, r.size + 2];
      const content = r.contentStream(forged);
      r.object(3, pageDict(`${forged} 0 R`));
      const at = r.objectStream(stream, [{ num: 3, text: SIGNED_PAGE }]);
      return r.xrefStream(xref, [offset(forged, content), offset(stream, at), { num: 3, type: 2, a: stream, b: 0 }], xref + 1);
    },
  },
  {
    name: 'a cross-reference table lists the page twice: the signed body first, a forged one last',
    otherReading: 'a reader keeping the last entry of the table shows the forged page',
    apply(pdf) {
      const r = new RawRevision(pdf);
      const forged = r.size;
      const content = r.contentStream(forged);
      const page = r.object(3, pageDict(`${forged} 0 R`));
      return r.table([offset(3, firstBody(pdf, 3)), offset(forged, content), offset(3, page)], forged + 1);
    },
  },
  {
    name: 'an xref stream lists the page twice: the signed body first, a forged one last',
    otherReading: 'a reader keeping the last row shows the forged page',
    apply(pdf) {
      const r = new RawRevision(pdf);
      const [forged, xref] = [r.size, r.size + 1];
      const content = r.contentStream(forged);
      const page = r.object(3, pageDict(`${forged} 0 R`));
      return r.xrefStream(xref, [offset(3, firstBody(pdf, 3)), offset(forged, content), offset(3, page)], xref + 1);
    },
  },
  {
    name: 'the xref entry of the page points at the body of another object (the forged page)',
    otherReading: 'a reader taking the body at the offset shows the forged page; qpdf and poppler rebuild the table',
    apply(pdf) {
      const r = new RawRevision(pdf);
      const [forged, other] = [r.size, r.size + 1];
      const content = r.contentStream(forged);
      const at = r.object(other, pageDict(`${forged} 0 R`));
      r.object(3, SIGNED_PAGE);
      return r.table([offset(3, at), offset(forged, content), offset(other, at)], other + 1);
    },
  },
  {
    name: 'the page repeats /Contents: the forged stream first, the signed one last',
    otherReading: 'qpdf and pdf.js keep the last value; poppler looks keys up in sorted order in large dictionaries and may keep the first (the forged content)',
    apply(pdf) {
      const r = new RawRevision(pdf);
      const forged = r.size;
      const content = r.contentStream(forged);
      const page = r.object(3, SIGNED_PAGE.replace('/Contents 4 0 R', `/Contents ${forged} 0 R /Contents 4 0 R`));
      return r.table([offset(3, page), offset(forged, content)], forged + 1);
    },
  },
];
