import angular from 'angular-expressions';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileExpression } from '../../../src/documents/annotate/expressions.js';
import { FILTERS, UnknownFilterError } from '../../../src/documents/annotate/filters.js';

/**
 * Differential test of our expression interpreter against angular-expressions, the implementation
 * docxtemplater's "angular parser" uses (a dev dependency, here only as the independent reference).
 * Expressions are generated from the grammar over data where every name read is defined and not
 * null. The one deliberate difference: a missing or null operand of + makes our result missing (the
 * tag is reported as having no value) where angular returns the other operand; it is asserted below.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261125);

for (const name of ['upper', 'lower', 'trim', 'default', 'join']) {
  angular.filters[name] = (input: unknown, ...args: unknown[]) => FILTERS[name]!(input, args, { warn: () => undefined });
}

const scope = {
  a: 7,
  b: -2.5,
  z: 0,
  s: 'Text',
  t: '12',
  e: '',
  yes: true,
  obj: { x: 3, y: 'why', inner: { k: 'deep' } },
  arr: [10, 'two', 30],
};

const number = fc.oneof(fc.integer({ min: 0, max: 1000 }).map(String), fc.constantFrom('0.5', '1e3', '.25', '3.'));
const string = fc.oneof(
  fc.stringMatching(/^[a-zA-Z0-9 ]{0,6}$/).map((s) => `"${s}"`),
  fc.stringMatching(/^[a-zA-Z0-9 ]{0,6}$/).map((s) => `'${s}'`),
  fc.constantFrom('"a\\"b"', "'it\\'s'", '"tab\\tx"', '"\\u00e9"'),
);
const leaf = fc.oneof(
  fc.constantFrom('a', 'b', 'z', 's', 't', 'e', 'yes', 'obj.x', 'obj.y', 'obj.inner.k', 'obj["y"]', 'arr[0]', 'arr[1]', 'arr[2]', 'arr.length', 's.length', 'arr[z]', 'obj[s.length > 3 ? "x" : "y"]', 'true', 'false'),
  number,
  string,
);
const BINARY = ['+', '-', '*', '/', '%', '<', '>', '<=', '>=', '==', '!=', '===', '!==', '&&', '||'];

const expression: fc.Arbitrary<string> = fc.letrec<{ expr: string }>((tie) => ({
  expr: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.tuple(fc.constantFrom('-', '!', '+'), tie('expr')).map(([op, e]) => `${op}${e}`),
    fc.tuple(tie('expr'), fc.constantFrom(...BINARY), tie('expr')).map(([l, op, r]) => `${l} ${op} ${r}`),
    fc.tuple(tie('expr'), tie('expr'), tie('expr')).map(([c, x, y]) => `${c} ? ${x} : ${y}`),
    tie('expr').map((e) => `(${e})`),
    fc.tuple(tie('expr'), fc.constantFrom('upper', 'lower', 'trim', 'default:"d"', 'join:"-"')).map(([e, f]) => `(${e} | ${f})`),
  ),
})).expr;

const same = (ours: unknown, theirs: unknown) => Object.is(ours, theirs) || (typeof ours === 'number' && typeof theirs === 'number' && Math.abs(ours - theirs) < 1e-9);

describe('expressions agree with angular-expressions', () => {
  it('on generated expressions over defined data', () => {
    let compared = 0;
    fc.assert(
      fc.property(expression, (source) => {
        const ours = compileExpression(source)(scope);
        const theirs = angular.compile(source)(scope);
        compared++;
        if (!same(ours, theirs)) throw new Error(`${source}: ours ${JSON.stringify(ours)} / angular ${JSON.stringify(theirs)}`);
      }),
      { numRuns: 3000, seed: SEED },
    );
    expect(compared).toBe(3000);
  });

  it('null and missing operands: as angular, except that + keeps them missing', () => {
    const data = { a: 7, n: null };
    for (const source of ['a * n', 'a / n', 'a - n', 'a % n', 'n == 0', 'n == null', 'n ? 1 : 2', 'n && 1', 'n || 1', '!n', 'a < n']) {
      expect(compileExpression(source)(data), source).toEqual(angular.compile(source)(data));
    }
    expect(compileExpression('a + n')(data)).toBeUndefined();
    expect(angular.compile('a + n')(data)).toBe(7);
    expect(compileExpression('a + missing')(data)).toBeUndefined();
  });

  it('refuses what angular refuses, among generated token soups', () => {
    const tokens = fc.array(fc.constantFrom('a', 'obj', '.', 'x', '[', ']', '(', ')', '+', '*', '?', ':', '|', 'upper', '"s"', '1', '==', '!', '&&'), { minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(tokens, (parts) => {
        const source = parts.join(' ');
        if (source === '.') return; // docxtemplater's "the current item", handled before angular
        let theirs: 'ok' | 'error';
        try {
          angular.compile(source);
          theirs = 'ok';
        } catch {
          theirs = 'error';
        }
        let ours: 'ok' | 'error';
        try {
          compileExpression(source);
          ours = 'ok';
        } catch {
          ours = 'error';
        }
        // Angular also has calls, assignments, array and object literals, which we refuse on purpose:
        // whatever we accept, angular accepts.
        if (ours === 'ok' && theirs === 'error') throw new Error(`we accept "${source}", angular refuses it`);
      }),
      { numRuns: 3000, seed: SEED },
    );
  });
});

describe('expression size', () => {
  it('a tag of hundreds of thousands of characters compiles (the tokenizer never copies the rest of the tag); depth is bounded', () => {
    const wide = Array.from({ length: 80_000 }, (_, i) => (i % 2 ? '"a"' : '[1]')).join(', ');
    expect(wide.length).toBeGreaterThan(300_000);
    // Tokenized to the end, then refused for its shape, not for its size.
    expect(() => compileExpression(wide)).toThrow(/unexpected character ","/);
    const longChain = Array.from({ length: 80_000 }, () => 'a').join(' + ');
    expect(() => compileExpression(longChain)).toThrow(/more than 1000 operations deep/);
    expect(compileExpression(Array.from({ length: 900 }, () => 'a').join(' + '))({ a: 1 })).toBe(900);
    expect(() => compileExpression(`${'('.repeat(20_000)}a${')'.repeat(20_000)}`)).toThrow(/nests more than 100 levels/);
    expect(() => compileExpression(`${'-'.repeat(20_000)}a`)).toThrow(/nests more than 100 levels/);
    expect(compileExpression(`${'('.repeat(90)}a${')'.repeat(90)}`)({ a: 3 })).toBe(3);
  });

  it('property: any generated expression either compiles and evaluates without throwing, or is a SyntaxError or an unknown filter', () => {
    const piece = fc.constantFrom('a', 'obj.x', '1', '"s"', '(', ')', '[', ']', '+', '-', '!', '?', ':', '|', 'upper', '==', '&&', ' ');
    fc.assert(fc.property(fc.array(piece, { maxLength: 400 }), (parts) => {
      let run: ReturnType<typeof compileExpression>;
      try {
        run = compileExpression(parts.join(''));
      } catch (error) {
        expect(error instanceof SyntaxError || error instanceof UnknownFilterError, String(error)).toBe(true);
        return;
      }
      run({ a: 1, obj: { x: 'y' } });
    }), { numRuns: 2000, seed: SEED });
  });
});
