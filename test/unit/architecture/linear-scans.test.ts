import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { cellWidthTwips, pageTextWidthTwips, DEFAULT_TEXT_WIDTH_TWIPS } from '../../../src/documents/annotate/drawing.js';
import { fieldTypesIn } from '../../../src/documents/docx-pdf/document-work.js';
import { measureTables } from '../../../src/documents/docx-pdf/layout-budget.js';
import { mergeReferenceStyles } from '../../../src/documents/model/styles.js';
import { removeDoctypes, scrubSvg } from '../../../src/documents/ooxml/scrub.js';
import { sniffTextFormat } from '../../../src/inputs/detect-format.js';
import { parseDimension } from '../../../src/documents/annotate/drawing.js';
import { FILTERS } from '../../../src/documents/annotate/filters.js';
import { TRAILING_SEPARATORS } from '../../../src/documents/docx-pdf/comments-in-margin.js';
import { TRAILING_SPACES } from '../../../src/documents/html/to-model.js';
import { META_CHARSET } from '../../../src/documents/html/index.js';
import { splitMarkdown } from '../../../src/documents/markdown/chunks.js';
import { LINE_BREAK_WITH_BLANKS } from '../../../src/documents/markdown/to-model.js';
import { PdfParser, PdfSyntaxError } from '../../../src/documents/pdf/parser.js';
import { pemBlocks, requestAnchors } from '../../../src/documents/pki/trust.js';
import { pdfAidElement } from '../../../src/documents/sign/pdf/structure.js';
import { contentFormat } from '../../../src/inputs/detect-format.js';
import PizZip from 'pizzip';

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

const silent = { warn: () => {} };
const packageWithContentType = (type: string) =>
  Buffer.from(
    new PizZip()
      .file('[Content_Types].xml', `<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/x.xml" ContentType="${type}"/></Types>`)
      .generate({ type: 'uint8array', compression: 'DEFLATE' }),
  );

describe('scans over a caller’s values, PDFs, certificates and Markdown are linear', () => {
  it('template data: numbers, sizes and date patterns', () => {
    expect(FILTERS.number!(`${'1'.repeat(2 * MB)}x`, [], silent)).toBe(`${'1'.repeat(2 * MB)}x`);
    expect(() => parseDimension(`1${' '.repeat(2 * MB)}x`, 'width')).toThrow(/not a size/);
    expect(parseDimension(`12${' '.repeat(MB)}px${' '.repeat(MB)}`, 'width')).toBe(12);
    const pattern = repeatTo('[');
    expect(FILTERS.date!('2026-11-26', [pattern], silent)).toBe(pattern);
    expect(FILTERS.date!('2026-11-26', [`${pattern}]YYYY[`], silent)).toBe(`${pattern.slice(1)}2026[`);
  });

  it('trailing blanks and line breaks in HTML, Markdown and comment authors', () => {
    // The HTML charset scan sees 1 KB only; its worst text is ~40 ms with the old pattern (bounded), here much less.
    expect(META_CHARSET.exec(`${'<meta<'.repeat(50)}\0charset=${'\t'.repeat(700)}=R`)).toBeNull();
    const spaces = ' '.repeat(2 * MB);
    expect(`a${spaces}b`.replace(TRAILING_SPACES, '')).toBe(`a${spaces}b`);
    expect(`a${spaces}`.replace(TRAILING_SPACES, '')).toBe('a');
    const separators = repeatTo(' \t,');
    expect(`${separators}x`.replace(TRAILING_SEPARATORS, '')).toHaveLength(separators.length + 1);
    expect(`x${separators}`.replace(TRAILING_SEPARATORS, '')).toBe('x');
    const blanks = repeatTo(' \t');
    expect(`a${blanks}b`.replace(LINE_BREAK_WITH_BLANKS, ' ')).toHaveLength(blanks.length + 2);
    expect(`a${spaces}\n${spaces}b`.replace(LINE_BREAK_WITH_BLANKS, ' ')).toBe('a b');
  });

  it('Markdown link definitions over lines ended by \\r', () => {
    // Two chunks (a heading after a blank line past 128 KB), so the definitions are collected.
    const text = `${repeatTo('[\r')}\n\n# a\n`;
    expect(splitMarkdown(text)).toEqual([text.slice(0, -4), '# a\n']);
  });

  it('PDF: a long token that is almost a number; XMP with long white space', () => {
    const token = `${'1'.repeat(2 * MB)}x`;
    expect(() => new PdfParser(Buffer.from(` ${token} `, 'latin1')).parseObject()).toThrow(PdfSyntaxError);
    expect(new PdfParser(Buffer.from(` ${'1'.repeat(MB)}.5 `, 'latin1')).parseObject()).toBe(Number(`${'1'.repeat(MB)}.5`));
    const blank = ' '.repeat(2 * MB);
    expect(pdfAidElement(`<pdfaid:part>${blank}x${blank}y</pdfaid:part>`, 'part')).toBeUndefined();
    expect(pdfAidElement(`<pdfaid:part>${blank}2${blank}</pdfaid:part>`, 'part')).toBe('2');
  });

  it('PEM blocks: BEGINs without an END, at the request field’s 256 KB and beyond', () => {
    const begins = repeatTo('-----BEGIN CERTIFICATE-----');
    expect(pemBlocks(begins)).toEqual([]);
    expect(requestAnchors(begins.slice(0, 262_144))).toMatch(/holds no PEM certificate/);
  });

  it('format sniffing: a long content type that ends in no main part', () => {
    expect(contentFormat(packageWithContentType('visio'.repeat(190_000))).kind).not.toBe('known');
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

  it('the numbers, sizes, trailing blanks and line breaks: same matches as the old patterns', () => {
    // [old, rewritten, fragments, capture groups both have]
    const pairs: [RegExp, RegExp, string[], number?][] = [
      [/^\s*[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?\s*$/, /^\s*[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?\s*$/, ['1', '0', '.', '-', '+', 'e', 'E', ' ', 'x'], 0],
      [/^\s*(\d+(?:\.\d+)?)\s*(px|pt|in|cm|mm)?\s*$/i, /^\s*(\d+(?:\.\d+)?)\s*(?:(px|pt|in|cm|mm)\s*)?$/i, ['1', '2', '.', ' ', '\t', 'px', 'PT', 'mm', 'x'], 2],
      [/^[+-]?(\d+\.?\d*|\.\d+)$/, /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/, ['1', '0', '.', '-', '+', 'x'], 0],
      [/ +$/, TRAILING_SPACES, [' ', 'a', '\t']],
      [/[\s,]+$/, TRAILING_SEPARATORS, [' ', ',', '\n', 'a', '\u00a0']],
      [/[ \t]*\r?\n[ \t]*/g, LINE_BREAK_WITH_BLANKS, [' ', '\t', '\n', '\r', '\r\n', 'a']],
      [/<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_:.-]+)/i, META_CHARSET, ['<meta', ' ', 'charset', '=', '"', "'", 'utf-8', '>', '<'], 1],
    ];
    for (const [old, rewritten, parts, groups = 0] of pairs) {
      fc.assert(
        fc.property(fragments(parts), (text) => {
          expect(text.replace(rewritten, '|')).toBe(text.replace(old, '|'));
          if (!old.global) expect(rewritten.exec(text)?.slice(0, groups + 1)).toEqual(old.exec(text)?.slice(0, groups + 1));
        }),
        { seed: SEED, numRuns: 1000 },
      );
    }
  });

  it('date patterns, Markdown definitions, PDF/A identification, PEM blocks, OOXML main parts: as the old patterns', () => {
    const oldDate = /\[([^\]]*)\]|YYYY|YY|MMMM|MMM|MM|M|DD|D|dddd|ddd|HH|H|hh|h|mm|ss|A|a/g;
    fc.assert(
      fc.property(fragments(['[', ']', 'YYYY', 'MM', 'D', 'dddd', 'x', ' ', 'a', 'h']), (pattern) => {
        // The old formatting: the pattern's tokens as the old regex split it, each field formatted alone.
        if (pattern === '') return; // no pattern: the default format
        const date = '2026-11-26T09:05:07Z';
        const expected = pattern.replace(oldDate, (field, literal: string | undefined) => literal ?? (FILTERS.date!(date, [field, 'en'], silent) as string));
        expect(FILTERS.date!(date, [pattern, 'en'], silent)).toBe(expected);
      }),
      { seed: SEED, numRuns: 1000 },
    );
    const oldDefinitions = /^ {0,3}\[(?!\^)[^\]\n]+\]:[ \t]*\S.*$/gm;
    const big = '\n'.repeat(300 * 1024);
    fc.assert(
      fc.property(fragments(['[a]: x', '[', ']', ':', ' ', 'b', '\n', '\r\n', '[^n]: y', '\n\n# h\n']), (text) => {
        const chunks = splitMarkdown(`${big}${text}\n\n# end\n`);
        const definitions = `${big}${text}\n\n# end\n`.match(oldDefinitions);
        expect(chunks[0]!.endsWith(definitions ? `\n\n${definitions.join('\n')}\n` : '')).toBe(true);
      }),
      { seed: SEED, numRuns: 50 },
    );
    fc.assert(
      fc.property(fragments(['<pdfaid:part>', '</pdfaid:part>', ' ', '\n', '1', '2B', 'long-text', '<x/>']), (xmp) => {
        expect(pdfAidElement(xmp, 'part')).toBe(/<pdfaid:part>\s*([^<]{1,8}?)\s*<\/pdfaid:part>/.exec(xmp)?.[1]);
      }),
      { seed: SEED, numRuns: 2000 },
    );
    const oldPem = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;
    fc.assert(
      fc.property(fragments(['-----BEGIN CERTIFICATE-----', '-----END CERTIFICATE-----', 'MII', '\n', '-----']), (text) => {
        expect(pemBlocks(text)).toEqual(text.match(oldPem) ?? []);
      }),
      { seed: SEED, numRuns: 2000 },
    );
    const oldMain = /(wordprocessingml|spreadsheetml|presentationml|ms-word|ms-excel|ms-powerpoint|drawingml|visio)[^"]*\.main\+xml$|\.main\+xml$/i;
    fc.assert(
      fc.property(fragments(['application/vnd.', 'visio', 'drawingml', '.main', '+xml', '"', '.MAIN+XML', 'x']), (type) => {
        expect(/\.main\+xml$/i.test(type)).toBe(oldMain.test(type));
      }),
      { seed: SEED, numRuns: 1000 },
    );
  });
});
