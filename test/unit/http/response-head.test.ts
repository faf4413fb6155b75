import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_HEADER_WARNINGS, WARNING_BYTES, warningsHeader } from '../../../src/http/response-head.js';

const decode = (header: string) => header.split(', ').map(decodeURIComponent);

describe('X-Docproc-Warnings is bounded whatever the warnings', () => {
  it('a 5 000-character warning is cut to WARNING_BYTES with an ellipsis; past MAX_HEADER_WARNINGS the rest are counted', () => {
    const long = `Tag {${'x'.repeat(5000)}} had no value and was left empty.`;
    const header = warningsHeader([long])!;
    expect(header.length).toBeLessThanOrEqual(WARNING_BYTES);
    expect(decode(header)[0]).toMatch(/^Tag \{x+…$/);
    const many = Array.from({ length: MAX_HEADER_WARNINGS + 1 }, (_, i) => `warning ${i}`);
    expect(decode(warningsHeader(many)!)).toEqual([...many.slice(0, MAX_HEADER_WARNINGS - 1), 'and 2 more']);
    expect(decode(warningsHeader(many.slice(0, MAX_HEADER_WARNINGS))!)).toEqual(many.slice(0, MAX_HEADER_WARNINGS));
    expect(warningsHeader([])).toBeUndefined();
  });

  it('any list of any text gives a valid header value within MAX_HEADER_WARNINGS × WARNING_BYTES, every entry decodable', () => {
    const bound = MAX_HEADER_WARNINGS * (WARNING_BYTES + 2);
    fc.assert(
      fc.property(fc.array(fc.string({ unit: 'binary', maxLength: 600 }), { minLength: 1, maxLength: 40 }), (warnings) => {
        const header = warningsHeader(warnings)!;
        expect(header.length).toBeLessThanOrEqual(bound);
        // Only visible ASCII and spaces: valid in an HTTP header, and read the same by every proxy.
        expect(header).toMatch(/^[\x21-\x7e ]*$/);
        const entries = decode(header);
        expect(entries.length).toBe(Math.min(warnings.length, MAX_HEADER_WARNINGS));
        if (warnings.length > MAX_HEADER_WARNINGS) expect(entries.at(-1)).toBe(`and ${warnings.length - MAX_HEADER_WARNINGS + 1} more`);
      }),
      { seed: 26, numRuns: 100 },
    );
  });
});
