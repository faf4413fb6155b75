import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { PdfName, PdfRef, type PdfValue } from '../../../src/documents/pdf/objects.js';
import { PdfParser, PdfSyntaxError } from '../../../src/documents/pdf/parser.js';

/**
 * The tokenizer's numbers against their definition (ISO 32000-1 §7.3.3 as the parser has always read
 * them: a token matching /^[+-]?(\d+\.?\d*|\.\d+)$/ is Number(token), true/false/null are themselves,
 * any other regular token is a keyword). The parser reads tokens of digits only without making a
 * string; this checks that it reads every token exactly as the definition does, long ones included.
 */

const SEED = Number(process.env.FUZZ_SEED ?? 2711);
const NUMBER = /^[+-]?(\d+\.?\d*|\.\d+)$/;

class PdfKeyword {
  constructor(readonly word: string) {}
}

function byDefinition(word: string): PdfValue | PdfKeyword {
  if (NUMBER.test(word)) return Number(word);
  if (word === 'true') return true;
  if (word === 'false') return false;
  if (word === 'null') return null;
  return new PdfKeyword(word);
}

function parsed(text: string): PdfValue | PdfKeyword {
  try {
    return new PdfParser(Buffer.from(text, 'latin1')).parseObject();
  } catch (err) {
    if (!(err instanceof PdfSyntaxError)) throw err;
    const keyword = /^unexpected keyword (.*)$/.exec(err.message);
    if (keyword) return new PdfKeyword(keyword[1]!);
    throw err;
  }
}

const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });
const wordArb = fc.oneof(
  digits(1, 40),
  fc.tuple(fc.constantFrom('', '+', '-'), digits(0, 20), fc.constantFrom('', '.'), digits(0, 20)).map((parts) => parts.join('')).filter((w) => w.length > 0),
  fc.string({ unit: fc.constantFrom(...'0123456789+-.eExR'), minLength: 1, maxLength: 24 }),
  fc.constantFrom('true', 'false', 'null', '0', '00', '007', '9007199254740993', '123456789012345', '1234567890123456', '1e5'),
);
// What may end a token: nothing, white space, a delimiter, a comment.
const endArb = fc.constantFrom('', ' ', '\n', '\r\n', '\0', '/', '[', ']', '(', '<<', '>>', '%c', '{');

// Regular bytes other than '#': a name's text is its bytes as latin1 (§7.3.5).
const nameByteArb = fc.integer({ min: 0x21, max: 0xff }).filter((c) => !'()<>[]{}/%#'.includes(String.fromCharCode(c))).map((c) => String.fromCharCode(c));

describe('PDF tokenizer names', () => {
  it('property: names read as their bytes, however many share a slot of the table of names already read', () => {
    // Few distinct bytes and lengths up to 40 (past the 32 the table keeps): many repeats, many collisions.
    const namesArb = fc.array(fc.oneof(
      fc.string({ unit: fc.constantFrom('a', 'b', 'C', '1', '\xe9'), minLength: 0, maxLength: 40 }),
      fc.string({ unit: nameByteArb, minLength: 0, maxLength: 12 }),
      fc.string({ unit: fc.constantFrom(...'abcdefgh'), minLength: 3, maxLength: 3 }),
    ), { minLength: 1, maxLength: 1500 });
    fc.assert(
      fc.property(namesArb, (names) => {
        const value = parsed(`[${names.map((n) => `/${n}`).join(' ')}]`);
        expect(value).toEqual(names.map((n) => new PdfName(n)));
        const dict = parsed(`<<${names.map((n, i) => `/${n} ${i}`).join(' ')}>>`);
        expect([...(dict as { entries: Map<string, PdfValue> }).entries.keys()]).toEqual([...new Set(names)]);
      }),
      { seed: SEED, numRuns: 300 },
    );
  });
});

describe('PDF tokenizer numbers', () => {
  it('property: every regular token reads as its definition says (digits-only ones included, however long)', () => {
    fc.assert(
      fc.property(wordArb, endArb, (word, end) => {
        expect(parsed(word + end)).toEqual(byDefinition(word));
      }),
      { seed: SEED, numRuns: 3000 },
    );
  });

  it('property: "n g R" reads as a reference to n, g (generations with leading zeros, any length the reader accepts)', () => {
    fc.assert(
      fc.property(digits(1, 12), digits(1, 12), endArb, (num, gen, end) => {
        const value = parsed(`${num} ${gen} R${end}`);
        // The reader takes a generation of at most 10 digits; a longer one leaves the number alone.
        if (gen.length <= 10) expect(value).toEqual(new PdfRef(Number(num), Number(gen)));
        else expect(value).toEqual(Number(num));
      }),
      { seed: SEED, numRuns: 2000 },
    );
  });
});
