import fc from 'fast-check';
import { SaxesParser } from 'saxes';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkRawXml, MAX_RAW_XML_DEPTH } from '../../../src/documents/annotate/raw-xml.js';
import { LAYOUT_BUDGET } from '../../../src/documents/docx-pdf/layout-budget.js';
import { DomainError } from '../../../src/errors/domain-error.js';
import { answering } from '../../support/domain-error.js';

/** {@raw} values: their nesting is bounded, so checking them stays linear in their length. */
const nestedTables = (depth: number) => '<w:tbl><w:tr><w:tc>'.repeat(depth) + '<w:p/>' + '</w:tc></w:tr></w:tbl>'.repeat(depth);

function outcome(value: string): DomainError | string {
  try {
    return checkRawXml(value, 'raw');
  } catch (err) {
    if (err instanceof DomainError) return err;
    throw err;
  }
}

/** Elements on the stack saxes walks to resolve each prefix: the real cost of namespace resolution. */
let stackReads = 0;
const resolve = (SaxesParser.prototype as unknown as { resolve: (prefix: string) => string | undefined }).resolve;
beforeAll(() => {
  (SaxesParser.prototype as unknown as { resolve: unknown }).resolve = function (this: { tags: unknown[] }, prefix: string) {
    stackReads += this.tags.length + 1;
    return resolve.call(this, prefix);
  };
});
afterAll(() => {
  (SaxesParser.prototype as unknown as { resolve: unknown }).resolve = resolve;
});

describe('{@raw} nesting', () => {
  it('820 KB of 20 000 nested tables is refused at once (49 s before), naming the limit', () => {
    const value = nestedTables(20_000);
    expect(value.length).toBeGreaterThan(800_000);
    stackReads = 0;
    const started = performance.now();
    const err = outcome(value);
    expect(err).toMatchObject(answering(422, 'DOCUMENT_TOO_COMPLEX', { extensions: { limit: { name: 'convert.maxTableNesting', max: LAYOUT_BUDGET.maxTableNesting } } }));
    console.log(`raw-xml: 20 000 nested tables refused in ${Math.round(performance.now() - started)} ms after ${stackReads} stack reads`);
    expect(stackReads).toBeLessThan(100 * MAX_RAW_XML_DEPTH);
  });

  it('tables nested up to the layout limit pass; elements past MAX_RAW_XML_DEPTH are refused', () => {
    expect(outcome(nestedTables(LAYOUT_BUDGET.maxTableNesting))).toEqual(expect.stringContaining('<w:tbl>'));
    const deepProperties = '<w:p><w:pPr>' + '<w:pBdr>'.repeat(MAX_RAW_XML_DEPTH) + '</w:pBdr>'.repeat(MAX_RAW_XML_DEPTH) + '</w:pPr></w:p>';
    expect(outcome(deepProperties)).toMatchObject({ code: 'DOCUMENT_TOO_COMPLEX', extensions: { limit: { name: 'annotate.maxRawXmlDepth', max: MAX_RAW_XML_DEPTH } } });
  });

  it('property: namespace resolution reads at most MAX_RAW_XML_DEPTH + 1 stack entries per element, whatever the nesting', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 3 * MAX_RAW_XML_DEPTH }), fc.integer({ min: 1, max: 60 }), fc.boolean(), (depth, siblings, tables) => {
        const inner = tables ? nestedTables(Math.ceil(depth / 3)) : '<w:p><w:pPr>' + '<w:pBdr>'.repeat(depth) + '</w:pBdr>'.repeat(depth) + '</w:pPr></w:p>';
        const value = inner.repeat(siblings);
        const elements = (value.match(/<w:[A-Za-z]/g) ?? []).length;
        stackReads = 0;
        outcome(value);
        expect(stackReads).toBeLessThanOrEqual(elements * (MAX_RAW_XML_DEPTH + 2));
      }),
      { seed: 4920, numRuns: 60 },
    );
  });
});
