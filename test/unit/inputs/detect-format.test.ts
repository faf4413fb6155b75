import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import PizZip from 'pizzip';
import { describe, expect, it } from 'vitest';
import { DomainError, ErrorCode } from '../../../src/errors/domain-error.js';
import { toHttpFailure } from '../../../src/http/error-status.js';
import { readCompoundFile } from '../../../src/inputs/compound-file.js';
import { contentFormat, csvSeparator, detectFormat } from '../../../src/inputs/detect-format.js';
import { DOCUMENT_FORMATS, OFFICE_FORMATS, type DocumentFormat } from '../../../src/inputs/formats.js';
import { CORPUS_DIR } from '../../support/corpus.js';

const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/formats');
const fixture = (name: string) => readFileSync(path.join(FIXTURES, name));
const ALL = DOCUMENT_FORMATS;

/** Every fixture and what its content is (MANIFEST.md says where each comes from). */
const EXPECTED: Record<string, DocumentFormat> = {
  'tdf118412.doc': 'doc',
  'tables.dot': 'dot',
  'hello.docm': 'docm',
  'tables.docm': 'docm',
  'poi-45690.docm': 'docm',
  'sample.dotx': 'dotx',
  'tables.dotx': 'dotx',
  'poi-60316.dotx': 'dotx',
  'planets.odt': 'odt',
  'form-controls.odt': 'odt',
  'Modern_business_letter_sans_serif.ott': 'ott',
  'planets.rtf': 'rtf',
  'prn_test5.wpd': 'wpd',
  'datasets.xls': 'xls',
  'namesdemo.xls': 'xls',
  'datasets-encrypted.xls': 'xls',
  'datasets.xlsx': 'xlsx',
  'datasets.xlsm': 'xlsm',
  'tdf131562.xlsm': 'xlsm',
  'tdf111974.xlsm': 'xlsm',
  'datasets.ods': 'ods',
  'distro-info-debian.csv': 'csv',
  'tdf124708.ppt': 'ppt',
  'pandoc-writer.pptx': 'pptx',
  'pandoc-writer.odp': 'odp',
  'sdk-SimplePresentation.odp': 'odp',
  'sdk-ToDo.ods': 'ods',
};

function errorOf(run: () => unknown): { status?: number; code?: string; message: string; extensions?: Record<string, unknown> } {
  try {
    run();
  } catch (err) {
    if (!(err instanceof DomainError)) throw err;
    // As the caller is answered: the status and code come from src/http/error-status.ts.
    const { status, code, message, extensions } = toHttpFailure(err);
    return { status, code, message, extensions };
  }
  throw new Error('expected an error');
}

describe('detectFormat: one detector, from the content', () => {
  it('tells every fixture format by its content, whatever the file is called', () => {
    expect(Object.keys(EXPECTED).sort()).toEqual(readdirSync(FIXTURES).filter((f) => f !== 'MANIFEST.md' && f !== 'planets.txt').sort());
    for (const [name, format] of Object.entries(EXPECTED)) {
      expect(detectFormat(fixture(name), ALL), name).toBe(format);
      // A misleading name changes nothing for a format with a mark of its own (text formats: see below).
      if (format === 'csv') continue;
      expect(detectFormat(fixture(name), ALL, { filename: 'report.md' }), `${name} named .md`).toBe(format);
      expect(detectFormat(fixture(name), ALL, { filename: 'report.docx' }), `${name} named .docx`).toBe(format);
    }
  });

  it('the macro-enabled fixtures Office wrote carry their VBA project', () => {
    for (const [name, part] of [['poi-45690.docm', 'word/vbaProject.bin'], ['tdf131562.xlsm', 'xl/vbaProject.bin'], ['tdf111974.xlsm', 'xl/vbaProject.bin']]) {
      const project = new PizZip(fixture(name)).file(part!);
      expect(project?.asUint8Array().subarray(0, 4), name).toEqual(Uint8Array.from([0xd0, 0xcf, 0x11, 0xe0]));
    }
  });

  it('reads every corpus DOCX as docx and every corpus PDF as pdf', () => {
    for (const name of readdirSync(path.join(CORPUS_DIR, 'docx')).filter((f) => f.endsWith('.docx'))) {
      expect(detectFormat(readFileSync(path.join(CORPUS_DIR, 'docx', name)), ALL), name).toBe('docx');
    }
    for (const dir of ['pdf-signed', 'pdf-unsigned']) {
      for (const name of readdirSync(path.join(CORPUS_DIR, dir)).filter((f) => f.endsWith('.pdf'))) {
        expect(detectFormat(readFileSync(path.join(CORPUS_DIR, dir, name)), ALL), name).toBe('pdf');
      }
    }
  });

  it('never reads RTF or CSV as Markdown, and keeps Markdown and HTML apart', () => {
    expect(detectFormat(fixture('planets.rtf'), ALL, { filename: 'notes.md' })).toBe('rtf');
    expect(detectFormat(fixture('distro-info-debian.csv'), ALL)).toBe('csv');
    expect(detectFormat(fixture('distro-info-debian.csv'), ALL, { filename: 'upload' })).toBe('csv');
    expect(detectFormat(Buffer.from('a;b;c\n1;2;3\n4;5;6\n'), ALL)).toBe('csv');
    expect(detectFormat(Buffer.from('name\tage\nAda\t36\n'), ALL)).toBe('csv');
    expect(detectFormat(Buffer.from('"x, with comma",2\n"y",3\n'), ALL)).toBe('csv');
    for (const name of readdirSync(path.join(CORPUS_DIR, 'md')).filter((f) => f.endsWith('.md'))) {
      expect(detectFormat(readFileSync(path.join(CORPUS_DIR, 'md', name)), ALL), name).toBe('md');
    }
    for (const name of readdirSync(path.join(CORPUS_DIR, 'html'))) {
      expect(detectFormat(readFileSync(path.join(CORPUS_DIR, 'html', name)), ALL), name).toBe('html');
    }
    // Prose with commas is not a table; a Markdown table is not CSV.
    expect(detectFormat(Buffer.from('Hello, world.\nGoodbye, world.\n'), ALL)).toBe('md');
    expect(detectFormat(Buffer.from('| a | b |\n|---|---|\n| 1 | 2 |\n'), ALL)).toBe('md');
    expect(detectFormat(Buffer.from('just one line, with a comma'), ALL)).toBe('md');
    // Text that mentions a PDF header is still text.
    expect(detectFormat(Buffer.from('# About PDF\n\nA file starts with %PDF-1.7 and ends with a trailer.\n'), ALL)).toBe('md');
  });

  it('takes the name’s text format only among text formats', () => {
    expect(detectFormat(fixture('planets.txt'), ALL)).toBe('md');
    expect(detectFormat(fixture('planets.txt'), ALL, { filename: 'planets.txt' })).toBe('txt');
    expect(detectFormat(Buffer.from('a,b\n1,2\n'), ALL, { filename: 'x.txt' })).toBe('txt');
    expect(detectFormat(Buffer.from('<p>hi</p>'), ALL, { filename: 'x.txt' })).toBe('html');
  });

  it('trusts from for text, and wants it to agree with a format that has a mark', () => {
    expect(detectFormat(fixture('distro-info-debian.csv'), ALL, { declared: 'txt' })).toBe('txt');
    expect(detectFormat(Buffer.from('# Title'), ALL, { declared: 'html' })).toBe('html');
    expect(detectFormat(fixture('tables.docm'), ALL, { declared: 'docx' })).toBe('docm');
    expect(detectFormat(fixture('hello.docm'), ALL, { declared: 'docx' })).toBe('docm');
    expect(detectFormat(fixture('tdf118412.doc'), ALL, { declared: 'dot' })).toBe('dot');
    expect(detectFormat(fixture('datasets.xlsm'), ALL, { declared: 'xlsx' })).toBe('xlsm');
    expect(detectFormat(fixture('tdf131562.xlsm'), ALL, { declared: 'xlsx' })).toBe('xlsm');
    for (const [name, declared] of [['planets.rtf', 'md'], ['datasets.xlsx', 'docx'], ['pandoc-writer.pptx', 'xlsx'], ['tdf118412.doc', 'xls'], ['tdf124708.ppt', 'doc'], ['planets.odt', 'ods']] as const) {
      expect(errorOf(() => detectFormat(fixture(name), ALL, { declared })), `${name} as ${declared}`).toMatchObject({ status: 400, code: 'INVALID_FILE_FORMAT' });
    }
    expect(errorOf(() => detectFormat(Buffer.from('plain words'), ALL, { declared: 'docx' }))).toMatchObject({ status: 400, code: 'INVALID_FILE_FORMAT' });
  });

  it('answers 415 naming the accepted formats for anything else', () => {
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c489', 'hex');
    const zip = new PizZip();
    zip.file('readme.txt', 'not an office document');
    const plainZip = zip.generate({ type: 'nodebuffer' }) as Buffer;
    const visio = new PizZip();
    visio.file('[Content_Types].xml', '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/visio/document.xml" ContentType="application/vnd.ms-visio.drawing.main+xml"/></Types>');
    visio.file('visio/document.xml', '<x/>');
    const odg = new PizZip();
    odg.file('mimetype', 'application/vnd.oasis.opendocument.graphics');
    for (const data of [png, plainZip, visio.generate({ type: 'nodebuffer' }) as Buffer, odg.generate({ type: 'nodebuffer' }) as Buffer]) {
      const err = errorOf(() => detectFormat(data, OFFICE_FORMATS));
      expect(err).toMatchObject({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE', extensions: { acceptedFormats: OFFICE_FORMATS } });
      expect(err.message).toContain('xlsx');
    }
    // A known format the route does not take: a PDF to annotate, a spreadsheet to sign, text to verify.
    expect(errorOf(() => detectFormat(readFileSync(path.join(CORPUS_DIR, 'pdf-unsigned', readdirSync(path.join(CORPUS_DIR, 'pdf-unsigned'))[0]!)), ['docx']))).toMatchObject({ status: 415, extensions: { acceptedFormats: ['docx'] } });
    expect(errorOf(() => detectFormat(fixture('datasets.xlsx'), ['pdf', 'docx']))).toMatchObject({ status: 415 });
    expect(errorOf(() => detectFormat(Buffer.from('hello'), ['pdf', 'docx'])).message).toMatch(/text, not a document; this operation takes pdf, docx/);
  });

  it('refuses a password-protected OOXML file (an OLE2 container) with 422', () => {
    // A real CFB holding EncryptionInfo and EncryptedPackage streams, built by the helper below.
    expect(errorOf(() => detectFormat(compoundFile(['EncryptionInfo', 'EncryptedPackage']), ALL))).toMatchObject({ status: 422, code: 'ENCRYPTED_DOCUMENT' });
    expect(detectFormat(compoundFile(['WordDocument']), ALL)).toBe('doc');
    expect(detectFormat(compoundFile(['Workbook']), ALL)).toBe('xls');
    expect(detectFormat(compoundFile(['PowerPoint Document']), ALL)).toBe('ppt');
    expect(errorOf(() => detectFormat(compoundFile(['VisioDocument']), ALL))).toMatchObject({ status: 415 });
  });

  it('reads only root entries: an xls with an embedded Word object stays an xls', () => {
    const file = readCompoundFile(fixture('datasets.xls'))!;
    expect(file.root.map((e) => e.name)).toContain('Workbook');
    expect(contentFormat(compoundFile(['Workbook'], ['WordDocument']))).toEqual({ kind: 'known', format: 'xls' });
  });

  it('terminates on a compound file whose directory chain loops, and on damaged ones', () => {
    const looping = compoundFile(['WordDocument']);
    // FAT entry of the directory sector (sector 1) points back to itself.
    looping.writeUInt32LE(1, 512 + 4);
    expect(detectFormat(looping, ALL)).toBe('doc');
    const truncated = compoundFile(['WordDocument']).subarray(0, 600);
    expect(errorOf(() => detectFormat(truncated, ALL))).toMatchObject({ status: 400, code: 'INVALID_FILE_FORMAT' });
  });

  it('picks the CSV separator Calc is told', () => {
    expect(csvSeparator('a,b\n1,2')).toBe(44);
    expect(csvSeparator('a;b\n1;2')).toBe(59);
    expect(csvSeparator('a\tb\n1\t2')).toBe(9);
    expect(csvSeparator('a,b\n1,2,3')).toBeUndefined();
  });
});

/**
 * A minimal compound file: header, one FAT sector (sector 0), one directory sector (sector 1) with
 * the root and the given root streams (siblings chained to the right), and under the first stream a
 * storage child list when `nested` names are given.
 */
function compoundFile(names: string[], nested: string[] = []): Buffer {
  const sector = 512;
  const buf = Buffer.alloc(sector * 3);
  Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(buf, 0);
  buf.writeUInt16LE(0x3e, 0x18);
  buf.writeUInt16LE(3, 0x1a);
  buf.writeUInt16LE(0xfffe, 0x1c);
  buf.writeUInt16LE(9, 0x1e);
  buf.writeUInt16LE(6, 0x20);
  buf.writeUInt32LE(1, 0x2c); // FAT sectors
  buf.writeUInt32LE(1, 0x30); // first directory sector
  buf.writeUInt32LE(4096, 0x38);
  buf.writeUInt32LE(0xfffffffe, 0x3c);
  buf.writeUInt32LE(0xfffffffe, 0x44);
  buf.fill(0xff, 0x4c, 512);
  buf.writeUInt32LE(0, 0x4c); // FAT in sector 0
  const fat = sector;
  buf.fill(0xff, fat, fat + sector);
  buf.writeUInt32LE(0xfffffffd, fat); // sector 0: FAT
  buf.writeUInt32LE(0xfffffffe, fat + 4); // sector 1: directory, end of chain
  const dir = 2 * sector;
  const entry = (id: number, name: string, type: number, right: number, child: number) => {
    const at = dir + id * 128;
    buf.write(name, at, 'utf16le');
    buf.writeUInt16LE((name.length + 1) * 2, at + 0x40);
    buf[at + 0x42] = type;
    buf.writeUInt32LE(0xffffffff, at + 0x44);
    buf.writeUInt32LE(right, at + 0x48);
    buf.writeUInt32LE(child, at + 0x4c);
    buf.writeUInt32LE(0xfffffffe, at + 0x74);
  };
  const all = [...names, ...nested];
  if (all.length > 3) throw new Error('one directory sector holds four entries');
  entry(0, 'Root Entry', 5, 0xffffffff, names.length ? 1 : 0xffffffff);
  names.forEach((name, i) => entry(1 + i, name, nested.length && i === 0 ? 1 : 2, i + 1 < names.length ? 2 + i : 0xffffffff, nested.length && i === 0 ? 1 + names.length : 0xffffffff));
  nested.forEach((name, i) => entry(1 + names.length + i, name, 2, i + 1 < nested.length ? 2 + names.length + i : 0xffffffff, 0xffffffff));
  return buf;
}

describe('detectFormat: SuperDoc-contract routes and sloppy packages', () => {
  it('refuses with 400 INVALID_FILE_FORMAT (acceptedFormats too) where the route asks for it', () => {
    expect(errorOf(() => detectFormat(Buffer.from('hello'), ['pdf', 'docx'], { unsupportedAs: ErrorCode.INVALID_FILE_FORMAT }))).toMatchObject({ status: 400, code: 'INVALID_FILE_FORMAT', extensions: { acceptedFormats: ['pdf', 'docx'] } });
  });

  it('reads a package without a main Override by its Default or its well-known main part', () => {
    const byDefault = new PizZip();
    byDefault.file('[Content_Types].xml', '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/></Types>');
    byDefault.file('xl/workbook.xml', '<workbook/>');
    expect(detectFormat(byDefault.generate({ type: 'nodebuffer' }) as Buffer, ALL)).toBe('xlsx');
    const byName = new PizZip();
    byName.file('[Content_Types].xml', '<Types/>');
    byName.file('word/document.xml', '<w:document/>');
    expect(detectFormat(byName.generate({ type: 'nodebuffer' }) as Buffer, ALL)).toBe('docx');
  });
});
