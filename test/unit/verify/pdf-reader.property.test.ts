import { deflateSync } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PdfView } from '../../../src/documents/pdf/document.js';
import { DecodeBudget, MAX_DECODED_TOTAL } from '../../../src/documents/pdf/filters.js';
import { PdfDict, PdfName, PdfRef, PdfString, pdfEqual, type PdfValue } from '../../../src/documents/pdf/objects.js';
import { PdfParser, PdfSyntaxError } from '../../../src/documents/pdf/parser.js';
import { TestPdf } from './helpers/pdf.js';
import { makeLeaf, makeRoot, type TestIdentity } from './helpers/pki.js';

/**
 * Property tests of the verifier's PDF reader: objects survive a write/parse round trip, arbitrary
 * bytes end in a value or a PdfSyntaxError (never another exception, never a hang), damaged files
 * open or are refused but never crash, and decoded structural streams stay within one budget.
 */

const REGULAR = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_*+'.split('');

const nameArb = fc.oneof(
  fc.array(fc.constantFrom(...REGULAR), { minLength: 1, maxLength: 12 }).map((c) => c.join('')),
  fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 8 }),
);

const valueArb: fc.Arbitrary<PdfValue> = fc.letrec<{ value: PdfValue }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.integer({ min: -1_000_000, max: 1_000_000 }),
    fc.integer({ min: -100_000, max: 100_000 }).map((n) => n / 100),
    fc.boolean(),
    fc.constant(null),
    nameArb.map((n) => new PdfName(n)),
    fc.uint8Array({ maxLength: 40 }).map((b) => new PdfString(b, false, -1, -1)),
    fc.uint8Array({ maxLength: 40 }).map((b) => new PdfString(b, true, -1, -1)),
    fc.tuple(fc.integer({ min: 0, max: 9_999_999 }), fc.integer({ min: 0, max: 65_535 })).map(([n, g]) => new PdfRef(n, g)),
    fc.array(tie('value'), { maxLength: 5 }),
    fc.uniqueArray(fc.tuple(nameArb, tie('value')), { maxLength: 5, selector: ([k]) => k }).map((entries) => new PdfDict(new Map(entries))),
  ),
})).value;

/** Writes a value in PDF syntax (names #-escaped, literal strings escaped, numbers in plain notation). */
function write(value: PdfValue): string {
  if (value === null) return 'null';
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') return Number.isInteger(value) ? String(value) : value.toFixed(2);
  if (value instanceof PdfName) {
    return `/${[...Buffer.from(value.name, 'latin1')].map((c) => (REGULAR.includes(String.fromCharCode(c)) ? String.fromCharCode(c) : `#${c.toString(16).padStart(2, '0')}`)).join('')}`;
  }
  if (value instanceof PdfString) {
    if (value.hex) return `<${Buffer.from(value.bytes).toString('hex')}>`;
    return `(${[...value.bytes].map((c) => (c === 0x28 || c === 0x29 || c === 0x5c ? `\\${String.fromCharCode(c)}` : c < 0x20 || c > 0x7e ? `\\${c.toString(8).padStart(3, '0')}` : String.fromCharCode(c))).join('')})`;
  }
  if (value instanceof PdfRef) return `${value.num} ${value.gen} R`;
  if (Array.isArray(value)) return `[${value.map(write).join(' ')}]`;
  if (value instanceof PdfDict) return `<<${[...value.entries].map(([k, v]) => `${write(new PdfName(k))} ${write(v)}`).join(' ')}>>`;
  throw new Error('streams are not generated');
}

const bytes = (text: string) => Buffer.from(text, 'latin1');

function expectOnlySyntaxErrors(run: () => unknown): void {
  try {
    run();
  } catch (err) {
    expect(err).toBeInstanceOf(PdfSyntaxError);
  }
}

describe('PDF reader properties', () => {
  it('every object survives a write/parse round trip', () => {
    fc.assert(
      fc.property(valueArb, (value) => {
        const parsed = new PdfParser(bytes(` ${write(value)} `)).parseObject();
        expect(pdfEqual(parsed, value), `${write(value)}`).toBe(true);
      }),
      { seed: 3211, numRuns: 400 },
    );
  });

  it('arbitrary bytes end in a value or a PdfSyntaxError, and the parser only moves forward', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 300 }), (data) => {
        const parser = new PdfParser(data);
        for (let i = 0; i < 50 && parser.pos < data.length; i++) {
          const before = parser.pos;
          try {
            parser.parseObject();
          } catch (err) {
            expect(err).toBeInstanceOf(PdfSyntaxError);
            break;
          }
          expect(parser.pos).toBeGreaterThan(before);
        }
        expectOnlySyntaxErrors(() => new PdfParser(data).parseIndirectObject());
      }),
      { seed: 77, numRuns: 500 },
    );
  });

  it('PDF-flavoured token soup (deep nesting, unterminated strings, stray keywords) never crashes', () => {
    const token = fc.constantFrom('<<', '>>', '[', ']', '(', ')', '<', '>', '/N', '1', '0', 'R', 'obj', 'endobj', 'stream', 'endstream', '\\', '%', '\n', ' ', 'xref', 'trailer', '/Length 5', '-1', '9999999999');
    fc.assert(
      fc.property(fc.array(token, { maxLength: 400 }), (tokens) => {
        const data = bytes(`1 0 obj ${tokens.join(' ')}`);
        expectOnlySyntaxErrors(() => new PdfParser(data).parseIndirectObject());
      }),
      { seed: 19, numRuns: 400 },
    );
  });

  it('a huge literal string is read in bounded memory (bytes, not numbers)', () => {
    const size = 8 * 1024 * 1024;
    const data = Buffer.alloc(size + 2, 0x41);
    data[0] = 0x28;
    data[size + 1] = 0x29;
    const value = new PdfParser(data).parseObject() as PdfString;
    expect(value.bytes.length).toBe(size);
  });

  it('damaged signed files (flat, hybrid) open or are refused, and every object read ends cleanly', () => {
    const files = [TestPdf.base().sign({ cms: { signer: dummySigner() } }).bytes, TestPdf.hybridBase().bytes];
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: files.length - 1 }),
        fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 25 }),
        fc.nat(),
        (which, flips, cut) => {
          const original = files[which]!;
          const data = Buffer.from(original.subarray(0, original.length - (cut % 64)));
          for (const [at, value] of flips) data[at % data.length] = value;
          let view: PdfView;
          try {
            view = new PdfView(data, data.length);
          } catch (err) {
            expect(err).toBeInstanceOf(PdfSyntaxError);
            return;
          }
          expect(view.entries.size).toBeLessThanOrEqual(data.length);
          for (const num of view.entries.keys()) view.getObject(num);
          view.catalog;
        },
      ),
      { seed: 2024, numRuns: 300 },
    );
  });

  it('xref streams with arbitrary /W, /Index and rows never crash the reader', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: -1, max: 9 }), { minLength: 0, maxLength: 4 }),
        fc.array(fc.integer({ min: -5, max: 20_000_000 }), { maxLength: 6 }),
        fc.uint8Array({ maxLength: 200 }),
        (w, index, rows) => {
          const head = `%PDF-1.5\n1 0 obj\n<< /Type /Catalog >>\nendobj\n`;
          const at = head.length;
          const dict = `<< /Type /XRef /Size 3 /Root 1 0 R /W [${w.join(' ')}] /Index [${index.join(' ')}] /Length ${rows.length} >>`;
          const data = Buffer.concat([bytes(`${head}2 0 obj\n${dict}\nstream\n`), rows, bytes(`\nendstream\nendobj\nstartxref\n${at}\n%%EOF\n`)]);
          expectOnlySyntaxErrors(() => {
            const view = new PdfView(data, data.length);
            for (const num of [...view.entries.keys()].slice(0, 1000)) view.getObject(num);
          });
        },
      ),
      { seed: 5, numRuns: 300 },
    );
  });

  it('structural streams decode within one budget: many small deflate bombs cannot add up', () => {
    const bomb = deflateSync(Buffer.alloc(40 * 1024 * 1024, 0x20));
    const count = Math.ceil(MAX_DECODED_TOTAL / (40 * 1024 * 1024)) + 2;
    const parts: Buffer[] = [];
    const offsets: number[] = [];
    const push = (chunk: Buffer) => parts.push(chunk);
    push(bytes('%PDF-1.5\n'));
    const length = () => parts.reduce((n, p) => n + p.length, 0);
    offsets[1] = length();
    push(bytes('1 0 obj\n<< /Type /Catalog >>\nendobj\n'));
    for (let i = 0; i < count; i++) {
      offsets[2 + i] = length();
      push(Buffer.concat([bytes(`${2 + i} 0 obj\n<< /Type /ObjStm /N 1 /First 4 /Filter /FlateDecode /Length ${bomb.length} >>\nstream\n`), bomb, bytes('\nendstream\nendobj\n')]));
    }
    const size = 2 + count + count;
    // Objects inside the streams cannot be listed in a table: a hidden xref stream lists them.
    const rows = Buffer.concat(Array.from({ length: count }, (_, i) => Buffer.from([2, 0, 0, 0, 2 + i, 0])));
    const xrefStreamAt = length();
    push(Buffer.concat([bytes(`${size} 0 obj\n<< /Type /XRef /Size ${size + 1} /W [1 4 1] /Index [${2 + count} ${count}] /Length ${rows.length} >>\nstream\n`), rows, bytes('\nendstream\nendobj\n')]));
    const xrefAt = length();
    let xref = `xref\n0 ${2 + count}\n0000000000 65535 f\r\n`;
    for (let n = 1; n < 2 + count; n++) xref += `${String(offsets[n]).padStart(10, '0')} 00000 n\r\n`;
    push(bytes(`${xref}trailer\n<< /Size ${size + 1} /Root 1 0 R /XRefStm ${xrefStreamAt} >>\nstartxref\n${xrefAt}\n%%EOF\n`));
    const data = Buffer.concat(parts);
    const budget = new DecodeBudget();
    const view = new PdfView(data, data.length, budget);
    expect(view.recovery).toEqual([]);
    for (let i = 0; i < count; i++) view.getObject(2 + count + i);
    // Streams were decoded until the next one no longer fit; the total never went past the budget.
    expect(budget.remaining).toBeGreaterThanOrEqual(0);
    expect(budget.remaining).toBeLessThan(40 * 1024 * 1024);
  });
});

let cachedSigner: TestIdentity | undefined;
/** A throwaway signer: these properties are about reading, not about the signature. */
const dummySigner = () => (cachedSigner ??= makeLeaf(makeRoot()));
