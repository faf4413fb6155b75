import { readdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { documentWork } from '../../../src/documents/docx-pdf/document-work.js';
import { OpcPackage } from '../../../src/documents/ooxml/package.js';
import { scrubExternalReferences } from '../../../src/documents/ooxml/scrub.js';
import { OfficePool } from '../../../src/office/index.js';
import type { ConversionStages } from '../../../src/office/stages.js';
import { corpusDocx, CORPUS_DOCX, pageTexts } from './pdf-tools.js';

/**
 * The fast path (read-only load, refresh only what the document has) against the full one
 * (read-write load, every field and index refreshed) on every corpus DOCX: same pages, same text.
 * A field type wrongly thought static, or a document wrongly loaded read-only, shows here.
 */
const files = readdirSync(CORPUS_DOCX).filter((f) => f.endsWith('.docx')).sort();
let pool: OfficePool;

beforeAll(async () => {
  pool = new OfficePool({ size: 2 });
  await pool.start();
}, 120_000);

afterAll(async () => {
  await pool?.close();
});

describe('only the work a document needs', () => {
  it.each(files)('%s: the fast path renders the same pages as the full refresh', async (name) => {
    const { docx } = scrubExternalReferences(corpusDocx(name));
    const work = documentWork(OpcPackage.open(docx, { tolerant: true }));
    const stages: ConversionStages = {};
    const [fast, full] = await Promise.all([
      pool.convertToPdf(docx, { work, stages }),
      pool.convertToPdf(docx), // no work given: the bridge refreshes everything
    ]);
    // Same number of pages and the same text. pdftotext orders floating content differently from one
    // LibreOffice layout to the next, and on docx4j-headers_footers.docx a few lines move across a
    // page break between two runs of the same path; so the text is compared as a sorted list of
    // characters over the whole document, and the pages by count.
    const pages = (pdf: Buffer) => pageTexts(pdf);
    const content = (texts: string[]) => [...texts.join('').replace(/\s+/g, '')].sort().join('');
    const [fastPages, fullPages] = [pages(fast), pages(full)];
    expect(fastPages.length).toBe(fullPages.length);
    expect(content(fastPages)).toEqual(content(fullPages));
    // What ran in LibreOffice is what the document needed.
    expect(stages.refresh === undefined).toBe(!work.fields && !work.indexes);
    expect(stages.load).toBeGreaterThan(0);
    expect(stages.export).toBeGreaterThan(0);
  }, 60_000);

  it('most corpus documents need no refresh at all', () => {
    const needing = files.filter((name) => {
      const work = documentWork(OpcPackage.open(corpusDocx(name), { tolerant: true }));
      return work.fields || work.indexes;
    });
    expect(needing.length).toBeGreaterThan(0);
    expect(needing.length).toBeLessThan(files.length / 2);
  });
});
