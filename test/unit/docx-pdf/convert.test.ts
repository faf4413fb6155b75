import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { convertDocxToPdf, type PdfConverter } from '../../../src/documents/docx-pdf/index.js';
import type { ConvertToPdfOptions } from '../../../src/office/index.js';
import { DomainError } from '../../../src/errors/domain-error.js';
import { OpcPackage } from '../../../src/documents/ooxml/package.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { httpStatusOf } from '../../../src/http/error-status.js';

const DOCX = readFileSync(`${CORPUS_DIR}/docx/pandoc-track_changes_insertion.docx`);

function recordingConverter() {
  const calls: { input: Buffer; options?: ConvertToPdfOptions }[] = [];
  const converter: PdfConverter = {
    async convertToPdf(input, options) {
      calls.push({ input, options });
      return Buffer.from('%PDF-1.7 fake');
    },
  };
  return { calls, converter };
}

async function errorOf(promise: Promise<unknown>): Promise<DomainError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(DomainError);
  return err as DomainError;
}

describe('convertDocxToPdf', () => {
  it('passes a DOCX unchanged to the converter with the Word filter in Writer, markup, and nothing to refresh (no PDF filter data unless asked)', async () => {
    const { calls, converter } = recordingConverter();
    const pdf = await convertDocxToPdf(converter, DOCX);
    expect(pdf.toString()).toBe('%PDF-1.7 fake');
    expect(calls).toHaveLength(1);
    expect(calls[0]!.input).toBe(DOCX);
    expect(calls[0]!.options).toEqual({ application: 'writer', trackedChanges: 'markup', loadFilter: 'MS Word 2007 XML', inputExtension: 'docx', work: { fields: false, indexes: false }, stages: undefined });
  });

  it('resolves accept/reject in the OOXML: LibreOffice gets a document without revisions, in markup mode', async () => {
    for (const mode of ['accept', 'reject'] as const) {
      const { calls, converter } = recordingConverter();
      const stages = {};
      await convertDocxToPdf(converter, DOCX, { trackedChanges: mode, stages });
      expect(calls[0]!.options?.trackedChanges).toBe('markup');
      const xml = OpcPackage.open(calls[0]!.input).text('/word/document.xml');
      expect(xml).not.toMatch(/<w:(ins|del)\b/);
      expect(xml).toContain(mode === 'accept' ? 'exciting' : 'insertions');
      if (mode === 'reject') expect(xml).not.toContain('exciting');
      expect(Object.keys(stages).sort()).toEqual(['changes', 'guards']);
    }
  });

  it('tells the bridge about layout fields and indexes', async () => {
    const cases = [
      ['docx4j-toc.docx', { fields: true, indexes: true }],
      ['pandoc-cross_reference.docx', { fields: true, indexes: false }],
      ['superdoc-page-numbering-examples.docx', { fields: false, indexes: false }],
    ] as const;
    for (const [name, work] of cases) {
      const { calls, converter } = recordingConverter();
      await convertDocxToPdf(converter, readFileSync(`${CORPUS_DIR}/docx/${name}`));
      expect(calls[0]!.options?.work, name).toEqual(work);
    }
  });

  it('refuses a non-DOCX before it reaches LibreOffice', async () => {
    const { calls, converter } = recordingConverter();
    const err = await errorOf(convertDocxToPdf(converter, Buffer.from('%PDF-1.4 not a docx at all, just text')));
    expect(httpStatusOf(err)).toBe(400);
    expect(err.code).toBe('INVALID_FILE_FORMAT');
    expect(calls).toHaveLength(0);
  });

  it('refuses a password-protected (OLE-wrapped) document with 422', async () => {
    const { converter } = recordingConverter();
    const ole = Buffer.concat([
      Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]),
      Buffer.alloc(512),
      Buffer.from('EncryptionInfo', 'utf16le'),
    ]);
    const err = await errorOf(convertDocxToPdf(converter, ole));
    expect(httpStatusOf(err)).toBe(422);
    expect(err.code).toBe('ENCRYPTED_DOCUMENT');
  });
});
