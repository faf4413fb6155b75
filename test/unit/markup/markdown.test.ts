import { describe, expect, it } from 'vitest';
import { DomainError } from '../../../src/errors/domain-error.js';
import { markdownToDocx } from '../../../src/documents/markdown/index.js';
import { dataUri, limits, part, partNames, png } from './helpers.js';
import { answering } from '../../support/domain-error.js';

const convert = (md: string, extra: Partial<Parameters<typeof markdownToDocx>[1]> = {}) =>
  markdownToDocx(Buffer.from(md, 'utf8'), { limits, ...extra });
const body = async (md: string) => part((await convert(md)).docx, 'word/document.xml');

describe('markdownToDocx', () => {
  it('writes headings with built-in styles, GitHub slugs as bookmarks and internal links to them', async () => {
    const xml = await body('# Hello, World!\n\n## Hello, World!\n\n###### Six\n\nSee [there](#hello-world-1).\n');
    expect(xml).toContain('<w:pStyle w:val="Heading1"/></w:pPr><w:bookmarkStart w:id="0" w:name="hello-world"/>');
    expect(xml).toContain('w:name="hello-world-1"');
    expect(xml).toContain('<w:pStyle w:val="Heading6"/>');
    expect(xml).toMatch(/<w:hyperlink w:anchor="hello-world-1"[^>]*><w:r><w:rPr><w:rStyle w:val="Hyperlink"\/>/);
  });

  it('writes external links as relationships and inline formatting as run properties', async () => {
    const { docx } = await convert('**b** *i* ~~s~~ `code` a  \nb [x](https://example.com/a?b=1&c=2 "T")');
    const xml = part(docx, 'word/document.xml');
    expect(xml).toMatch(/<w:b\/><w:bCs\/><\/w:rPr><w:t xml:space="preserve">b</);
    expect(xml).toMatch(/<w:i\/><w:iCs\/><\/w:rPr><w:t xml:space="preserve">i</);
    expect(xml).toMatch(/<w:strike\/><\/w:rPr><w:t xml:space="preserve">s</);
    expect(xml).toMatch(/<w:rStyle w:val="VerbatimChar"\/><\/w:rPr><w:t xml:space="preserve">code</);
    expect(xml).toContain('<w:br/>');
    const rel = /<w:hyperlink r:id="(rId\d+)" w:tooltip="T"/.exec(xml)?.[1];
    expect(rel).toBeDefined();
    expect(part(docx, 'word/_rels/document.xml.rels')).toContain(
      `Id="${rel}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/hyperlink" Target="https://example.com/a?b=1&amp;c=2" TargetMode="External"`,
    );
  });

  it('gives every list its own numbering instance, honours start numbers and nests levels', async () => {
    const { docx } = await convert('1. a\n2. b\n\ntext\n\n3. c\n4. d\n   - x\n     - y\n\n- p\n');
    const xml = part(docx, 'word/document.xml');
    const numbering = part(docx, 'word/numbering.xml');
    const numIds = [...xml.matchAll(/<w:ilvl w:val="(\d)"\/><w:numId w:val="(\d+)"\/>/g)].map((m) => `${m[1]}:${m[2]}`);
    // numId 1 is kept for the blocks that continue an item; lists are numbered from 2.
    expect(numIds).toEqual(['0:2', '0:2', '0:3', '0:3', '1:4', '2:5', '0:6']);
    expect(numbering).toContain('<w:num w:numId="3"><w:abstractNumId w:val="2"/><w:lvlOverride w:ilvl="0"><w:startOverride w:val="3"/>');
    expect(numbering).toMatch(/<w:abstractNum w:abstractNumId="2">.*?<w:lvl w:ilvl="0"><w:start w:val="3"\/><w:numFmt w:val="decimal"\/>/);
    expect(numbering).toMatch(/<w:abstractNum w:abstractNumId="5">.*?<w:lvl w:ilvl="0"><w:start w:val="1"\/><w:numFmt w:val="bullet"\/>/);
  });

  it('numbers nested ordered lists as the source does (decimal at every level) and keeps an item\'s later blocks in it', async () => {
    const { docx } = await convert('1. one\n\n   more of one\n\n   ```\n   code of one\n   ```\n\n   1. nested\n\n      more of nested\n');
    const xml = part(docx, 'word/document.xml');
    const numbering = part(docx, 'word/numbering.xml');
    expect(numbering).toMatch(/<w:abstractNum w:abstractNumId="2">.*?<w:lvl w:ilvl="1"><w:start w:val="1"\/><w:numFmt w:val="decimal"\/>/);
    // Later blocks: numbered with the continuation numbering (no number shown) at their item's level.
    const continued = [...xml.matchAll(/<w:p><w:pPr>(?:<w:pStyle w:val="(\w+)"\/>)?<w:numPr><w:ilvl w:val="(\d)"\/><w:numId w:val="1"\/><\/w:numPr>(?:<w:ind[^>]*>)?<\/w:pPr><w:r><w:t xml:space="preserve">([^<]+)/g)]
      .map((m) => `${m[2]}:${m[1] ?? ''}:${m[3]}`);
    expect(continued).toEqual(['0::more of one', '0:SourceCode:code of one', '1::more of nested']);
    expect(numbering).toMatch(/<w:abstractNum w:abstractNumId="0">.*?<w:numFmt w:val="none"\/><w:suff w:val="nothing"\/><w:lvlText w:val=""\/>/);
  });

  it('nests lists up to nine Word levels', async () => {
    const md = Array.from({ length: 9 }, (_, i) => `${'  '.repeat(i)}- level ${i}`).join('\n');
    const xml = await body(md);
    expect(xml).toContain('<w:ilvl w:val="8"/>');
  });

  it('writes task list items as checkbox content controls', async () => {
    const xml = await body('- [x] done\n- [ ] to do\n');
    expect(xml).toContain('<w14:checked w14:val="1"/>');
    expect(xml).toContain('<w14:checked w14:val="0"/>');
    expect(xml).toContain('\u2612');
    expect(xml).toContain('\u2610');
  });

  it('marks the table header row to repeat and applies GFM column alignment', async () => {
    const xml = await body('| a | b | c |\n|:-|:-:|-:|\n| 1 | 2 | 3 |\n');
    expect(xml).toMatch(/<w:tr><w:trPr><w:tblHeader\/><\/w:trPr>/);
    expect((xml.match(/<w:tblHeader\/>/g) ?? []).length).toBe(1);
    expect(xml).toContain('<w:jc w:val="center"/></w:pPr><w:r><w:t xml:space="preserve">2<');
    expect(xml).toContain('<w:jc w:val="right"/></w:pPr><w:r><w:t xml:space="preserve">3<');
  });

  it('writes real footnotes with separators', async () => {
    const { docx } = await convert('Text[^n] and more[^n].\n\n[^n]: The *note*.\n');
    const xml = part(docx, 'word/document.xml');
    const notes = part(docx, 'word/footnotes.xml');
    expect(xml).toContain('<w:footnoteReference w:id="1"/>');
    expect(xml).toContain('<w:footnoteReference w:id="2"/>');
    expect(notes).toContain('<w:footnote w:type="separator" w:id="-1">');
    expect(notes).toContain('<w:footnote w:type="continuationSeparator" w:id="0">');
    expect(notes).toMatch(/<w:footnote w:id="1"><w:p><w:pPr><w:pStyle w:val="FootnoteText"\/><\/w:pPr><w:r><w:rPr><w:rStyle w:val="FootnoteReference"\/><\/w:rPr><w:footnoteRef\/>.*note/);
    expect(part(docx, 'word/settings.xml')).toContain('<w:footnotePr><w:footnote w:id="-1"/><w:footnote w:id="0"/></w:footnotePr>');
  });

  it('writes quotes, code blocks with their whitespace, and rules', async () => {
    const xml = await body('> quoted\n>\n> > deeper\n\n```js\nif (a) {\n\tb();\n}\n```\n\n---\n');
    expect(xml).toContain('<w:pStyle w:val="Quote"/></w:pPr><w:r><w:t xml:space="preserve">quoted');
    expect(xml).toContain('<w:pStyle w:val="Quote"/><w:ind w:left="1440"/></w:pPr><w:r><w:t xml:space="preserve">deeper');
    expect(xml).toContain('<w:pStyle w:val="SourceCode"/></w:pPr><w:r><w:t xml:space="preserve">if (a) {</w:t></w:r><w:r><w:br/></w:r><w:r><w:tab/><w:t xml:space="preserve">b();');
    expect(xml).toContain('<w:pBdr><w:bottom w:val="single"');
  });

  it('embeds data: images at their pixel size, capped to the text width with the aspect ratio kept', async () => {
    const { docx } = await convert(`![small](${dataUri(png(40, 20))}) ![wide](${dataUri(png(2000, 100))})`);
    const xml = part(docx, 'word/document.xml');
    expect(xml).toContain(`<wp:extent cx="${40 * 9525}" cy="${20 * 9525}"/>`);
    const maxEmu = 9026 * 635;
    expect(xml).toContain(`<wp:extent cx="${maxEmu}" cy="${Math.round((100 * 9525 * maxEmu) / (2000 * 9525))}"/>`);
    expect(partNames(docx)).toEqual(expect.arrayContaining(['word/media/image1.png', 'word/media/image2.png']));
    expect(part(docx, '[Content_Types].xml')).toContain('<Default Extension="png" ContentType="image/png"/>');
  });

  it('does not fetch remote or local images: alt text and a warning instead', async () => {
    const { docx, warnings } = await convert('![Remote logo](http://169.254.169.254/x.png) ![A movie](movie.jpg)');
    const xml = part(docx, 'word/document.xml');
    expect(xml).toContain('Remote logo');
    expect(xml).toContain('A movie');
    expect(xml).not.toContain('<w:drawing>');
    expect(warnings.some((w) => w.message.includes('not fetched'))).toBe(true);
    expect(warnings.some((w) => w.message.includes('movie.jpg'))).toBe(true);
  });

  it('puts YAML front matter into the core properties and a Title paragraph', async () => {
    const { docx } = await convert('---\ntitle: My <Title>\nauthor: [Ann, Bob]\nkeywords: [a, b]\nsubject: Subj\ndate: 2024-01-28\n---\n');
    const core = part(docx, 'docProps/core.xml');
    expect(core).toContain('<dc:title>My &lt;Title&gt;</dc:title>');
    expect(core).toContain('<dc:creator>Ann; Bob</dc:creator>');
    expect(core).toContain('<cp:keywords>a, b</cp:keywords>');
    expect(core).toContain('<dc:subject>Subj</dc:subject>');
    expect(core).toContain('2024-01-28T00:00:00Z');
    expect(part(docx, 'word/document.xml')).toContain('<w:pStyle w:val="Title"/>');
  });

  it('reads front matter closed by pandoc\'s `...` and parses what follows as Markdown; an unclosed fence is Markdown', async () => {
    const { docx } = await convert('---\r\ntitle: Dots\r\n...\r\n> quoted\n\n# Heading\n');
    expect(part(docx, 'docProps/core.xml')).toContain('<dc:title>Dots</dc:title>');
    const xml = part(docx, 'word/document.xml');
    expect(xml).toMatch(/<w:pStyle w:val="Quote"\/><\/w:pPr><w:r><w:t xml:space="preserve">quoted/);
    expect(xml).toContain('<w:pStyle w:val="Heading1"/>');
    const unclosed = part((await convert('---\ntitle: no\n\ntext\n')).docx, 'word/document.xml');
    expect(unclosed).toContain('title: no');
  });

  it('produces a complete package for an empty document', async () => {
    const { docx } = await convert('');
    expect(partNames(docx)).toEqual(expect.arrayContaining([
      '[Content_Types].xml', '_rels/.rels', 'word/document.xml', 'word/_rels/document.xml.rels', 'word/styles.xml',
      'word/numbering.xml', 'word/footnotes.xml', 'word/settings.xml', 'word/fontTable.xml', 'word/webSettings.xml',
      'docProps/core.xml', 'docProps/app.xml',
    ]));
    expect(part(docx, 'word/document.xml')).toMatch(/<w:body><w:sectPr>/);
  });

  it('defines the styles it uses with Word built-in names', async () => {
    const styles = part((await convert('x')).docx, 'word/styles.xml');
    for (const [id, name] of [
      ['Normal', 'Normal'], ['Heading1', 'heading 1'], ['Heading6', 'heading 6'], ['Title', 'Title'], ['Quote', 'Quote'],
      ['SourceCode', 'Source Code'], ['VerbatimChar', 'Verbatim Char'], ['Hyperlink', 'Hyperlink'], ['FootnoteText', 'footnote text'],
      ['FootnoteReference', 'footnote reference'], ['TableGrid', 'Table Grid'], ['ListParagraph', 'List Paragraph'], ['Compact', 'Compact'],
    ]) {
      expect(styles).toMatch(new RegExp(`w:styleId="${id}"><w:name w:val="${name}"/>`));
    }
  });

  it('strips characters XML 1.0 forbids and escapes markup', async () => {
    const xml = await body('a\u0001b 1 < 2 > 0 & "q"');
    expect(xml).toContain('ab 1 &lt; 2 &gt; 0 &amp; &quot;q&quot;');
  });

  it('replaces invalid UTF-8 with U+FFFD and warns', async () => {
    const { docx, warnings } = await markdownToDocx(Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a]), { limits });
    expect(part(docx, 'word/document.xml')).toContain('caf\uFFFD');
    expect(warnings.map((w) => w.message).join(' ')).toMatch(/not valid UTF-8/);
  });

  it('refuses input over the size limit with 413', async () => {
    const err = await markdownToDocx(Buffer.alloc(101, 0x61), { limits: { maxBytes: 100, maxNestingDepth: 8 } }).catch((e) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject(answering(413, 'FILE_TOO_LARGE'));
  });

  it.each([
    ['quotes far past the limit', '>'.repeat(50_000) + ' x'],
    ['quotes just past the limit', '>'.repeat(33) + ' x'],
    ['lists past the limit', Array.from({ length: 40 }, (_, i) => `${'  '.repeat(i)}- x`).join('\n')],
  ])('refuses %s with 422 DOCUMENT_TOO_COMPLEX', async (_, md) => {
    const err = await convert(md).catch((e) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect(err).toMatchObject(answering(422, 'DOCUMENT_TOO_COMPLEX'));
  });

  // Inline patterns micromark resolves in super-linear time are refused before parsing, fast.
  it.each([
    ['nested images', '!['.repeat(10_000) + 'a' + '](b)'.repeat(10_000)],
    ['nested brackets', '['.repeat(20_000) + 'a' + ']'.repeat(20_000)],
    ['nested emphasis in one run', '*'.repeat(25_000) + 'a' + '*'.repeat(25_000)],
    ['nested emphasis in separate runs', '*a '.repeat(5_000) + 'b* '.repeat(5_000)],
    ['a paragraph of 20 000 link openers', '[a]('.repeat(20_000)],
    ['a paragraph of 20 000 reference-like labels', '[a] '.repeat(20_000)],
    ['50 000 underscores across lines of one paragraph', 'x_y_z\n'.repeat(25_000)],
  ])('refuses %s with 422 DOCUMENT_TOO_COMPLEX in well under a second', async (_, md) => {
    const started = performance.now();
    const err = await convert(md).catch((e) => e);
    expect(err).toMatchObject(answering(422, 'DOCUMENT_TOO_COMPLEX'));
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('accepts busy but ordinary inline markup: emphasis, links, unclosed openers, snake_case across paragraphs', async () => {
    const paragraph = '*a* **b** [link](http://x.org/a_b) `c` '.repeat(500);
    const md = `${paragraph}\n\n${'*note '.repeat(300)}\n\n${Array.from({ length: 3000 }, (_, i) => `- item_${i}_x **bold** [l](u)`).join('\n')}\n`;
    const xml = await body(md);
    expect(xml).toContain('item_2999_x');
    expect((xml.match(/<w:hyperlink /g) ?? []).length).toBe(3500);
  });

  it('accepts nesting at the limit', async () => {
    const xml = await body('>'.repeat(32) + ' deep');
    expect(xml).toContain('deep');
  });
});
