import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpcPackage } from '../../../src/documents/ooxml/package.js';
import { protectLineSeparators, resolveInDocument, resolveTrackedChanges, type ResolveMode } from '../../../src/documents/ooxml/tracked-changes.js';
import { parseXml, serializeXml } from '../../../src/documents/ooxml/xml.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { changeCount, trackedDocx, trackedModel } from '../../support/tracked-docx.js';

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const A = 'w:id="1" w:author="A" w:date="2026-01-01T00:00:00Z"';
const run = (t: string) => `<w:r><w:t xml:space="preserve">${t}</w:t></w:r>`;
const delRun = (t: string) => `<w:r><w:delText xml:space="preserve">${t}</w:delText></w:r>`;

/** Resolves a body fragment; returns the resulting body XML without namespace noise. */
function resolveBody(inner: string, mode: ResolveMode): string {
  const doc = parseXml(`<w:document xmlns:w="${W}"><w:body>${inner}</w:body></w:document>`);
  resolveInDocument(doc, mode);
  return serializeXml(doc).replace(/^.*<w:body>|<\/w:body>.*$/gs, '');
}

/** Text per paragraph, as Word would show it (w:t only; deleted text is not text). */
function paragraphTexts(xml: string): string[] {
  const doc = parseXml(xml);
  return Array.from(doc.getElementsByTagNameNS(W, 'p')).map((p) => Array.from(p.getElementsByTagNameNS(W, 't')).map((t) => t.textContent).join(''));
}

describe('accept / reject per change kind', () => {
  it('run insertions and deletions (delText becomes text when a deletion is rejected)', () => {
    const body = `<w:p>${run('a ')}<w:ins ${A}>${run('new ')}</w:ins><w:del ${A}>${delRun('old ')}</w:del>${run('z')}</w:p>`;
    expect(resolveBody(body, 'accept')).toBe(`<w:p>${run('a ')}${run('new ')}${run('z')}</w:p>`);
    expect(resolveBody(body, 'reject')).toBe(`<w:p>${run('a ')}${run('old ')}${run('z')}</w:p>`);
  });

  it('moves and their range markers', () => {
    const body = `<w:p><w:moveFromRangeStart w:id="5" w:name="m"/><w:moveFrom ${A}>${delRun('moved ')}</w:moveFrom><w:moveFromRangeEnd w:id="5"/>${run('x')}</w:p>` +
      `<w:p>${run('y ')}<w:moveToRangeStart w:id="6" w:name="m"/><w:moveTo ${A}>${run('moved ')}</w:moveTo><w:moveToRangeEnd w:id="6"/></w:p>`;
    expect(resolveBody(body, 'accept')).toBe(`<w:p>${run('x')}</w:p><w:p>${run('y ')}${run('moved ')}</w:p>`);
    expect(resolveBody(body, 'reject')).toBe(`<w:p>${run('moved ')}${run('x')}</w:p><w:p>${run('y ')}</w:p>`);
  });

  it('inserted and deleted paragraph marks merge paragraphs; the next paragraph keeps its properties', () => {
    const body = `<w:p><w:pPr><w:jc w:val="left"/><w:rPr><w:del ${A}/></w:rPr></w:pPr>${run('one')}</w:p><w:p><w:pPr><w:jc w:val="right"/></w:pPr>${run('two')}</w:p>`;
    expect(resolveBody(body, 'accept')).toBe(`<w:p><w:pPr><w:jc w:val="right"/></w:pPr>${run('one')}${run('two')}</w:p>`);
    expect(resolveBody(body, 'reject')).toBe(`<w:p><w:pPr><w:jc w:val="left"/><w:rPr/></w:pPr>${run('one')}</w:p><w:p><w:pPr><w:jc w:val="right"/></w:pPr>${run('two')}</w:p>`);
    const inserted = body.replace('w:del', 'w:ins');
    expect(paragraphTexts(`<w:b xmlns:w="${W}">${resolveBody(inserted, 'reject')}</w:b>`)).toEqual(['onetwo']);
    expect(paragraphTexts(`<w:b xmlns:w="${W}">${resolveBody(inserted, 'accept')}</w:b>`)).toEqual(['one', 'two']);
  });

  it('a chain of deleted marks collapses into the paragraph that ends it; an emptied paragraph before a table goes', () => {
    const mark = `<w:pPr><w:rPr><w:del ${A}/></w:rPr></w:pPr>`;
    const body = `<w:p>${mark}${run('a')}</w:p><w:p>${mark}<w:del ${A}>${delRun('b')}</w:del></w:p><w:p>${run('c')}</w:p><w:p>${mark}<w:del ${A}>${delRun('gone')}</w:del></w:p><w:tbl><w:tr><w:tc><w:p>${run('cell')}</w:p></w:tc></w:tr></w:tbl>`;
    expect(paragraphTexts(`<w:b xmlns:w="${W}">${resolveBody(body, 'accept')}</w:b>`)).toEqual(['ac', 'cell']);
    expect(paragraphTexts(`<w:b xmlns:w="${W}">${resolveBody(body, 'reject')}</w:b>`)).toEqual(['a', 'b', 'c', 'gone', 'cell']);
  });

  it('inserted and deleted table rows; a table whose rows all go goes with them', () => {
    const row = (t: string, mark = '') => `<w:tr>${mark ? `<w:trPr>${mark}</w:trPr>` : ''}<w:tc><w:p>${run(t)}</w:p></w:tc></w:tr>`;
    const body = `<w:tbl>${row('keep')}${row('new', `<w:ins ${A}/>`)}${row('old', `<w:del ${A}/>`)}</w:tbl><w:tbl>${row('x', `<w:del ${A}/>`)}</w:tbl><w:p/>`;
    expect(paragraphTexts(`<w:b xmlns:w="${W}">${resolveBody(body, 'accept')}</w:b>`)).toEqual(['keep', 'new', '']);
    expect(paragraphTexts(`<w:b xmlns:w="${W}">${resolveBody(body, 'reject')}</w:b>`)).toEqual(['keep', 'old', 'x', '']);
    expect(resolveBody(body, 'accept')).not.toContain('<w:trPr><w:');
  });

  it('inserted and deleted cells (cellIns, cellDel), cellMerge dropped', () => {
    const cell = (t: string, mark = '') => `<w:tc><w:tcPr><w:tcW w:w="10"/>${mark}</w:tcPr><w:p>${run(t)}</w:p></w:tc>`;
    const body = `<w:tbl><w:tr>${cell('a')}${cell('b', `<w:cellIns ${A}/>`)}${cell('c', `<w:cellDel ${A}/>`)}${cell('d', `<w:cellMerge ${A} w:vMerge="cont"/>`)}</w:tr></w:tbl>`;
    expect(paragraphTexts(`<w:b xmlns:w="${W}">${resolveBody(body, 'accept')}</w:b>`)).toEqual(['a', 'b', 'd']);
    expect(paragraphTexts(`<w:b xmlns:w="${W}">${resolveBody(body, 'reject')}</w:b>`)).toEqual(['a', 'c', 'd']);
    expect(resolveBody(body, 'reject')).not.toMatch(/cell(Ins|Del|Merge)/);
  });

  it('property changes: accepting keeps the new properties, rejecting restores the old ones', () => {
    const rPr = `<w:p><w:r><w:rPr><w:b/><w:rPrChange ${A}><w:rPr><w:i/></w:rPr></w:rPrChange></w:rPr><w:t>x</w:t></w:r></w:p>`;
    expect(resolveBody(rPr, 'accept')).toBe('<w:p><w:r><w:rPr><w:b/></w:rPr><w:t>x</w:t></w:r></w:p>');
    expect(resolveBody(rPr, 'reject')).toBe('<w:p><w:r><w:rPr><w:i/></w:rPr><w:t>x</w:t></w:r></w:p>');

    const pPr = `<w:p><w:pPr><w:jc w:val="center"/><w:rPr><w:b/></w:rPr><w:pPrChange ${A}><w:pPr><w:ind w:left="720"/></w:pPr></w:pPrChange></w:pPr>${run('x')}</w:p>`;
    expect(resolveBody(pPr, 'accept')).toBe(`<w:p><w:pPr><w:jc w:val="center"/><w:rPr><w:b/></w:rPr></w:pPr>${run('x')}</w:p>`);
    expect(resolveBody(pPr, 'reject')).toBe(`<w:p><w:pPr><w:ind w:left="720"/><w:rPr><w:b/></w:rPr></w:pPr>${run('x')}</w:p>`);

    const sect = `<w:sectPr><w:headerReference w:type="default" r:id="rId1" xmlns:r="urn:r"/><w:pgSz w:w="100"/><w:sectPrChange ${A}><w:sectPr><w:pgSz w:w="200"/></w:sectPr></w:sectPrChange></w:sectPr>`;
    expect(resolveBody(sect, 'accept')).not.toContain('200');
    expect(resolveBody(sect, 'reject')).toMatch(/headerReference.*<w:pgSz w:w="200"\/><\/w:sectPr>$/);

    const table = `<w:tbl><w:tblPr><w:tblW w:w="1"/><w:tblPrChange ${A}><w:tblPr><w:tblW w:w="2"/></w:tblPr></w:tblPrChange></w:tblPr>` +
      `<w:tblGrid><w:gridCol w:w="1"/><w:tblGridChange w:id="9"><w:tblGrid><w:gridCol w:w="2"/></w:tblGrid></w:tblGridChange></w:tblGrid>` +
      `<w:tblPrEx><w:jc w:val="left"/><w:tblPrExChange ${A}><w:tblPrEx><w:jc w:val="right"/></w:tblPrEx></w:tblPrExChange></w:tblPrEx>` +
      `<w:tr><w:trPr><w:cantSplit/><w:trPrChange ${A}><w:trPr><w:tblHeader/></w:trPr></w:trPrChange></w:trPr>` +
      `<w:tc><w:tcPr><w:tcW w:w="1"/><w:tcPrChange ${A}><w:tcPr><w:tcW w:w="2"/></w:tcPr></w:tcPrChange></w:tcPr><w:p/></w:tc></w:tr></w:tbl>`;
    const accepted = resolveBody(table, 'accept');
    expect(accepted).not.toMatch(/Change|w:w="2"|right|tblHeader/);
    const rejected = resolveBody(table, 'reject');
    expect(rejected).not.toMatch(/Change|w:w="1"|left|cantSplit/);
    expect(rejected).toContain('<w:tblHeader/>');
  });

  it('numberingChange is dropped; w:trackRevisions is removed from the settings', () => {
    const body = `<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/><w:numberingChange ${A} w:original="%1."/></w:numPr></w:pPr></w:p>`;
    expect(resolveBody(body, 'accept')).toBe('<w:p><w:pPr><w:numPr><w:ilvl w:val="0"/><w:numId w:val="1"/></w:numPr></w:pPr></w:p>');
    const settings = parseXml(`<w:settings xmlns:w="${W}"><w:zoom w:percent="100"/><w:trackRevisions/></w:settings>`);
    resolveInDocument(settings, 'accept');
    expect(serializeXml(settings)).not.toContain('trackRevisions');
  });

  it('changes inside text boxes, math control properties and nested insert-then-delete', () => {
    const body = `<w:p><w:r><w:pict><v:shape xmlns:v="urn:schemas-microsoft-com:vml"><v:textbox><w:txbxContent><w:p><w:ins ${A}>${run('boxed')}</w:ins><w:del ${A}>${delRun('gone')}</w:del></w:p></w:txbxContent></v:textbox></v:shape></w:pict></w:r>` +
      `<w:ins ${A}>${run('kept ')}<w:del ${A}>${delRun('both')}</w:del></w:ins></w:p>`;
    const accepted = resolveBody(body, 'accept');
    expect(accepted).toContain(run('boxed'));
    expect(accepted).not.toMatch(/gone|both|w:ins|w:del/);
    const rejected = resolveBody(body, 'reject');
    expect(rejected).toContain(run('gone'));
    expect(rejected).not.toMatch(/boxed|kept|both/);
  });

  it('keeps U+0085 and U+2028 in text (xmldom alone turns them into line feeds)', () => {
    const pkg = OpcPackage.open(trackedDocx(trackedModel({ seed: 1, rtl: false, paragraphs: 2, changesPerParagraph: 1 }), 'tracked'));
    pkg.setText('/word/header1.xml', pkg.text('/word/header1.xml').replace('<w:t xml:space="preserve">', '<w:t xml:space="preserve">x\u0085y\u2028z '));
    resolveTrackedChanges(pkg, 'accept');
    expect(pkg.text('/word/header1.xml')).toMatch(/x(\u0085|&#x85;)y(\u2028|&#x2028;)z/);
    expect(paragraphTexts(protectLineSeparators(pkg.text('/word/header1.xml')))[0]).toContain('x\u0085y\u2028z');
  });
});

describe('generated documents: resolved = made accepted / rejected in advance', () => {
  const texts = (docx: Buffer, part: string) => paragraphTexts(OpcPackage.open(docx).text(part));
  it.each([false, true])('every part, rtl=%s, over seeds', (rtl) => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 2 ** 31 - 1 }), fc.integer({ min: 1, max: 12 }), fc.integer({ min: 0, max: 6 }), (seed, paragraphs, changesPerParagraph) => {
        const model = trackedModel({ seed, rtl, paragraphs, changesPerParagraph });
        for (const mode of ['accept', 'reject'] as const) {
          const pkg = OpcPackage.open(trackedDocx(model, 'tracked'));
          resolveTrackedChanges(pkg, mode);
          const resolved = pkg.write();
          const expected = trackedDocx(model, mode === 'accept' ? 'accepted' : 'rejected');
          for (const part of ['/word/document.xml', '/word/header1.xml', '/word/footnotes.xml']) expect(texts(resolved, part)).toEqual(texts(expected, part));
          expect(pkg.text('/word/document.xml')).not.toMatch(/<w:(ins|del|moveFrom|moveTo|delText)\b|Change\b/);
          expect(pkg.text('/word/settings.xml')).not.toContain('trackRevisions');
        }
      }),
      { numRuns: 60, seed: 1313 },
    );
  });

  it('a 700-change right-to-left document', () => {
    const model = trackedModel({ seed: 700, rtl: true, paragraphs: 64, changesPerParagraph: 11 });
    expect(changeCount(model)).toBeGreaterThanOrEqual(700);
    const pkg = OpcPackage.open(trackedDocx(model, 'tracked'));
    expect(resolveTrackedChanges(pkg, 'accept').changes).toBeGreaterThanOrEqual(700);
  });
});

describe('differential against pandoc (--track-changes), corpus and generated documents', () => {
  const plain = (docx: Buffer, mode: ResolveMode) =>
    execFileSync('pandoc', [`--track-changes=${mode}`, '-f', 'docx', '-t', 'plain', '--wrap=none'], { input: docx, stdio: ['pipe', 'pipe', 'ignore'] }).toString().replace(/\s+/gu, '');
  const corpus = readdirSync(`${CORPUS_DIR}/docx`).filter((f) => f.endsWith('.docx') && f !== 'mammoth-strict-format.docx'); // pandoc cannot read Strict OOXML
  const generated = [false, true].map((rtl) => [`generated rtl=${rtl}`, trackedDocx(trackedModel({ seed: 42, rtl, paragraphs: 20, changesPerParagraph: 5 }), 'tracked')] as const);
  const cases = [...corpus.map((f) => [f, readFileSync(`${CORPUS_DIR}/docx/${f}`)] as const), ...generated];
  it.each(cases)('%s', (_name, docx) => {
    for (const mode of ['accept', 'reject'] as const) {
      const pkg = OpcPackage.open(docx);
      resolveTrackedChanges(pkg, mode);
      // Whitespace aside: pandoc joins the halves of a merged paragraph with a space, Word does not.
      expect(plain(pkg.write(), 'accept')).toBe(plain(docx, mode));
    }
  });
});
