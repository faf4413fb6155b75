import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { STRUCTURE_BUDGET } from '../../../src/documents/docx-pdf/structure-budget.js';
import type { JobEvent } from '../../../src/office/index.js';
import { issueTestKey, multipart } from '../../support/api-key.js';
import { buildBiff8Stream, buildXls } from '../../support/office/biff-builder.js';
import { buildCompoundFile } from '../../support/office/compound-file-builder.js';
import { buildOds, buildXlsx, odsNumber } from '../../support/office/sheet-builder.js';
import { pdfPageCount, pdfRawText } from '../../support/pdf-text.js';
import { buildTestApp, type TestApp } from '../../support/test-app.js';

/**
 * Spreadsheets and presentations past their structure budget are refused through POST /v1/convert
 * before any office job starts (the pool reports no job), and real ones still convert.
 */
const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/formats');

let t: TestApp;
let key: string;
const jobs: JobEvent[] = [];

beforeAll(async () => {
  t = await buildTestApp({ REDIS_URL: inject('redisUrl'), OFFICE_ENABLED: 'true', OFFICE_POOL_SIZE: '1', RATE_LIMIT_MAX: '1000' });
  key = await issueTestKey(t.app, 'structure-budget@example.com');
  t.app.services.office!.on('job', (e) => jobs.push(e));
});
afterAll(async () => {
  await t?.app.close();
});

async function convert(data: Buffer, filename: string) {
  const body = await multipart({ file: { data, filename } });
  return t.app.inject({ method: 'POST', url: '/v1/convert', headers: { authorization: `Bearer ${key}`, 'content-type': body.contentType }, payload: body.payload });
}

const CELLS_10E9 = `<table:table table:name="S"><table:table-row table:number-rows-repeated="1000000">${odsNumber(7, 1000)}</table:table-row></table:table>`;
const FAR_CELL = '<sheetData><row r="1"><c r="A1"><v>1</v></c></row><row r="1048576"><c r="XFD1048576"><v>2</v></c></row></sheetData>';

describe('POST /v1/convert: spreadsheets past their structure budget never reach LibreOffice', () => {
  it.each([
    ['a 1 KB ODS declaring 10⁹ repeated number cells', () => buildOds(CELLS_10E9), 'sheet.ods', 'maxSheetCells'],
    ['an XLSX with two numbers at A1 and XFD1048576 (a 1.7·10¹⁰-cell printed area: minutes in soffice)', () => buildXlsx(FAR_CELL), 'far.xlsx', 'maxSheetArea'],
    ['a 3 KB XLS whose one array formula spans a whole BIFF8 sheet (65 536 × 256 cells)', () => buildXls([{ cells: [], arrays: [[0, 65535, 0, 255]] }]), 'array.xls', 'maxSheetCells'],
    ['an XLS with numbers at A1 and IV65536 in 31 sheets (5.2·10⁸ printed cells)', () => buildXls(Array.from({ length: 31 }, () => ({ cells: [{ row: 0, column: 0, kind: 'number' as const }, { row: 65535, column: 255, kind: 'rk' as const }] }))), 'far.xls', 'maxSheetArea'],
    ['a 36 KB XLS whose 201 BOUNDSHEETs all name one 5 000-cell sheet (LibreOffice makes 201 sheets of it)', () => buildCompoundFile([{ name: 'Workbook', data: buildBiff8Stream([{ cells: [], mulrk: Array.from({ length: 50 }, (_, row) => ({ row, column: 0, count: 100 })) }], ['s'], ([first]) => Array.from({ length: 201 }, () => first!)) }]), 'sheets.xls', 'maxSheetCells'],
    ['a CSV of 1 000 001 one-character fields', () => Buffer.from('a,b,c,d,e,f,g,h,i,j\n'.repeat(100_001)), 'big.csv', 'maxSheetCells'],
  ] as const)('%s: 422 naming the limit, no office job', async (_what, build, filename, limit) => {
    const before = jobs.length;
    const document = build();
    const res = await convert(document, filename);
    expect(res.statusCode, res.body.slice(0, 300)).toBe(422);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const problem = res.json();
    expect(problem).toMatchObject({ code: 'DOCUMENT_TOO_COMPLEX', limit: { name: `convert.${limit}`, max: STRUCTURE_BUDGET[limit] } });
    expect(problem.detail).toContain(STRUCTURE_BUDGET[limit].toLocaleString('en'));
    expect(jobs.length, 'no conversion ran').toBe(before);
  });

  it('a password-protected XLS (FILEPASS) is counted by its cell records, then left to LibreOffice as before (it cannot open it: 422)', async () => {
    const before = jobs.length;
    const res = await convert(readFileSync(path.join(FIXTURES, 'datasets-encrypted.xls')), 'locked.xls');
    expect({ status: res.statusCode, code: res.json().code }).toEqual({ status: 422, code: 'UNPROCESSABLE_DOCUMENT' });
    expect(jobs.length - before).toBe(1);
  }, 120_000);

  it('the corpus spreadsheets still convert, one office job each', async () => {
    for (const name of ['datasets.xlsx', 'datasets.ods', 'distro-info-debian.csv', 'datasets.xls', 'namesdemo.xls']) {
      const before = jobs.length;
      const res = await convert(readFileSync(path.join(FIXTURES, name)), name);
      expect(res.statusCode, `${name}: ${res.body.slice(0, 300)}`).toBe(200);
      expect(pdfPageCount(res.rawPayload)).toBeGreaterThan(0);
      expect(pdfRawText(res.rawPayload).length).toBeGreaterThan(100);
      expect(jobs.length - before, name).toBe(1);
    }
  }, 120_000);
});
