import { readFileSync } from 'node:fs';
import path from 'node:path';
import PizZip from 'pizzip';
import { describe, expect, it } from 'vitest';
import { DomainError } from '../../../src/errors/domain-error.js';
import { toHttpFailure } from '../../../src/http/error-status.js';
import { contentFormat, detectFormat } from '../../../src/inputs/detect-format.js';
import { OFFICE_FORMATS } from '../../../src/inputs/formats.js';
import { firstMessageType, iworkKind, snappyHead } from '../../../src/inputs/iwork.js';
import { readZip } from '../../../src/documents/ooxml/zip/read.js';

/** Apple iWork packages by their content (test/fixtures/iwork/MANIFEST.md: libetonyek's and LibreOffice's test files). */
const fixture = (name: string) => readFileSync(path.resolve(import.meta.dirname, '../../fixtures/iwork', name));
const namesOf = (zip: Buffer) => Object.keys(new PizZip(zip).files);

describe('Apple Pages detection', () => {
  it('takes Pages: iWork 09 XML, 2013+ IWA, and a bundle zipped with its folder — whatever the file is called', () => {
    for (const name of ['pages4-file.pages', 'Pages_4.pages', 'pages5-file.pages', 'pages5-extra-dir.pages']) {
      expect(contentFormat(fixture(name)), name).toEqual({ kind: 'known', format: 'pages' });
      expect(detectFormat(fixture(name), OFFICE_FORMATS, { filename: 'letter.docx' }), name).toBe('pages');
    }
  });

  it("the ZIP guard reads Apple's '09 packages: a local ZIP64 field of zeros beside real classic sizes is a placeholder", () => {
    const entries = readZip(fixture('pages4-file.pages'));
    const index = [...entries].find((e) => e.name === 'index.xml');
    expect(index?.data.length).toBe(355772);
    expect(index!.data.toString('utf8', 0, 200)).toContain('<sl:document');
  });

  it('reads the document archive type of an .iwa: 10000 for Pages, 1 for Numbers', () => {
    const iwa = (zip: Buffer) => Buffer.from(new PizZip(zip).file('Index/Document.iwa')!.asUint8Array());
    expect(firstMessageType(iwa(fixture('pages5-file.pages')))).toBe(10000);
    expect(firstMessageType(iwa(fixture('numbers3-file.numbers')))).toBe(1);
    expect(firstMessageType(Buffer.from([0, 3, 0, 0, 0xff, 0xff, 0xff]))).toBeUndefined();
  });

  it('Snappy: literals and copies, stopping after the bytes asked for; damaged input is undefined', () => {
    // "abcabcabcX": a 3-byte literal, a copy of 6 at offset 3 (kind 1), a 1-byte literal.
    const block = Uint8Array.from([10, (3 - 1) << 2, 97, 98, 99, 1 | ((6 - 4) << 2), 3, 0, 88]);
    expect(snappyHead(block, 100)!.toString()).toBe('abcabcabcX');
    expect(snappyHead(block, 4)!.toString()).toBe('abca');
    expect(snappyHead(Uint8Array.from([10, 1 | (2 << 2), 9]), 100)).toBeUndefined();
    expect(snappyHead(Uint8Array.from([10, 8 << 2, 97]), 100)).toBeUndefined();
  });

  it('refuses Numbers (09 and 2013+) with 415 saying only Pages is taken', () => {
    for (const name of ['numbers2-file.numbers', 'numbers3-file.numbers']) {
      const data = fixture(name);
      expect(iworkKind(data, namesOf(data)), name).not.toBe('pages');
      let failure;
      try {
        detectFormat(data, OFFICE_FORMATS);
      } catch (err) {
        failure = toHttpFailure(err as DomainError);
      }
      expect(failure, name).toMatchObject({ status: 415, extensions: { acceptedFormats: OFFICE_FORMATS } });
      expect(failure!.message).toMatch(/Numbers.*Pages documents only/);
    }
  });

  it('an IWA package whose index cannot be read is refused, not guessed', () => {
    const zip = new PizZip();
    zip.file('Index/Document.iwa', Buffer.from([0, 2, 0, 0, 0xff, 0xff]));
    const data = zip.generate({ type: 'nodebuffer' }) as Buffer;
    expect(contentFormat(data)).toMatchObject({ kind: 'unsupported', what: expect.stringContaining('cannot be read') });
  });
});
