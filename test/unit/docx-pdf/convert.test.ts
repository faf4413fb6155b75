import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { convertDocxToPdf, type PdfConverter } from '../../../src/documents/docx-pdf/index.js';
import type { ConvertToPdfOptions } from '../../../src/office/index.js';
import { AppError } from '../../../src/errors/app-error.js';
import { CORPUS_DIR } from '../../support/corpus.js';

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

async function errorOf(promise: Promise<unknown>): Promise<AppError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(AppError);
  return err as AppError;
}

describe('convertDocxToPdf', () => {
  it('passes a DOCX to the converter with the Word filter and markup by default', async () => {
    const { calls, converter } = recordingConverter();
    const pdf = await convertDocxToPdf(converter, DOCX);
    expect(pdf.toString()).toBe('%PDF-1.7 fake');
    expect(calls).toHaveLength(1);
    expect(calls[0]!.input).toBe(DOCX);
    expect(calls[0]!.options).toEqual({ trackedChanges: 'markup', loadFilter: 'MS Word 2007 XML', inputExtension: 'docx' });
  });

  it('forwards the tracked-changes mode', async () => {
    const { calls, converter } = recordingConverter();
    await convertDocxToPdf(converter, DOCX, { trackedChanges: 'reject' });
    expect(calls[0]!.options?.trackedChanges).toBe('reject');
  });

  it('refuses a non-DOCX before it reaches LibreOffice', async () => {
    const { calls, converter } = recordingConverter();
    const err = await errorOf(convertDocxToPdf(converter, Buffer.from('%PDF-1.4 not a docx at all, just text')));
    expect(err.status).toBe(400);
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
    expect(err.status).toBe(422);
    expect(err.code).toBe('ENCRYPTED_DOCUMENT');
  });
});
