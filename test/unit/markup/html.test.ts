import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../../src/errors/domain-error.js';
import { httpStatusOf } from '../../../src/http/error-status.js';
import { htmlToDocx } from '../../../src/documents/html/index.js';
import { markdownToDocx } from '../../../src/documents/markdown/index.js';
import PizZip from 'pizzip';
import { dataUri, limits, part, partNames, png } from './helpers.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { answering } from '../../support/domain-error.js';

const convert = (html: string | Buffer, extra: Partial<Parameters<typeof htmlToDocx>[1]> = {}) =>
  htmlToDocx(typeof html === 'string' ? Buffer.from(html, 'utf8') : html, { limits, ...extra });
const body = async (html: string) => part((await convert(html)).docx, 'word/document.xml');

describe('htmlToDocx', () => {
  it('writes <ins>/<del> as tracked changes with author and date', async () => {
    const xml = await body('<p>a <ins cite="x" title="Ann" datetime="2024-05-01T10:00:00Z">new</ins> <del>old</del></p>');
    expect(xml).toMatch(/<w:ins w:id="\d+" w:author="Ann" w:date="2024-05-01T10:00:00Z"><w:r><w:t xml:space="preserve">new<\/w:t><\/w:r><\/w:ins>/);
    expect(xml).toMatch(/<w:del w:id="\d+" w:author="Unknown"><w:r><w:delText xml:space="preserve">old<\/w:delText><\/w:r><\/w:del>/);
  });

  it('takes lazy-loaded images as a browser shows them once loaded: data-src, data-srcset, srcset, <picture>, <noscript> copies', async () => {
    const real = dataUri(png(40, 20));
    const placeholder = dataUri(png(1, 1));
    const { docx } = await convert(`
      <p><img src="${placeholder}" data-src="${real}" alt="a"></p>
      <p><img src="${placeholder}" data-srcset="${dataUri(png(4, 2))} 200w, ${real} 800w" alt="b"></p>
      <p><img srcset="${real} 2x" alt="c"></p>
      <picture><source srcset="x.webp" type="image/webp"><source srcset="${real}"><img alt="d"></picture>
      <figure><div><img alt="e" class="lazy"></div><noscript><img src="${real}" alt="e"></noscript><figcaption>E</figcaption></figure>
      <p><img src="${placeholder}" data-src="https://images.example/real.png" alt="f"></p>
      <noscript><img src="https://tracker.example/p.gif" alt="tracking"></noscript>`);
    const xml = part(docx, 'word/document.xml');
    const drawn = [...xml.matchAll(/<wp:extent cx="(\d+)" cy="(\d+)"\/><wp:effectExtent l="0" t="0" r="0" b="0"\/><wp:docPr id="\d+" name="Picture \d+" descr="(\w*)"/g)]
      .map((m) => `${m[3]}:${Number(m[1]) / 9525}x${Number(m[2]) / 9525}`);
    // f: the real picture is remote (not fetched), so the placeholder stands in, as for pandoc;
    // a <noscript> that replaces no placeholder is not shown (scripts would hide it).
    expect(drawn).toEqual(['a:40x20', 'b:40x20', 'c:40x20', 'd:40x20', 'e:40x20', 'f:1x1']);
    expect(xml).not.toContain('tracking');
  });

  it('lays out the blocks a link wraps (teaser cards) as blocks, not one paragraph, and keeps an item\'s heading a heading', async () => {
    const xml = await body('<a href="/story">Kicker <div>Card title</div><p>Card summary.</p></a><ul><li><a href="/r"><h3>Related</h3><p>Summary</p></a></li></ul>');
    const paragraphs = [...xml.matchAll(/<w:p>(.*?)<\/w:p>/g)].map((m) => m[1]);
    expect(paragraphs).toHaveLength(5);
    expect(paragraphs[0]).toMatch(/<w:hyperlink r:id="rId\d+" w:history="1">.*Kicker/);
    expect(paragraphs[1]).toContain('Card title');
    expect(paragraphs[2]).toContain('Card summary.');
    expect(paragraphs[3]).toMatch(/<w:pStyle w:val="Heading3"\/><w:numPr><w:ilvl w:val="0"\/><w:numId w:val="2"\/>.*Related/);
    expect(paragraphs[4]).toMatch(/<w:numId w:val="1"\/>.*Summary/);
  });

  it('draws images at the size their width/height attributes give', async () => {
    const xml = await body(`<p><img src="${dataUri(png(40, 20))}" width="80"><img src="${dataUri(png(40, 20))}" width="10" height="30"></p>`);
    const sizes = [...xml.matchAll(/<wp:extent cx="(\d+)" cy="(\d+)"/g)].map((m) => `${Number(m[1]) / 9525}x${Number(m[2]) / 9525}`);
    expect(sizes).toEqual(['80x40', '10x30']);
  });

  it('numbers an <ol> as its type or list-style-type says, decimal otherwise', async () => {
    const { docx } = await convert('<ol><li>a<ol type="a"><li>b<ol style="list-style-type: lower-roman"><li>c</li></ol></li></ol></li></ol><ol type="I"><li>d</li></ol>');
    const numbering = part(docx, 'word/numbering.xml');
    const formats = [...numbering.matchAll(/<w:abstractNum w:abstractNumId="(\d+)">.*?<\/w:abstractNum>/g)].map((m) => {
      const own = [...m[0].matchAll(/<w:lvl w:ilvl="(\d)"><w:start w:val="\d+"\/><w:numFmt w:val="(\w+)"/g)];
      return own.map((l) => l[2]);
    });
    expect(formats.map((levels, i) => levels[i < 3 ? i : 0])).toEqual(['decimal', 'lowerLetter', 'lowerRoman', 'upperRoman']);
  });

  it('maps colspan to gridSpan, rowspan to vMerge, thead to repeating header rows and backgrounds to shading', async () => {
    const xml = await body(`<table>
      <thead><tr><th colspan="2">H</th><th>H3</th></tr></thead>
      <tbody><tr><td rowspan="2" style="background-color:#ff0000">R</td><td>b</td><td bgcolor="yellow">c</td></tr>
      <tr><td>e</td><td>f</td></tr></tbody></table>`);
    expect(xml).toContain('<w:gridSpan w:val="2"/>');
    expect(xml).toMatch(/<w:tr><w:trPr><w:tblHeader\/><\/w:trPr>/);
    expect(xml).toContain('<w:vMerge w:val="restart"/><w:shd w:val="clear" w:color="auto" w:fill="FF0000"/>');
    expect(xml).toMatch(/<w:tcPr><w:tcW w:w="\d+" w:type="dxa"\/><w:vMerge\/><\/w:tcPr><w:p\/><\/w:tc>/);
    expect(xml).toContain('w:fill="FFFF00"');
    expect((xml.match(/<w:gridCol /g) ?? []).length).toBe(3);
    // every row fills the 3-column grid: 2+1, 1+1+1, (merged)+1+1
    const rows = xml.split('<w:tr>').slice(1);
    for (const row of rows) {
      const spans = [...row.matchAll(/<w:tc>(?:<w:tcPr>.*?<\/w:tcPr>)/g)].map((m) => Number(/gridSpan w:val="(\d+)"/.exec(m[0])?.[1] ?? 1));
      expect(spans.reduce((a, b) => a + b, 0)).toBe(3);
    }
  });

  it('applies the inline CSS that matters', async () => {
    const xml = await body(`<p style="text-align:center;page-break-before:always"><span style="font-weight:bold;font-style:italic;
      text-decoration:underline line-through;color:rgb(255,0,0);background-color:#00ff00;font-size:14pt">styled</span></p>
      <p>x<sup>2</sup>y<sub>i</sub></p><div style="display:none">hidden</div>`);
    expect(xml).toContain('<w:pageBreakBefore/><w:jc w:val="center"/>');
    expect(xml).toContain('<w:b/><w:bCs/><w:i/><w:iCs/><w:strike/><w:color w:val="FF0000"/><w:sz w:val="28"/><w:szCs w:val="28"/><w:u w:val="single"/><w:shd w:val="clear" w:color="auto" w:fill="00FF00"/></w:rPr><w:t xml:space="preserve">styled');
    expect(xml).toContain('<w:vertAlign w:val="superscript"/></w:rPr><w:t xml:space="preserve">2');
    expect(xml).toContain('<w:vertAlign w:val="subscript"/></w:rPr><w:t xml:space="preserve">i');
    // display:none text stays in the document as Word hidden text, paragraph mark included.
    expect(xml).toContain('<w:p><w:pPr><w:rPr><w:vanish/></w:rPr></w:pPr><w:r><w:rPr><w:vanish/></w:rPr><w:t xml:space="preserve">hidden</w:t></w:r></w:p>');
  });

  it('keeps hidden text as hidden runs but leaves hidden tables and images out', async () => {
    const gif = 'data:image/gif;base64,R0lGODlhAQABAAAAACH5BAEKAAEALAAAAAABAAEAAAICTAEAOw==';
    const { docx } = await convert(`<p>After <b style="visibility:hidden">secret</b> end</p><div hidden><table><tr><td>cell</td></tr></table></div><div style="display:none"><img alt="pic" src="${gif}"></div>`);
    const xml = part(docx, 'word/document.xml');
    expect(xml).toContain('<w:r><w:rPr><w:b/><w:bCs/><w:vanish/></w:rPr><w:t xml:space="preserve">secret</w:t></w:r>');
    expect(xml).toContain('<w:p><w:r><w:t xml:space="preserve">After </w:t></w:r>'); // visible text: the paragraph mark stays visible
    expect(xml).not.toContain('cell');
    expect(xml).not.toContain('<w:tbl>');
    expect(partNames(docx).some((n) => n.startsWith('word/media/'))).toBe(false);
  });

  it('ignores scripts, styles and event attributes', async () => {
    const xml = await body('<style>p{color:red}</style><script>alert(1)</script><p onclick="evil()">Body</p>');
    expect(xml).not.toContain('alert');
    expect(xml).not.toContain('color:red');
    expect(xml).not.toContain('evil');
    expect(xml).toContain('Body');
  });

  it('bookmarks headings (explicit id and slug) and <a name> targets of internal links', async () => {
    const xml = await body('<h2 id="intro">Intro Part</h2><p><a name="spot"></a>here</p><p><a href="#spot">go</a> <a href="#intro">up</a></p>');
    expect(xml).toContain('<w:pStyle w:val="Heading2"/></w:pPr><w:bookmarkStart w:id="0" w:name="intro"/><w:bookmarkStart w:id="1" w:name="intro-part"/>');
    expect(xml).toContain('w:name="spot"');
    expect(xml).toContain('<w:hyperlink w:anchor="spot"');
    expect(xml).toContain('<w:hyperlink w:anchor="intro"');
  });

  it('lowers lists, nested lists, pre, blockquote, hr, br and definition lists', async () => {
    const xml = await body(`<ol start="4"><li>four<ul><li>inner</li></ul></li></ol><pre>line 1
  line 2</pre><blockquote><p>q</p></blockquote><hr><p>a<br>b</p><dl><dt>T</dt><dd>D</dd></dl>`);
    expect(xml).toContain('<w:ilvl w:val="1"/>');
    expect(xml).toContain('<w:pStyle w:val="SourceCode"/></w:pPr><w:r><w:t xml:space="preserve">line 1</w:t></w:r><w:r><w:br/></w:r><w:r><w:t xml:space="preserve">  line 2');
    expect(xml).toContain('<w:pStyle w:val="Quote"/>');
    expect(xml).toContain('<w:pBdr><w:bottom');
    expect(xml).toContain('<w:t xml:space="preserve">a</w:t></w:r><w:r><w:br/></w:r>');
    expect(xml).toContain('<w:pStyle w:val="DefinitionTerm"/>');
    expect(xml).toContain('<w:pStyle w:val="Definition"/>');
  });

  it('embeds data: images and collapses whitespace like a browser', async () => {
    const xml = await body(`<p>  two   words\n and <img src="${dataUri(png(10, 30))}" alt="pic"> </p>`);
    expect(xml).toContain('<w:t xml:space="preserve">two words and </w:t>');
    expect(xml).toContain(`<wp:extent cx="${10 * 9525}" cy="${30 * 9525}"/>`);
    expect(xml).toContain('descr="pic"');
  });

  it('honours a meta charset for non-UTF-8 pages', async () => {
    const html = Buffer.concat([Buffer.from('<meta charset="windows-1252"><p>caf'), Buffer.from([0xe9, 0x80]), Buffer.from('</p>')]);
    const { docx, warnings } = await convert(html);
    expect(part(docx, 'word/document.xml')).toContain('caf\u00e9\u20ac');
    expect(warnings).toEqual([]);
  });

  it('refuses HTML nested past the limit with 422, even absurdly deep', async () => {
    for (const depth of [40, 200_000]) {
      const err = await convert('<div>'.repeat(depth) + 'x').catch((e) => e);
      expect(err).toBeInstanceOf(DomainError);
      expect(err).toMatchObject(answering(422, 'DOCUMENT_TOO_COMPLEX'));
    }
  });

  it('reads the title and meta tags into the core properties', async () => {
    const { docx } = await convert('<html><head><title>T1</title><meta name="author" content="Ann"><meta name="keywords" content="a, b"></head><body>x</body></html>');
    const core = part(docx, 'docProps/core.xml');
    expect(core).toContain('<dc:title>T1</dc:title>');
    expect(core).toContain('<dc:creator>Ann</dc:creator>');
    expect(core).toContain('<cp:keywords>a, b</cp:keywords>');
  });
});

describe('reference document', () => {
  const reference = readFileSync(`${CORPUS_DIR}/docx/pandoc-tables.docx`);

  it("uses the reference's styles and adds the style ids it lacks", async () => {
    const { docx } = await markdownToDocx(Buffer.from('# H\n\n```\ncode\n```\n'), { limits, reference });
    const styles = part(docx, 'word/styles.xml');
    const referenceStyles = part(reference, 'word/styles.xml');
    const firstReferenceStyle = /<w:style [^>]*w:styleId="[^"]+"/.exec(referenceStyles)![0];
    expect(styles).toContain(firstReferenceStyle);
    for (const id of ['Heading1', 'SourceCode', 'VerbatimChar', 'Hyperlink', 'FootnoteText', 'TableGrid', 'Quote']) {
      expect(styles).toContain(`w:styleId="${id}"`);
    }
    expect((styles.match(/w:styleId="Normal"/g) ?? []).length).toBe(1);
  });

  it('rejects a reference that is not a DOCX with 400', async () => {
    const err = await markdownToDocx(Buffer.from('x'), { limits, reference: Buffer.from('not a zip at all, sorry') }).catch((e) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect(httpStatusOf(err)).toBe(400);
    expect(err.message).toMatch(/reference document/);
  });

  it('embeds SVG images (data: URIs, base64 or inline) as PNG rasters of their size', async () => {
    const svg = "<svg xmlns='http://www.w3.org/2000/svg' width='40' height='20'><rect width='40' height='20' fill='red'/></svg>";
    const { docx, warnings } = await convert(`<p><img alt="a" src="data:image/svg+xml;utf8,${svg}"><img alt="b" src="${dataUri(Buffer.from(svg), 'image/svg+xml')}"></p>`);
    expect(warnings).toEqual([]);
    const media = partNames(docx).filter((n) => n.startsWith('word/media/'));
    expect(media).toEqual(['word/media/image1.png', 'word/media/image2.png']);
    const png = new PizZip(docx).file(media[0])!.asNodeBuffer();
    expect(png.readUInt32BE(16)).toBe(80); // drawn at twice the CSS size
    expect(part(docx, 'word/document.xml')).toContain(`<wp:extent cx="${40 * 9525}" cy="${20 * 9525}"/>`);
    const broken = await convert('<p><img alt="alt text" src="data:image/svg+xml;utf8,<svg xmlns=\'http://www.w3.org/2000/svg\'><g></svg>"></p>');
    expect(part(broken.docx, 'word/document.xml')).toContain('alt text');
    expect(broken.warnings.map((w) => w.message).join(' ')).toMatch(/SVG image .* was not embedded/);
  });

  it('percent-encodes characters URIs do not allow in hyperlink targets, keeping valid escapes', async () => {
    const { docx } = await convert('<p><a href="http://example.com/foo bar">a</a> <a href="http://x.org/%20é?q=100%">b</a></p>');
    const rels = part(docx, 'word/_rels/document.xml.rels');
    expect(rels).toContain('Target="http://example.com/foo%20bar"');
    expect(rels).toContain('Target="http://x.org/%20%C3%A9?q=100%25"');
  });

  it('keeps code inside links as code (Verbatim Char) with the hyperlink look', async () => {
    const xml = await body('<p><a href="https://x.org/">see <code>run()</code></a></p>');
    expect(xml).toMatch(/<w:hyperlink r:id="rId\d+" w:history="1"><w:r><w:rPr><w:rStyle w:val="Hyperlink"\/><\/w:rPr><w:t xml:space="preserve">see <\/w:t><\/w:r><w:r><w:rPr><w:rStyle w:val="VerbatimChar"\/><w:color w:val="0563C1"\/><w:u w:val="single"\/><\/w:rPr><w:t xml:space="preserve">run\(\)<\/w:t>/);
  });

  it('joins consecutive <dt>s into one term paragraph for their shared <dd>', async () => {
    const xml = await body('<dl><dt>Cello</dt><dt>Violoncello</dt><dd>Low strings.</dd><dt>Harp</dt><dd>Plucked.</dd></dl>');
    expect(xml).toContain('<w:pStyle w:val="DefinitionTerm"/></w:pPr><w:r><w:t xml:space="preserve">Cello</w:t></w:r><w:r><w:br/></w:r><w:r><w:t xml:space="preserve">Violoncello</w:t></w:r></w:p>');
    expect((xml.match(/DefinitionTerm/g) ?? []).length).toBe(2);
  });

  it('takes a first row of <th> as the header row only outside an explicit <tbody>', async () => {
    const headed = await body('<table><tr><th>X</th><th>Y</th></tr><tr><th>1</th><th>2</th></tr><tr><td>3</td><td>4</td></tr></table>');
    expect((headed.match(/<w:tblHeader\/>/g) ?? []).length).toBe(1);
    const explicitBody = await body('<table><tbody><tr><th>X</th><th>Y</th></tr><tr><td>1</td><td>2</td></tr></tbody></table>');
    expect(explicitBody).not.toContain('<w:tblHeader/>');
    // Written and implied bodies in one document, tags in any case, a table nested in a cell: each
    // <tbody> is told apart on its own (the parser tracks locations only for such documents).
    const mixed = await body(
      '<table><TBODY><tr><TH>A</TH></tr><tr><td>1</td></tr></table>' +
      '<table><tr><th>B</th></tr><tr><td><table><tbody><tr><th>C</th></tr><tr><td>2</td></tr></tbody></table></td></tr></table>' +
      '<table><tr><th>D</th></tr><tr><td>3</td></tr></table>',
    );
    expect((mixed.match(/<w:tblHeader\/>/g) ?? []).length).toBe(2);
  });
});
