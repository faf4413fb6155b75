import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import PizZip from 'pizzip';
import { assertDocx, inspectZip } from '../../../src/inputs/zip.js';
import { AppError } from '../../../src/errors/app-error.js';

const corpus = (p: string) => readFileSync(new URL(`../../../../shared/corpus/${p}`, import.meta.url));

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof AppError ? `${err.status} ${err.code}` : 'not an AppError';
  }
  return undefined;
}

describe('DOCX and zip guards', () => {
  it('accepts real DOCX files, including Strict OOXML and BOM-prefixed parts', () => {
    for (const f of ['docx/pandoc-tables.docx', 'docx/mammoth-strict-format.docx', 'docx/mammoth-utf8-bom.docx']) {
      expect(assertDocx(corpus(f)).some((e) => e.name === 'word/document.xml')).toBe(true);
    }
  });

  it('tells apart not-a-zip, a zip without a document, legacy .doc and encrypted files', () => {
    expect(codeOf(() => assertDocx(Buffer.from('%PDF-1.7 hello')))).toBe('400 INVALID_FILE_FORMAT');
    const zip = new PizZip();
    zip.file('hello.txt', 'hi');
    expect(codeOf(() => assertDocx(zip.generate({ type: 'nodebuffer' })))).toBe('400 INVALID_FILE_FORMAT');
    const ole = Buffer.concat([Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]), Buffer.alloc(512)]);
    expect(codeOf(() => assertDocx(ole))).toBe('400 INVALID_FILE_FORMAT');
    const encrypted = Buffer.concat([ole, Buffer.from('EncryptionInfo', 'utf16le')]);
    expect(codeOf(() => assertDocx(encrypted))).toBe('422 ENCRYPTED_DOCUMENT');
    const truncated = corpus('docx/pandoc-tables.docx').subarray(0, 5000);
    expect(codeOf(() => assertDocx(truncated))).toMatch(/^400 INVALID_FILE_FORMAT/);
  });

  it('refuses an entry whose real size differs from the size its central directory declares (found by test/fuzz, seed 7)', () => {
    const docx = Buffer.from(corpus('docx/pandoc-tables.docx'));
    // Central directory entry of word/document.xml: change its declared uncompressed size.
    const name = Buffer.from('word/document.xml');
    for (let at = docx.indexOf(name); at >= 0; at = docx.indexOf(name, at + 1)) {
      if (docx.readUInt32LE(at - 46) !== 0x02014b50) continue;
      docx.writeUInt32LE(docx.readUInt32LE(at - 46 + 24) + 7, at - 46 + 24);
    }
    expect(codeOf(() => assertDocx(docx))).toBe('400 INVALID_FILE_FORMAT');
  });

  it('refuses zip bombs by really inflating with a cap', () => {
    const bomb = new PizZip();
    bomb.file('[Content_Types].xml', '<Types/>');
    bomb.file('word/document.xml', Buffer.alloc(30 * 1024 * 1024, 0x20));
    const buf = bomb.generate({ type: 'nodebuffer', compression: 'DEFLATE' });
    expect(buf.length).toBeLessThan(100_000);
    expect(codeOf(() => assertDocx(buf, { maxEntries: 100, maxTotalUncompressedBytes: 10 * 1024 * 1024, maxCompressionRatio: 100 }))).toBe('422 INVALID_FILE_FORMAT');
    expect(codeOf(() => assertDocx(buf))).toBe('422 INVALID_FILE_FORMAT');
    const many = new PizZip();
    for (let i = 0; i < 50; i++) many.file(`f${i}.txt`, 'x');
    expect(codeOf(() => inspectZip(many.generate({ type: 'nodebuffer' }), { maxEntries: 10, maxTotalUncompressedBytes: 1e9, maxCompressionRatio: 1e9 }))).toBe('422 INVALID_FILE_FORMAT');
  });
});
