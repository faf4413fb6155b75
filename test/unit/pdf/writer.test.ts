import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PdfView } from '../../../src/documents/pdf/document.js';
import { PdfDict, PdfName, PdfRef, PdfStream, PdfString, pdfDict, pdfEqual, pdfName, pdfStream, textString, withEntries, type PdfValue } from '../../../src/documents/pdf/objects.js';
import { PdfParser } from '../../../src/documents/pdf/parser.js';
import { IncrementalWriter, PdfWriteError, serializeValue } from '../../../src/documents/pdf/writer.js';
import { TestPdf } from '../verify/helpers/pdf.js';

/**
 * The one PDF writer against the one reader: every value the writer serialises parses back equal,
 * and an incremental update reads back, through the xref chain, as exactly the objects it set on
 * top of the objects the file had. (test/integration/pdf/writer.test.ts checks the same files with qpdf.)
 */

const nameArb = fc.string({ unit: 'binary', minLength: 0, maxLength: 10 }).filter((s) => [...s].every((c) => c.charCodeAt(0) <= 0xff && c !== '\0'));
const numberArb = fc.oneof(
  fc.integer({ min: -2_147_483_648, max: 2_147_483_647 }),
  fc.double({ min: -1e9, max: 1e9, noNaN: true, noDefaultInfinity: true }).filter((n) => !Object.is(n, -0)),
  fc.constantFrom(1e-7, -2.5e-12, 123456789012.5, 0.30000000000000004),
);

const valueArb: fc.Arbitrary<PdfValue> = fc.letrec<{ value: PdfValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    numberArb,
    fc.boolean(),
    fc.constant(null),
    nameArb.map((n) => new PdfName(n)),
    fc.uint8Array({ maxLength: 40 }).map((b) => new PdfString(b, false, -1, -1)),
    fc.uint8Array({ maxLength: 40 }).map((b) => new PdfString(b, true, -1, -1)),
    fc.string({ maxLength: 20 }).map(textString),
    fc.tuple(fc.integer({ min: 0, max: 9_999_999 }), fc.integer({ min: 0, max: 65_535 })).map(([n, g]) => new PdfRef(n, g)),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.uniqueArray(fc.tuple(nameArb, tie('value')), { maxLength: 5, selector: ([k]) => k }).map((entries) => new PdfDict(new Map(entries))),
  ),
})).value;

/** Numbers are compared by value within the precision PDF readers keep (the writer never uses exponents). */
function sameValue(a: PdfValue | undefined, b: PdfValue | undefined): boolean {
  if (typeof a === 'number' && typeof b === 'number') return Math.abs(a - b) <= Math.max(1e-12, Math.abs(a) * 1e-12);
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((v, i) => sameValue(v, b[i]));
  if (a instanceof PdfDict && b instanceof PdfDict) return a.entries.size === b.entries.size && [...a.entries].every(([k, v]) => b.has(k) && sameValue(v, b.get(k)));
  return pdfEqual(a, b);
}

const parse = (bytes: Uint8Array) => new PdfParser(bytes, 0, false).parseObject();

describe('serializeValue', () => {
  it('property: whatever the writer writes, the reader reads back as the same value', () => {
    fc.assert(fc.property(valueArb, (value) => {
      const written = serializeValue(value);
      expect(sameValue(parse(written), value)).toBe(true);
      // No number in exponent form (PDF has none). Strings are left out: "(\\000e0)" is a string holding "\0e0".
      const outsideStrings = written.toString('latin1').replace(/\((?:\\[\s\S]|[^\\)])*\)/g, '()');
      expect(outsideStrings).not.toMatch(/(^|[\s[\]<>{}])[+-]?\d*\.?\d+e[+-]?\d/);
    }), { numRuns: 500 });
  });

  it('escapes what would change a token: delimiters and whitespace in names, parentheses, backslashes and line ends in strings', () => {
    expect(serializeValue(pdfName('A B/C#(x)')).toString('latin1')).toBe('/A#20B#2FC#23#28x#29');
    expect(serializeValue(new PdfString(Buffer.from('a(b)\\c\r\nd', 'latin1'), false, -1, -1)).toString('latin1')).toBe('(a\\(b\\)\\\\c\\015\\012d)');
    expect(serializeValue(textString('Zoë')).toString('latin1')).toBe('<FEFF005A006F00EB>');
    expect(serializeValue(1e-7).toString('latin1')).toBe('0.0000001');
  });

  it('writes a stream with the /Length of its data, whatever the dictionary said', () => {
    const stream = pdfStream(pdfDict({ Length: new PdfRef(9, 0), Filter: pdfName('FlateDecode') }), Buffer.from('xyz'));
    expect(serializeValue(stream).toString('latin1')).toBe('<</Length 3 /Filter /FlateDecode >>\nstream\nxyz\nendstream');
    expect(() => serializeValue([stream])).toThrow(PdfWriteError);
  });
});

describe('IncrementalWriter', () => {
  const base = () => TestPdf.base().bytes;

  function update(pdf: Buffer, edit: (writer: IncrementalWriter, view: PdfView) => void): { before: PdfView; after: PdfView; bytes: Buffer } {
    const before = new PdfView(pdf, pdf.length);
    const writer = new IncrementalWriter(before);
    edit(writer, before);
    const bytes = writer.write().bytes;
    return { before, after: new PdfView(bytes, bytes.length), bytes };
  }

  it('appends to a table file a table section whose /Prev is the old startxref; old objects read as before, new and replaced ones as set', () => {
    let added!: PdfRef;
    const { before, after, bytes } = update(base(), (writer, view) => {
      added = writer.allocate();
      writer.set(added, pdfDict({ Type: pdfName('Test'), Text: textString('grüße') }));
      writer.set(view.refTo(8), withEntries(view.dict(view.refTo(8))!, { V: textString('Bob') }));
    });
    expect(bytes.subarray(0, before.data.length).equals(Buffer.from(before.data))).toBe(true);
    expect(after.reconstructed).toBe(false);
    expect(after.recovery).toEqual([]);
    expect(after.sectionKinds).toEqual(['table', ...before.sectionKinds]);
    expect(after.trailer.get('Prev')).toBe(before.startxref);
    expect(after.trailer.get('Root')).toEqual(before.trailer.get('Root'));
    expect(added.num).toBe(before.nextObjectNumber);
    expect(after.nextObjectNumber).toBe(added.num + 1);
    expect((after.dict(added)?.get('Text') as PdfString).text()).toBe('grüße');
    expect((after.dict(after.refTo(8))?.get('V') as PdfString).text()).toBe('Bob');
    for (const num of before.entries.keys()) if (num !== 8) expect(pdfEqual(after.getObject(num), before.getObject(num))).toBe(true);
  });

  it('appends an xref stream to a file whose last section is an xref stream, and a stream object survives the trip', () => {
    const pdf = xrefStreamFile();
    let ref!: PdfRef;
    const { before, after } = update(pdf, (writer) => {
      ref = writer.allocate();
      writer.set(ref, pdfStream(pdfDict({ Subtype: pdfName('XML') }), Buffer.from('<x/>')));
    });
    expect(before.sectionKinds[0]).toBe('stream');
    expect(after.sectionKinds.slice(0, 2)).toEqual(['stream', 'stream']);
    expect(after.recovery).toEqual([]);
    const stream = after.resolve(ref);
    expect(stream).toBeInstanceOf(PdfStream);
    expect(Buffer.from(after.streamData(ref)!).toString()).toBe('<x/>');
    expect(after.catalog).toBeDefined();
  });

  it('refuses to append to a file without a sound chain or to an earlier revision', () => {
    const pdf = base();
    expect(() => new IncrementalWriter(new PdfView(pdf, pdf.length - 10))).toThrow(PdfWriteError);
    const broken = Buffer.from(pdf.toString('latin1').replace(/startxref\s+\d+/, 'startxref\n1'), 'latin1');
    expect(() => new IncrementalWriter(new PdfView(broken, broken.length))).toThrow(PdfWriteError);
  });
});

/** A one-page file whose only cross-reference section is an xref stream (PDF 1.5 style). */
export function xrefStreamFile(): Buffer {
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 200 200] >>',
  ];
  let out = '%PDF-1.5\n';
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(out.length);
    out += `${i + 1} 0 obj\n${body}\nendobj\n`;
  });
  const xrefAt = out.length;
  offsets.push(xrefAt);
  const rows = Buffer.alloc(5 * 7);
  rows.writeUInt8(0, 0);
  rows.writeUInt16BE(65535, 5);
  offsets.forEach((offset, i) => {
    rows.writeUInt8(1, (i + 1) * 7);
    rows.writeUInt32BE(offset, (i + 1) * 7 + 1);
  });
  out += `4 0 obj\n<< /Type /XRef /Size 5 /W [1 4 2] /Root 1 0 R /Length ${rows.length} >>\nstream\n`;
  return Buffer.concat([Buffer.from(out, 'latin1'), rows, Buffer.from(`\nendstream\nendobj\nstartxref\n${xrefAt}\n%%EOF\n`, 'latin1')]);
}
