import { DOMParser, type Document as XmlDocument, type Element as XmlElement } from '@xmldom/xmldom';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { htmlToDocx } from '../../../src/documents/html/index.js';
import { parseStylesheet, STYLESHEET_BUDGET } from '../../../src/documents/html/stylesheets.js';
import { DomainError } from '../../../src/errors/domain-error.js';
import { limits, part } from './helpers.js';

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';

/** What Word shows for each run and paragraph, read from document.xml with a namespace-aware parser. */
async function render(html: string, files: [string, string][] = []) {
  const result = await htmlToDocx(Buffer.from(html), { limits, files: files.map(([name, css]) => [name, Buffer.from(css)]) });
  const doc = new DOMParser().parseFromString(part(result.docx, 'word/document.xml'), 'text/xml');
  const runs = new Map<string, { bold: boolean; italic: boolean; color?: string; halfPoints?: string }>();
  const paragraphs = new Map<string, string | undefined>();
  const els = (parent: XmlElement | XmlDocument, name: string) => Array.from(parent.getElementsByTagNameNS(W, name));
  for (const p of els(doc, 'p')) {
    const text = els(p, 't').map((t) => t.textContent).join('');
    paragraphs.set(text, els(p, 'jc')[0]?.getAttributeNS(W, 'val') ?? undefined);
    for (const r of els(p, 'r')) {
      const t = els(r, 't').map((x) => x.textContent).join('');
      if (!t.trim()) continue;
      const rPr = els(r, 'rPr')[0];
      const on = (name: string) => (rPr ? els(rPr, name).some((e) => e.getAttributeNS(W, 'val') !== '0' && e.getAttributeNS(W, 'val') !== 'false') : false);
      runs.set(t.trim(), {
        bold: on('b'),
        italic: on('i'),
        color: rPr ? els(rPr, 'color')[0]?.getAttributeNS(W, 'val') ?? undefined : undefined,
        halfPoints: rPr ? els(rPr, 'sz')[0]?.getAttributeNS(W, 'val') ?? undefined : undefined,
      });
    }
  }
  return { runs, paragraphs, warnings: result.warnings };
}

describe('HTML stylesheets: <style> and linked files sent with the document', () => {
  it('type, class, id, descendant and list selectors; specificity, then order, then the style attribute, then !important', async () => {
    const { runs, paragraphs, warnings } = await render(`<html><head><style>
      p { color: #0000ff; }
      .alert, #lead { font-weight: bold; }
      p.alert { color: red; }
      div .note { font-style: italic; text-align: center; }
      .late { color: green; } .late { color: #123456; }
      #lead { color: teal !important; }
      em { color: #00ff00; }
    </style></head><body>
      <p>Plain text</p>
      <p class="alert">Alert text</p>
      <p id="lead" style="color: black">Lead text</p>
      <div><section><p class="note">Note text</p></section></div>
      <p class="note">Outside note</p>
      <p class="late">Late text</p>
      <p style="color: #abcdef">Inline wins</p>
    </body></html>`);
    expect(runs.get('Plain text')).toMatchObject({ bold: false, color: '0000FF' });
    expect(runs.get('Alert text')).toMatchObject({ bold: true, color: 'FF0000' }); // p.alert (0,1,1) over p (0,0,1)
    expect(runs.get('Lead text')).toMatchObject({ bold: true, color: '008080' }); // !important over the style attribute
    expect(runs.get('Note text')).toMatchObject({ italic: true });
    expect(paragraphs.get('Note text')).toBe('center');
    expect(runs.get('Outside note')).toMatchObject({ italic: false }); // not inside a div
    expect(paragraphs.get('Outside note')).toBeUndefined();
    expect(runs.get('Late text')).toMatchObject({ color: '123456' }); // same specificity: the later rule
    expect(runs.get('Inline wins')).toMatchObject({ color: 'ABCDEF' });
    expect(warnings).toEqual([]);
  });

  it('a <link rel=stylesheet> is read from the files sent with the document; one not sent is a warning naming it', async () => {
    const html = '<html><head><link rel="stylesheet" href="css/site.css"><link rel="stylesheet" href="missing.css"><link rel="stylesheet" href="https://cdn.example/x.css"></head><body><h1 class="title">Styled title</h1><p>Body</p></body></html>';
    const { runs, warnings } = await render(html, [['css/site.css', '.title { color: #c00000; font-size: 30pt } p { font-weight: 700 }']]);
    expect(runs.get('Styled title')).toMatchObject({ color: 'C00000', halfPoints: '60' });
    expect(runs.get('Body')).toMatchObject({ bold: true });
    expect(warnings.map((w) => [w.code, w.field])).toEqual([
      ['STYLESHEET_NOT_APPLIED', 'missing.css'],
      ['STYLESHEET_NOT_APPLIED', 'https://cdn.example/x.css'],
    ]);
    expect(warnings[0]!.message).toContain('"missing.css"');
    // A multipart part's file name comes without its folders: "site.css" serves href="css/site.css".
    expect((await render(html.replace('missing.css', 'css/site.css'), [['site.css', 'p { font-weight: bold }']])).runs.get('Body')).toMatchObject({ bold: true });
  });

  it('unsupported selectors and at-rules are left out, with one warning counting them', async () => {
    const { runs, warnings } = await render('<style>@media print { p { color: red } } div > p { color: red } p:first-child { color: red } a[href] { color: red } p { font-style: italic }</style><div><p>Text</p></div>');
    expect(runs.get('Text')).toMatchObject({ italic: true, color: undefined });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ code: 'STYLESHEET_NOT_APPLIED', message: expect.stringContaining('4 selector(s)') });
  });

  it('the parser steps over comments, quotes and nested blocks', () => {
    const { rules, ignored } = parseStylesheet('/* p { x } */ p { content: "}"; color: red } @supports (x) { a { b: c } } h1, h2 { color: blue } /* unterminated');
    expect(rules.map((r) => r.compounds.map((c) => c.tag))).toEqual([['p'], ['h1'], ['h2']]);
    expect(ignored).toBe(1);
  });

  it('matching work is counted: a stylesheet that would test too many selectors is refused with 422 naming the limit', async () => {
    // 4 000 rules ending in p, each climbing 20 ancestors for 200 paragraphs: 1.6·10⁷ tests.
    const css = Array.from({ length: 4000 }, (_, i) => `span.n${i} div p { color: red }`).join('\n');
    const html = `<style>${css}</style>${'<div>'.repeat(20)}${'<p>x</p>'.repeat(200)}${'</div>'.repeat(20)}`;
    const started = performance.now();
    const err = await htmlToDocx(Buffer.from(html), { limits }).catch((e: unknown) => e as DomainError);
    expect(err).toBeInstanceOf(DomainError);
    console.log(`stylesheets: refused after ${(performance.now() - started).toFixed(0)} ms`);
    expect(err).toMatchObject({ code: 'DOCUMENT_TOO_COMPLEX', extensions: { limit: { name: 'convert.maxStyleMatchSteps', max: STYLESHEET_BUDGET.maxMatchSteps } } });
    // The same rules over a few paragraphs are applied (nothing matches: no span ancestor).
    const few = `<style>${css}</style><div><p>x</p></div>`;
    expect((await htmlToDocx(Buffer.from(few), { limits })).warnings).toEqual([]);
  });
});

describe('the stylesheet parser, for any text (fast-check)', () => {
  const cssPiece = fc.constantFrom('p', 'div', '.a', '#b', '*', ' ', ',', '{', '}', ';', ':', 'color:red', 'font-weight:bold', '!important', '"', "'", '/*', '*/', '@media x', '\\', '>', '+', '~', '[x]', '\n');
  const cssLike = fc.array(cssPiece, { maxLength: 200 }).map((pieces) => pieces.join(''));
  it('ends, without throwing, with at most one rule per selector character and rules in order', () => {
    fc.assert(
      fc.property(fc.oneof(cssLike, fc.string({ maxLength: 500 })), (css) => {
        const { rules, ignored } = parseStylesheet(css, 7);
        expect(ignored).toBeGreaterThanOrEqual(0);
        expect(rules.length).toBeLessThanOrEqual(css.length);
        rules.forEach((rule, i) => expect(rule.order).toBeGreaterThanOrEqual(i === 0 ? 7 : rules[i - 1]!.order));
      }),
      { numRuns: 400, seed: Number(process.env.FUZZ_SEED ?? 20261126) },
    );
  });
});
