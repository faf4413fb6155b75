import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cellWidthTwips, pageTextWidthTwips, DEFAULT_TEXT_WIDTH_TWIPS } from '../../../src/documents/annotate/drawing.js';
import { fieldTypesIn } from '../../../src/documents/docx-pdf/document-work.js';
import { measureTables } from '../../../src/documents/docx-pdf/layout-budget.js';
import { mergeReferenceStyles } from '../../../src/documents/model/styles.js';
import { removeDoctypes, scrubSvg } from '../../../src/documents/ooxml/scrub.js';
import { sniffTextFormat } from '../../../src/inputs/detect-format.js';

/**
 * Scans of XML and text that a caller's file feeds must take one pass, whatever the text: a regex
 * whose lazy or repeated part runs to the end of the text from every opening (a tag without its `>`,
 * a DOCTYPE or url( without its end) is quadratic, and repeated lazy comments are exponential. Each
 * input below is one such text, megabytes long: with the old patterns these calls took minutes to
 * hours (25 leading comments alone took seconds), so the test's time limit is what fails.
 * The property tests compare each rewritten scan with the pattern it replaced on small texts,
 * where the old one is fast, to show the answer is the same.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261126);
const MB = 1 << 20;
const repeatTo = (unit: string, bytes = 2 * MB) => unit.repeat(Math.ceil(bytes / unit.length));

describe('scans over a caller’s text are linear', () => {
  it('table and field counters: openings without a closing ">"', () => {
    expect(measureTables(repeatTo('<w:tbl '))).toEqual({ nesting: 0, cells: 0 });
    expect(measureTables(repeatTo('<w:tc '))).toEqual({ nesting: 0, cells: 0 });
    for (const opening of ['<w:fldChar ', '<w:instrText ', '<w:fldSimple ']) expect(fieldTypesIn(repeatTo(opening)).size).toBe(0);
  });

  it('annotate’s section, cell width and style scans', () => {
    expect(pageTextWidthTwips(repeatTo('<w:sectPr'))).toBe(DEFAULT_TEXT_WIDTH_TWIPS);
    expect(pageTextWidthTwips(`<w:sectPr>${repeatTo('<w:pgSz ')}</w:sectPr>`)).toBe(DEFAULT_TEXT_WIDTH_TWIPS);
    expect(cellWidthTwips(repeatTo('<w:tcW '))).toBeNull();
    expect(mergeReferenceStyles(`${repeatTo('<w:style ')}</w:styles>`)).toContain('<w:styles');
  });

  it('format sniffing: many leading comments, then no tag or a tag', () => {
    const comments = '<!--a-->'.repeat(4000);
    expect(sniffTextFormat(Buffer.from(`${comments}x`))).not.toBe('html');
    expect(sniffTextFormat(Buffer.from(`${comments}\n<html><body>x</body></html>`))).toBe('html');
  });

  it('scrub: DOCTYPEs and url( without their end', () => {
    expect(removeDoctypes(repeatTo('<!DOCTYPE [')).unterminated).toBe(true);
    expect(removeDoctypes(repeatTo('<!DOCTYPE ')).unterminated).toBe(true);
    const svg = `<svg xmlns="http://www.w3.org/2000/svg" style="${repeatTo('url(', MB)}"/>`;
    const scrubbed = scrubSvg(svg);
    expect(scrubbed.removed).toBe(1);
    expect(scrubbed.svg).not.toContain('url(');
  });
});

describe('the rewritten scans answer as the patterns they replaced', () => {
  const fragments = (parts: string[]) => fc.array(fc.constantFrom(...parts), { maxLength: 40 }).map((a) => a.join(''));

  it('removeDoctypes = the DOCTYPE regex where every DOCTYPE ends', () => {
    const oldDoctypes = /<!DOCTYPE(?:[^[>]|\[[^\]]*\])*>/g;
    fc.assert(
      fc.property(fragments(['<!DOCTYPE', ' x', '[', ']', '>', '<!ENTITY a "b">', '<svg/>', 'z']), (text) => {
        const result = removeDoctypes(text);
        if (result.unterminated) {
          // Stops at a DOCTYPE without an end: before it, as the regex left the text; from it on, untouched.
          const starts = [...text.matchAll(/<!DOCTYPE/g)].map((m) => m.index);
          const stop = starts.find((at) => result.text === text.slice(0, at).replace(oldDoctypes, '') + text.slice(at));
          expect(stop).toBeDefined();
          expect(removeDoctypes(text.slice(stop)).removed).toBe(0);
          return;
        }
        expect(result.text).toBe(text.replace(oldDoctypes, ''));
        expect(result.removed).toBe(text.match(oldDoctypes)?.length ?? 0);
      }),
      { seed: SEED, numRuns: 2000 },
    );
  });

  it('the last section and the table counts', () => {
    const oldLastSection = (xml: string) => {
      const sections = xml.match(/<w:sectPr[\s\S]*?<\/w:sectPr>/g);
      return sections?.[sections.length - 1];
    };
    const widthOf = (section: string | undefined) => (section ? pageTextWidthTwips(section) : DEFAULT_TEXT_WIDTH_TWIPS);
    fc.assert(
      fc.property(
        fragments(['<w:sectPr>', '<w:sectPrChange>', '</w:sectPr>', '<w:pgSz w:w="12240"/>', '<w:pgSz w:w="15840"/>', '<w:pgMar w:left="720" w:right="720"/>', 'x']),
        (xml) => {
          expect(pageTextWidthTwips(xml)).toBe(widthOf(oldLastSection(xml)));
        },
      ),
      { seed: SEED, numRuns: 2000 },
    );
    const oldTableTags = /<(\/?)(?:[\w.-]+:)?(tbl|tc)(?=[\s/>])[^>]*?(\/?)>/g;
    const oldCount = (xml: string) => {
      let depth = 0;
      let nesting = 0;
      let cells = 0;
      for (const [, closing, name, selfClosing] of xml.matchAll(oldTableTags)) {
        if (name === 'tc') cells += closing ? 0 : 1;
        else if (closing) depth = Math.max(0, depth - 1);
        else if (!selfClosing) nesting = Math.max(nesting, ++depth);
      }
      return { nesting, cells };
    };
    fc.assert(
      fc.property(fragments(['<w:tbl>', '</w:tbl>', '<w:tbl/>', '<w:tc w:x="1">', '</w:tc>', '<w:tcPr/>', '<w:tbl w:a="x>y">', 'x', '>']), (xml) => {
        expect(measureTables(xml, { maxTableNesting: 1e9, maxTableCells: 1e9, maxPicturePixels: 1e9 })).toEqual(oldCount(xml));
      }),
      { seed: SEED, numRuns: 2000 },
    );
  });

  it('format sniffing agrees with the old pattern when comments are followed by white space, comments or a tag', () => {
    const oldHtmlStart = /^(?:<!--[\s\S]*?-->\s*)*<(?:!doctype\s+html|html|head|body|meta|title|div|p|table|h[1-6]|section|article|main|span|ul|ol|br|hr|img|a|style|link|script|header|footer|nav|center|font|pre|blockquote)\b/i;
    fc.assert(
      fc.property(fragments(['<!--a-->', '<!-- b -->', ' ', '\n', '<!--']), fc.constantFrom('<html>', '<p>x', '# x', 'x,y\n1,2\n', '<!-- c'), (lead, rest) => {
        const text = lead + rest;
        const sniffed = sniffTextFormat(Buffer.from(text));
        if (oldHtmlStart.test(text.trimStart())) expect(sniffed).toBe('html');
        else expect(sniffed).not.toBe('html');
      }),
      { seed: SEED, numRuns: 1000 },
    );
  });
});
