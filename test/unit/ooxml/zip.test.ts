import { readFileSync } from 'node:fs';
import path from 'node:path';
import { deflateRawSync } from 'node:zlib';
import PizZip from 'pizzip';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../../src/errors/domain-error.js';
import { OpcPackage } from '../../../src/documents/ooxml/package.js';
import { equivalenceKey } from '../../../src/documents/ooxml/part-names.js';
import { readZip } from '../../../src/documents/ooxml/zip/read.js';
import { writeZip } from '../../../src/documents/ooxml/zip/write.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { rawZip, type RawEntry } from '../../support/ooxml/raw-zip.js';
import { toHttpFailure } from '../../../src/http/error-status.js';

const corpusDocx = (name: string) => readFileSync(path.join(CORPUS_DIR, 'docx', name));

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof DomainError ? `${toHttpFailure(err).status} ${toHttpFailure(err).code}` : `not an DomainError: ${String(err)}`;
  }
  return undefined;
}

const messageOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  return '(accepted)';
};

const CONTENT_TYPES = '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>';
const docxEntries = (...extra: RawEntry[]): RawEntry[] => [
  { name: '[Content_Types].xml', data: CONTENT_TYPES },
  { name: 'word/document.xml', data: '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"/>' },
  ...extra,
];
const open = (zip: Buffer) => OpcPackage.open(zip);

describe('the ZIP guard: what is and is not a DOCX', () => {
  it('accepts real DOCX files, including Strict OOXML, BOM-prefixed parts and data descriptors', () => {
    for (const f of ['pandoc-tables.docx', 'mammoth-strict-format.docx', 'mammoth-utf8-bom.docx', 'superdoc-gdocs-comments-and-tracked-changes-2-authors.docx']) {
      expect(OpcPackage.open(corpusDocx(f)).has('/word/document.xml'), f).toBe(true);
    }
  });

  it('tells apart not-a-zip, a zip without a document, legacy .doc and encrypted files', () => {
    expect(codeOf(() => open(Buffer.from('%PDF-1.7 hello')))).toBe('400 INVALID_FILE_FORMAT');
    const zip = new PizZip();
    zip.file('hello.txt', 'hi');
    expect(codeOf(() => open(zip.generate({ type: 'nodebuffer' })))).toBe('400 INVALID_FILE_FORMAT');
    const ole = Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(512)]);
    expect(codeOf(() => open(ole))).toBe('400 INVALID_FILE_FORMAT');
    const encrypted = Buffer.concat([ole, Buffer.from('EncryptionInfo', 'utf16le')]);
    expect(codeOf(() => open(encrypted))).toBe('422 ENCRYPTED_DOCUMENT');
    const truncated = corpusDocx('pandoc-tables.docx').subarray(0, 5000);
    expect(codeOf(() => open(truncated))).toBe('400 INVALID_FILE_FORMAT');
    expect(codeOf(() => open(rawZip(docxEntries({ name: 'secret.xml', data: 'x', local: { flags: 1 }, central: { flags: 1 } }))))).toBe('422 ENCRYPTED_DOCUMENT');
  });

  it('refuses an entry whose real size differs from the size its central directory declares (found by test/fuzz, seed 7)', () => {
    const docx = Buffer.from(corpusDocx('pandoc-tables.docx'));
    const name = Buffer.from('word/document.xml');
    for (let at = docx.indexOf(name); at >= 0; at = docx.indexOf(name, at + 1)) {
      if (docx.readUInt32LE(at - 46) !== 0x02014b50) continue;
      docx.writeUInt32LE(docx.readUInt32LE(at - 46 + 24) + 7, at - 46 + 24);
    }
    expect(codeOf(() => open(docx))).toBe('400 INVALID_FILE_FORMAT');
  });
});

describe('the ZIP guard: limits are checked before anything is inflated', () => {
  it('refuses zip bombs that declare their size, and stops one that lies at its declared size + 1 byte', () => {
    const bomb = new PizZip();
    bomb.file('[Content_Types].xml', '<Types/>');
    bomb.file('word/document.xml', Buffer.alloc(30 * 1024 * 1024, 0x20));
    const buf = bomb.generate({ type: 'nodebuffer', compression: 'DEFLATE' });
    expect(buf.length).toBeLessThan(100_000);
    expect(codeOf(() => readZip(buf, { maxEntries: 100, maxTotalUncompressedBytes: 10 * 1024 * 1024, maxCompressionRatio: 1000 }))).toBe('422 INVALID_FILE_FORMAT');
    expect(codeOf(() => open(buf))).toBe('422 INVALID_FILE_FORMAT');
    // The same data declared as 1 KB: inflation stops after 1025 bytes (one buffer of that size).
    const liar = rawZip(docxEntries({ name: 'word/media/a.bin', data: Buffer.alloc(30 * 1024 * 1024), central: { uncompressedSize: 1024 }, local: { uncompressedSize: 1024 } }));
    expect(messageOf(() => open(liar))).toMatch(/inflates to more than the size its header says/);
    const many = new PizZip();
    for (let i = 0; i < 50; i++) many.file(`f${i}.txt`, 'x');
    expect(codeOf(() => readZip(many.generate({ type: 'nodebuffer' }), { maxEntries: 10, maxTotalUncompressedBytes: 1e9, maxCompressionRatio: 1e9 }))).toBe('422 INVALID_FILE_FORMAT');
  });
});

describe('the ZIP guard: names every reader reads alike', () => {
  const cases: [string, RawEntry[]][] = [
    ['a duplicate', docxEntries({ name: 'word/document.xml', data: 'forged' })],
    ['a name differing in case', docxEntries({ name: 'word/Document.xml', data: 'forged' })],
    ['a percent-encoded spelling', docxEntries({ name: 'word/document%2Exml', data: 'forged' })],
    ['an SVG differing in case', docxEntries({ name: 'word/media/s.svg', data: '<svg/>' }, { name: 'word/media/S.svg', data: '<svg/>' })],
    ['an SVG spelled with %2E', docxEntries({ name: 'word/media/s.svg', data: '<svg/>' }, { name: 'word/media/s%2Esvg', data: '<svg/>' })],
    ['composed and decomposed Unicode', docxEntries({ name: 'word/media/\u00e9.png', data: 'a' }, { name: 'word/media/e\u0301.png', data: 'b' })],
    ['a fullwidth compatibility form', docxEntries({ name: 'word/media/a.png', data: 'a' }, { name: 'word/media/\uff41.png', data: 'b' })],
    ['a part that is also a folder', docxEntries({ name: 'word/media', data: 'a' }, { name: 'word/media/a.png', data: 'b' })],
    ['a folder entry named like a part', docxEntries({ name: 'word/document.xml/', data: '' })],
  ];
  it.each(cases)('refuses %s with 400 naming both parts', (_, entries) => {
    const zip = rawZip(entries);
    expect(codeOf(() => open(zip))).toBe('400 INVALID_FILE_FORMAT');
    expect(messageOf(() => open(zip))).toMatch(/^The package is invalid: (it holds the part ".*" twice|the part names ".*" and ".*" are equivalent|".*" and ".*" name a part and a folder)/);
  });

  it.each([
    ['an absolute name', '/word/x.xml'],
    ['a backslash', 'word\\x.xml'],
    ['a dot-dot segment', 'word/../x.xml'],
    ['an empty segment', 'word//x.xml'],
    ['a control character', 'word/x\u0001.xml'],
    ['an escaped slash', 'word%2Fx.xml'],
  ])('refuses %s', (_, name) => {
    expect(codeOf(() => open(rawZip(docxEntries({ name, data: 'x' }))))).toBe('400 INVALID_FILE_FORMAT');
  });

  it('refuses a non-ASCII name without the UTF-8 flag, or one that is not UTF-8 with it', () => {
    expect(messageOf(() => open(rawZip(docxEntries({ name: 'word/media/\u00e9.png', data: 'x', utf8: false }))))).toMatch(/non-ASCII name without the UTF-8 flag/);
    const latin1 = { name: Buffer.from('word/media/\u00e9.png', 'latin1') };
    expect(messageOf(() => open(rawZip(docxEntries({ name: 'word/media/x.png', data: 'x', utf8: true, local: latin1, central: latin1 }))))).toMatch(/not UTF-8/);
    expect(open(rawZip(docxEntries({ name: 'word/media/\u00e9.png', data: 'x' }))).has('/word/media/\u00e9.png')).toBe(true);
  });

  it('the equivalence key folds case, escapes and Unicode forms, and nothing else', () => {
    expect(equivalenceKey('Word/Document.XML')).toBe(equivalenceKey('word/document%2exml'));
    expect(equivalenceKey('word/stra\u00dfe.xml')).toBe(equivalenceKey('word/STRASSE.xml'));
    expect(equivalenceKey('word/a.xml')).not.toBe(equivalenceKey('word/b.xml'));
  });

  it('the writer refuses to write what the reader would refuse', () => {
    expect(() => writeZip([{ name: 'a.xml', data: Buffer.from('1') }, { name: 'A.xml', data: Buffer.from('2') }])).toThrow(/equivalent/);
    expect(() => writeZip([{ name: '../a.xml', data: Buffer.from('1') }])).toThrow(/segment/);
  });
});

describe('the ZIP guard: local and central headers agree', () => {
  const valid = docxEntries({ name: 'word/media/a.bin', data: 'payload bytes' });
  const withEntry = (patch: Partial<RawEntry>, options = {}) => rawZip([...docxEntries(), { name: 'word/media/a.bin', data: 'payload bytes', ...patch }], options);

  it('accepts the plain archive, data descriptors with and without signature, and ZIP64 fields and end records', () => {
    expect(open(rawZip(valid)).partNames()).toContain('/word/media/a.bin');
    for (const patch of [{ descriptor: 'signed' }, { descriptor: 'unsigned' }, { zip64: true }, { zip64: true, descriptor: 'signed' }, { method: 0 }] as Partial<RawEntry>[]) {
      const pkg = open(withEntry(patch, { zip64End: true }));
      expect(Buffer.from(pkg.bytes('/word/media/a.bin')!).toString(), JSON.stringify(patch)).toBe('payload bytes');
    }
  });

  it.each([
    ['name', { local: { name: Buffer.from('word/media/b.bin') } }, /names of .* differ/],
    ['flags', { local: { flags: 0x0002 } }, /flags of .* differ/],
    ['method', { local: { method: 0 } }, /compression methods of .* differ/],
    ['CRC', { local: { crc: 1 } }, /sizes or CRC of .* differ/],
    ['compressed size', { central: { compressedSize: 3 } }, /./],
    ['uncompressed size', { local: { uncompressedSize: 3 } }, /sizes or CRC of .* differ/],
    ['CRC of the data', { local: { crc: 7 }, central: { crc: 7 } }, /CRC of .* does not match its data/],
    ['data descriptor', { descriptor: 'signed', local: { crc: 5 } }, /data descriptor .* does not match/],
  ] as [string, Partial<RawEntry>, RegExp][])('refuses a different %s', (_, patch, message) => {
    const zip = withEntry(patch);
    expect(codeOf(() => open(zip))).toBe('400 INVALID_FILE_FORMAT');
    expect(messageOf(() => open(zip))).toMatch(message);
  });

  it.each([
    ['bytes before the first entry', rawZip(valid, { prefix: Buffer.from('MZ-self-extractor') })],
    ['a gap between entries', rawZip([{ ...valid[0]!, gapAfter: Buffer.alloc(10) }, ...valid.slice(1)])],
    ['bytes before the central directory', rawZip(valid, { beforeDirectory: Buffer.alloc(4) })],
    ['bytes after the end record', rawZip(valid, { trailer: Buffer.from('tail') })],
    ['an end record inside the comment', rawZip(valid, { comment: Buffer.concat([Buffer.from([0x50, 0x4b, 0x05, 0x06]), Buffer.alloc(18)]) })],
    ['trailing bytes inside a deflated entry', withEntry({ method: 0, local: { method: 8 }, central: { method: 8 } })],
  ])('refuses %s', (_, zip) => {
    expect(codeOf(() => open(zip))).toBe('400 INVALID_FILE_FORMAT');
  });

  it('refuses an entry whose stored bytes hold more than its deflate stream', () => {
    const stream = Buffer.concat([deflateRawSync(Buffer.from('payload bytes')), Buffer.from('hidden')]);
    const zip = withEntry({ method: 0, data: stream, local: { method: 8, uncompressedSize: 13 }, central: { method: 8, uncompressedSize: 13 } });
    expect(messageOf(() => open(zip))).toMatch(/after the compressed data|CRC/);
  });

  it('refuses overlapping entries (the overlap kind of zip bomb)', () => {
    const zip = rawZip(valid);
    // Point the last central entry at the previous entry's local header.
    const centralStart = zip.readUInt32LE(zip.length - 22 + 16);
    let at = centralStart;
    const offsets: number[] = [];
    for (let i = 0; i < 3; i++) {
      offsets.push(at);
      at += 46 + zip.readUInt16LE(at + 28) + zip.readUInt16LE(at + 30) + zip.readUInt16LE(at + 32);
    }
    zip.writeUInt32LE(zip.readUInt32LE(offsets[1]! + 42), offsets[2]! + 42);
    expect(codeOf(() => open(zip))).toBe('400 INVALID_FILE_FORMAT');
  });
});

describe('the inflate budget of a worker thread', () => {
  it('is a quarter of the thread heap ceiling, 200 MB at most, and 200 MB where no ceiling is set', async () => {
    const { inflateBudgetBytes } = await import('../../../src/documents/ooxml/zip/read.js');
    expect(inflateBudgetBytes(192)).toBe(48 * 1024 * 1024);
    expect(inflateBudgetBytes(256)).toBe(64 * 1024 * 1024);
    expect(inflateBudgetBytes(4096)).toBe(200 * 1024 * 1024);
    expect(inflateBudgetBytes(undefined)).toBe(200 * 1024 * 1024);
  });
});
