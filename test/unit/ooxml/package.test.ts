import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import PizZip from 'pizzip';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../../src/errors/domain-error.js';
import { writeZip } from '../../../src/documents/ooxml/zip/write.js';
import { CONTENT_TYPE, NS, REL } from '../../../src/documents/ooxml/constants.js';
import { OpcPackage, freeRelationshipId } from '../../../src/documents/ooxml/package.js';
import { partUri, relationshipsPartOf, relativeTarget, resolvePartName, sourceOfRelationshipsPart } from '../../../src/documents/ooxml/part-names.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { decodeXmlBytes, descendants, parseXml, parseXmlPart, XmlSyntaxError } from '../../../src/documents/ooxml/xml.js';
import { escapeXml, stripInvalidXmlChars } from '../../../src/documents/ooxml/xml-text.js';
import { answering } from '../../support/domain-error.js';

const CONTENT_TYPES =
  `<?xml version="1.0" encoding="UTF-8"?><Types xmlns="${NS.contentTypes}">` +
  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
  '<Default Extension="XML" ContentType="application/xml"/>' +
  '<Default Extension="png" ContentType="image/png"/>' +
  '<Override PartName="/Word/Document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/>' +
  '</Types>';
const PACKAGE_RELS =
  `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${NS.relationships}">` +
  `<Relationship Id="rId1" Type="${REL.officeDocument}" Target="word/document.xml"/>` +
  '</Relationships>';
const DOCUMENT_RELS =
  `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="${NS.relationships}">` +
  `<Relationship Id="rId1" Type="${REL.image}" Target="media/image%201.png"/>` +
  `<Relationship Id="rId2" Type="${REL.hyperlink}" Target="https://example.com/a?b" TargetMode="External"/>` +
  `<Relationship Id="rId3" Type="${REL.image}" Target="../media/shared.png" TargetMode="Internal"/>` +
  '</Relationships>';

function docx(parts: Record<string, string | Uint8Array>): Buffer {
  return writeZip(Object.entries(parts).map(([name, data]) => ({ name, data: Buffer.from(data) })));
}

const sample = (extra: Record<string, string | Uint8Array> = {}) =>
  docx({
    '[Content_Types].xml': CONTENT_TYPES,
    '_rels/.rels': PACKAGE_RELS,
    'word/document.xml': '<w:document xmlns:w="urn:w"/>',
    'word/_rels/document.xml.rels': DOCUMENT_RELS,
    'word/media/image 1.png': new Uint8Array([0x89, 0x50]),
    ...extra,
  });

/** The DomainError `fn` throws, checked for status, code and (optionally) message. */
const expectDomainError = (fn: () => unknown, status: number, code: string, message: RegExp = /./) =>
  expect(fn).toThrow(answering(status, code, { message: expect.stringMatching(message) }));

describe('OpcPackage: part names', () => {
  it('lists absolute part names in ZIP order without [Content_Types].xml', () => {
    const pkg = OpcPackage.open(sample());
    expect(pkg.partNames()).toEqual(['/_rels/.rels', '/word/document.xml', '/word/_rels/document.xml.rels', '/word/media/image 1.png']);
  });

  it('finds parts by their exact name, percent-escapes decoded (as a URI or relationship target names them)', () => {
    const pkg = OpcPackage.open(sample());
    expect(pkg.has('/WORD/document.XML')).toBe(false);
    expect(pkg.has('word/document.xml')).toBe(true);
    expect(pkg.has('/word/media/image%201.png')).toBe(true);
    expect(pkg.has('/word/MEDIA/image%201.png')).toBe(false);
    expect(Array.from(pkg.bytes('/word/media/image 1.png')!)).toEqual([0x89, 0x50]);
    expect(pkg.has('/word/missing.xml')).toBe(false);
    expect(pkg.bytes('/word/missing.xml')).toBeUndefined();
  });

  it('refuses what is not a DOCX through the ZIP guard, and names a missing part', () => {
    expectDomainError(() => OpcPackage.open(Buffer.from('not a zip at all, not even close')), 400, 'INVALID_FILE_FORMAT');
    expectDomainError(() => OpcPackage.open(docx({ '[Content_Types].xml': CONTENT_TYPES })), 400, 'INVALID_FILE_FORMAT', /word\/document\.xml/);
    expectDomainError(() => OpcPackage.open(sample()).text('/docProps/core.xml'), 400, 'INVALID_FILE_FORMAT', /no docProps\/core\.xml part/);
  });
});

describe('OpcPackage: content types', () => {
  it('uses the Override first, then the Default for the extension, both case-insensitively', () => {
    const pkg = OpcPackage.open(sample());
    expect(pkg.contentType('/word/document.xml')).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml');
    expect(pkg.contentType('/word/styles.xml')).toBe('application/xml');
    expect(pkg.contentType('/word/media/image 1.PNG')).toBe('image/png');
    expect(pkg.contentType('/word/_rels/document.xml.rels')).toBe(CONTENT_TYPE.relationships);
    expect(pkg.contentType('/word/media/clip.emf')).toBeUndefined();
  });

  it('adds Defaults for new extensions only, and adds or replaces Overrides', () => {
    const pkg = OpcPackage.open(sample());
    pkg.declareContentTypes({ PNG: 'image/other', sigs: CONTENT_TYPE.signatureOrigin }, {
      '/word/document.xml': 'application/x-replaced',
      '/docproc/a.json': 'application/json',
    });
    expect(pkg.contentType('/word/media/image 1.png')).toBe('image/png');
    expect(pkg.contentType('/_xmlsignatures/origin.sigs')).toBe(CONTENT_TYPE.signatureOrigin);
    expect(pkg.contentType('/word/document.xml')).toBe('application/x-replaced');
    expect(pkg.contentType('/docproc/A.json')).toBe('application/json');
    const types = pkg.text('/[Content_Types].xml');
    expect(types.match(/<Override /g)).toHaveLength(2);
    expect(types).toContain('<Override PartName="/docproc/a.json" ContentType="application/json"/>');
    expect(types).toContain('<Default Extension="sigs" ContentType="application/vnd.openxmlformats-package.digital-signature-origin"/>');
  });

  it('refuses an unreadable [Content_Types].xml with 422, or reads it as empty when tolerant', () => {
    const broken = sample({ '[Content_Types].xml': '<Types xmlns="x"><Default' });
    expectDomainError(() => OpcPackage.open(broken).contentType('/word/document.xml'), 422, 'UNPROCESSABLE_DOCUMENT', /\[Content_Types\]\.xml is not well-formed/);
    expect(OpcPackage.open(broken, { tolerant: true }).contentType('/word/document.xml')).toBeUndefined();
  });
});

describe('OpcPackage: relationships', () => {
  it('parses Id, Type, Target as written, TargetMode, and resolves internal targets to part names', () => {
    const pkg = OpcPackage.open(sample());
    expect(pkg.relationships('/')).toEqual([{ id: 'rId1', type: REL.officeDocument, target: 'word/document.xml', external: false, partName: '/word/document.xml' }]);
    expect(pkg.relationships('/word/document.xml')).toEqual([
      { id: 'rId1', type: REL.image, target: 'media/image%201.png', external: false, partName: '/word/media/image 1.png' },
      { id: 'rId2', type: REL.hyperlink, target: 'https://example.com/a?b', targetMode: 'External', external: true },
      { id: 'rId3', type: REL.image, target: '../media/shared.png', targetMode: 'Internal', external: false, partName: '/media/shared.png' },
    ]);
    // Found by exact name only, as LibreOffice finds them.
    expect(pkg.relationships('/Word/Document.xml')).toEqual([]);
    expect(pkg.relationships('/word/media/image 1.png')).toEqual([]);
  });

  it('adds relationships to an existing .rels part and creates a missing one', () => {
    const pkg = OpcPackage.open(sample());
    pkg.addRelationship('/', { id: freeRelationshipId(pkg.relationships('/'), 'rId'), type: REL.signatureOrigin, target: '_xmlsignatures/origin.sigs' });
    pkg.addRelationship('/_xmlsignatures/origin.sigs', { id: 'rId1', type: REL.signature, target: 'sig1.xml' });
    pkg.addRelationship('/word/document.xml', { id: 'rId9', type: REL.hyperlink, target: 'mailto:a@b.c', targetMode: 'External' });
    expect(pkg.relationships('/').map((r) => [r.id, r.partName])).toEqual([['rId1', '/word/document.xml'], ['rId2', '/_xmlsignatures/origin.sigs']]);
    expect(pkg.relationships('/_xmlsignatures/origin.sigs')).toEqual([
      { id: 'rId1', type: REL.signature, target: 'sig1.xml', external: false, partName: '/_xmlsignatures/sig1.xml' },
    ]);
    expect(pkg.text('/_xmlsignatures/_rels/origin.sigs.rels')).toMatch(/^<\?xml version="1.0" encoding="UTF-8" standalone="yes"\?>\n<Relationships xmlns="http:\/\/schemas.openxmlformats.org\/package\/2006\/relationships"><Relationship Id="rId1"/);
    expect(pkg.relationships('/word/document.xml').at(-1)).toMatchObject({ id: 'rId9', external: true, targetMode: 'External' });
  });

  it('refuses an unreadable .rels part with 422, or reads it as having no relationships when tolerant', () => {
    const broken = sample({ 'word/_rels/document.xml.rels': '<Relationships><Relationship Id="a"></Relationships>' });
    expectDomainError(() => OpcPackage.open(broken).relationships('/word/document.xml'), 422, 'UNPROCESSABLE_DOCUMENT', /word\/_rels\/document\.xml\.rels/);
    expect(OpcPackage.open(broken, { tolerant: true }).relationships('/word/document.xml')).toEqual([]);
  });

  it('maps sources to .rels part names and back', () => {
    expect(relationshipsPartOf('/')).toBe('/_rels/.rels');
    expect(relationshipsPartOf('/word/document.xml')).toBe('/word/_rels/document.xml.rels');
    expect(sourceOfRelationshipsPart('/_rels/.rels')).toBe('/');
    expect(sourceOfRelationshipsPart('/word/_rels/document.xml.rels')).toBe('/word/document.xml');
    expect(sourceOfRelationshipsPart('/word/document.xml')).toBeUndefined();
    expect(sourceOfRelationshipsPart('/word/not_rels/x.rels')).toBeUndefined();
    expect(resolvePartName('/word/document.xml', '/customXml/item1.xml')).toBe('/customXml/item1.xml');
    expect(relativeTarget('/', '/_xmlsignatures/origin.sigs')).toBe('_xmlsignatures/origin.sigs');
    expect(relativeTarget('/_xmlsignatures/origin.sigs', '/_xmlsignatures/sig2.xml')).toBe('sig2.xml');
    expect(relativeTarget('/word/document.xml', '/docproc/a.json')).toBe('/docproc/a.json');
    expect(partUri('/word/media/image 1.png')).toBe('/word/media/image%201.png');
    expect(partUri('/word/Ünïcode.xml')).toBe('/word/%C3%9Cn%C3%AFcode.xml');
    expect(partUri('/word/100%.xml')).toBe('/word/100%25.xml');
  });
});

describe('OpcPackage: writing', () => {
  it('replaces parts in place, appends new ones, and writes [Content_Types].xml first', () => {
    const input = docx({
      'word/document.xml': '<w:document xmlns:w="urn:w"/>',
      '[Content_Types].xml': CONTENT_TYPES,
      '_rels/.rels': PACKAGE_RELS,
    });
    const pkg = OpcPackage.open(input);
    pkg.setText('/word/document.xml', '<w:document xmlns:w="urn:w"><w:body/></w:document>');
    expect(() => pkg.setText('/WORD/document.xml', '<x/>')).toThrow(/second name for the part \/word\/document\.xml/);
    pkg.setBytes('/docproc/audit.json', new Uint8Array(Buffer.from('{}')));
    const out = new PizZip(pkg.write());
    expect(Object.keys(out.files)).toEqual(['[Content_Types].xml', 'word/document.xml', '_rels/.rels', 'docproc/audit.json']);
    expect(out.file('word/document.xml')!.asText()).toBe('<w:document xmlns:w="urn:w"><w:body/></w:document>');
    expect(out.file('docproc/audit.json')!.asText()).toBe('{}');
    expect(OpcPackage.open(pkg.write()).partNames()).toEqual(['/word/document.xml', '/_rels/.rels', '/docproc/audit.json']);
  });
});

describe('OpcPackage: reading and copying parts as stored', () => {
  const corpusDocx = readdirSync(path.join(CORPUS_DIR, 'docx')).filter((f) => f.endsWith('.docx')).map((f) => path.join(CORPUS_DIR, 'docx', f));

  it('reads every part of every corpus DOCX exactly as pizzip does, and writes a package Info-ZIP tests clean with the same bytes', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'docproc-opc-'));
    try {
      for (const file of corpusDocx) {
        const input = readFileSync(file);
        let pkg: OpcPackage;
        try {
          pkg = OpcPackage.open(input, { tolerant: true });
        } catch (err) {
          expect(err, file).toBeInstanceOf(DomainError); // a damaged corpus file is refused, never half-read
          continue;
        }
        const reference = new PizZip(input);
        const names = Object.values(reference.files).filter((f) => !f.dir).map((f) => f.name);
        expect(pkg.partNames().length + (pkg.has('/[Content_Types].xml') ? 1 : 0), file).toBe(names.length);
        for (const name of names) expect(Buffer.from(pkg.bytes('/' + name)!).equals(Buffer.from(reference.file(name)!.asUint8Array())), `${file} ${name}`).toBe(true);

        pkg.setText('/word/document.xml', pkg.text('/word/document.xml'));
        const out = path.join(dir, 'out.docx');
        writeFileSync(out, pkg.write());
        expect(execFileSync('unzip', ['-tqq', out], { encoding: 'utf8' }), file).toBe('');
        const rewritten = new PizZip(readFileSync(out));
        for (const name of names) expect(Buffer.from(rewritten.file(name)!.asUint8Array()).equals(Buffer.from(pkg.bytes('/' + name)!)), `${file} ${name}`).toBe(true);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a part whose CRC does not match its bytes, as Info-ZIP does', () => {
    const input = Buffer.from(sample({ 'word/media/image1.png': new Uint8Array([1, 2, 3, 4, 5]) }));
    const name = Buffer.from('word/media/image1.png');
    for (let at = input.indexOf(name); at >= 0; at = input.indexOf(name, at + 1)) {
      const header = input.readUInt32LE(at - 30) === 0x04034b50 ? at - 30 + 14 : input.readUInt32LE(at - 46) === 0x02014b50 ? at - 46 + 16 : -1;
      if (header >= 0) input.writeUInt32LE(0xdeadbeef, header);
    }
    const dir = mkdtempSync(path.join(os.tmpdir(), 'docproc-opc-'));
    try {
      writeFileSync(path.join(dir, 'in.docx'), input);
      expect(() => execFileSync('unzip', ['-tqq', path.join(dir, 'in.docx')], { stdio: 'pipe' })).toThrow();
      expectDomainError(() => OpcPackage.open(input), 400, 'INVALID_FILE_FORMAT', /CRC of "word\/media\/image1\.png"/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('ooxml xml', () => {
  it('parses UTF-8 with a BOM and UTF-16 LE/BE with their byte-order marks', () => {
    const xml = '<a xmlns="urn:x"><b>é</b></a>';
    const utf8 = new Uint8Array([0xef, 0xbb, 0xbf, ...Buffer.from(xml, 'utf8')]);
    const le = new Uint8Array([0xff, 0xfe, ...Buffer.from(xml, 'utf16le')]);
    const be = new Uint8Array([0xfe, 0xff, ...Buffer.from(xml, 'utf16le').swap16()]);
    for (const bytes of [utf8, le, be]) {
      expect(descendants(parseXmlPart(bytes, '/p.xml'), 'urn:x', 'b')[0]!.textContent).toBe('é');
    }
    expect(decodeXmlBytes(le)).toBe(xml);
  });

  it('throws XmlSyntaxError from parseXml and the 422 DomainError naming the part from parseXmlPart', () => {
    expect(() => parseXml('<a><b></a>')).toThrow(XmlSyntaxError);
    expectDomainError(() => parseXmlPart('<a><b></a>', '/word/document.xml'), 422, 'UNPROCESSABLE_DOCUMENT', /^The DOCX part word\/document\.xml is not well-formed XML/);
  });
});

describe('escapeXml (the one escaper)', () => {
  it('property: any text survives as element content and as an attribute value, minus what XML cannot hold', () => {
    fc.assert(
      fc.property(fc.string({ unit: fc.constantFrom('a', '&', '<', '>', '"', "'", '\t', '\n', '\r', '\u0001', '\uFFFE', '\uD800', '\uDC00', '😀', 'é', ' ') , maxLength: 40 }), (text) => {
        const doc = parseXml(`<a b="${escapeXml(text)}" c='${escapeXml(text)}'>${escapeXml(text)}</a>`);
        const root = doc.documentElement!;
        const kept = stripInvalidXmlChars(text);
        expect(root.getAttribute('b')).toBe(kept);
        expect(root.getAttribute('c')).toBe(kept);
        expect(root.textContent).toBe(kept);
      }),
      { seed: 23, numRuns: 500 },
    );
    expect(stripInvalidXmlChars('a\u0000b\uD83D\uDE00c\uDE00')).toBe('ab\uD83D\uDE00c');
  });
});
