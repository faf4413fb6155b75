import { readFileSync } from 'node:fs';
import path from 'node:path';
import PizZip from 'pizzip';
import { describe, expect, it } from 'vitest';
import { snappyHead } from '../../../src/inputs/iwork.js';
import { multipart } from '../../support/api-key.js';
import { pdfPageCount, pdfRawText, pdfText } from '../../support/pdf-text.js';
import { pages09Text, wordRecall, wordsOf } from '../../support/source-text.js';
import { useOfficeTestApp } from '../../support/office-test-app.js';

/**
 * Apple Pages through POST /v1/convert (LibreOffice's "Apple Pages" filter, libetonyek), on real
 * files written by Pages (test/fixtures/iwork/MANIFEST.md). Each sentence looked for in the PDF is
 * first found in the file itself: in the decompressed Document.iwa (Snappy chunks, decoded here),
 * or the '09 package's index.xml (test/support/source-text.ts).
 */
const fixture = (name: string) => readFileSync(path.resolve(import.meta.dirname, '../../fixtures/iwork', name));

/** Every chunk of an .iwa file decompressed and joined: the protobuf messages, text as UTF-8 inside. */
function iwaBytes(iwa: Buffer): Buffer {
  const parts: Buffer[] = [];
  for (let at = 0; at + 4 <= iwa.length;) {
    const length = iwa.readUIntLE(at + 1, 3);
    parts.push(snappyHead(iwa.subarray(at + 4, at + 4 + length), Number.MAX_SAFE_INTEGER)!);
    at += 4 + length;
  }
  return Buffer.concat(parts);
}

/** The Document.iwa of a Pages package, directly or inside its Index.zip. */
function documentIwa(pages: Buffer): Buffer {
  const zip = new PizZip(pages);
  const direct = zip.file('Index/Document.iwa');
  if (direct) return Buffer.from(direct.asUint8Array());
  const inner = zip.file(/(^|\/)Index\.zip$/)[0]!;
  return Buffer.from(new PizZip(inner.asUint8Array()).file('Index/Document.iwa')!.asUint8Array());
}

const t = useOfficeTestApp('pages@example.com');

async function convert(data: Buffer, filename: string, query = '') {
  const body = await multipart({ file: { data, filename } });
  return t.app.inject({ method: 'POST', url: `/v1/convert${query}`, headers: { authorization: `Bearer ${t.key}`, 'content-type': body.contentType }, payload: body.payload });
}

describe('POST /v1/convert: Apple Pages', () => {
  it.each([
    ['pages5-file.pages', ['My hovercraft is full of eels.', 'Mé vznášedlo je plné úhořů.', 'Mój poduszkowiec jest pełen węgorzy.']],
    ['pages5-extra-dir.pages', ['Project Proposal', 'Prepared for: Trenz Pruca, Title', 'Proposal number: 123-4567']],
  ] as const)('%s (Pages 2013+, IWA): the sentences stored in the file are in the PDF', async (name, sentences) => {
    const source = iwaBytes(documentIwa(fixture(name))).toString('utf8');
    const res = await convert(fixture(name), 'document.bin');
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    const text = pdfText(res.rawPayload).replace(/\s+/g, ' ');
    for (const sentence of sentences) {
      expect(source, 'the source holds it').toContain(sentence);
      expect(text).toContain(sentence);
    }
  });

  it("pages4-file.pages (Pages '09 XML): a blank document becomes one blank page; from=pages is taken, from=docx is 400", async () => {
    const res = await convert(fixture('pages4-file.pages'), 'blank.pages', '?from=pages');
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect(pdfPageCount(res.rawPayload)).toBe(1);
    expect(pdfText(res.rawPayload).trim()).toBe('');
    const wrong = await convert(fixture('pages4-file.pages'), 'blank.pages', '?from=docx');
    expect(wrong.statusCode).toBe(400);
    expect(wrong.body).toContain('PAGES');
  });

  it("Pages_4.pages (Pages '09 XML with text): the PDF has the document's text and, like Pages' own preview, not the template's placeholder text", async () => {
    const pages = fixture('Pages_4.pages');
    const source = pages09Text(pages);
    expect(wordsOf(source).size, 'the document holds text').toBeGreaterThan(0);
    // The QuickLook preview Pages itself rendered when it saved the file: an independent view of what prints.
    const applePreview = pdfRawText(Buffer.from(new PizZip(pages).file('QuickLook/Preview.pdf')!.asUint8Array()));
    expect(wordRecall(source, applePreview).recall, 'Pages printed the same text').toBe(1);
    const res = await convert(pages, 'document.bin');
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    const ours = pdfRawText(res.rawPayload);
    expect(wordRecall(source, ours)).toEqual({ recall: 1, missing: [] });
    // Nothing Pages does not print (its template's placeholder paragraphs) is in ours.
    expect(wordRecall(ours, applePreview)).toEqual({ recall: 1, missing: [] });
    expect(pdfPageCount(res.rawPayload)).toBe(pdfPageCount(Buffer.from(new PizZip(pages).file('QuickLook/Preview.pdf')!.asUint8Array())));
  });

  it('Numbers is refused with 415 naming pages among the accepted formats', async () => {
    const res = await convert(fixture('numbers3-file.numbers'), 'sheet.numbers');
    expect(res.statusCode).toBe(415);
    const problem = res.json() as { detail: string; acceptedFormats: string[] };
    expect(problem.detail).toContain('Pages documents only');
    expect(problem.acceptedFormats).toContain('pages');
  });
});
