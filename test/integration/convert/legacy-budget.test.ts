import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import PizZip from 'pizzip';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { blipPictures } from '../../../src/documents/docx-pdf/blip-pictures.js';
import { measureDocTables } from '../../../src/documents/docx-pdf/doc-layout.js';
import { LAYOUT_BUDGET } from '../../../src/documents/docx-pdf/layout-budget.js';
import { countPptRecords } from '../../../src/documents/docx-pdf/ppt-structure.js';
import { assertOdfStructure, STRUCTURE_BUDGET } from '../../../src/documents/docx-pdf/structure-budget.js';
import { readZip } from '../../../src/documents/ooxml/zip/read.js';
import type { JobEvent } from '../../../src/office/index.js';
import { issueTestKey, multipart } from '../../support/api-key.js';
import { buildCompoundFile } from '../../support/office/compound-file-builder.js';
import { largeImagesDocx } from '../../support/office/large-images.js';
import { buildDocStreams, buildPptStream, odtTables, type DocBlock } from '../../support/office/legacy-office.js';
import { pdfPageCount } from '../../support/pdf-text.js';
import { buildTestApp, type TestApp } from '../../support/test-app.js';

/**
 * Binary PPT and DOC/DOT through POST /v1/convert: past their budget they are refused before any
 * office job starts; real ones still convert, and what Node counts agrees with independent views:
 * the streams are read by python3-olefile (not our CFB reader), a PPT's slides are the pages of the
 * PDF LibreOffice makes of it, and a DOC's table cells and nesting are those of the ODT LibreOffice
 * writes of it (every table:table-cell, tables within cells); its shapes are at least the drawing
 * shapes of the ODP LibreOffice writes of it; the raster pictures found are those a python scan of
 * the olefile streams finds (PNG signatures, JPEG frames).
 */
const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/formats');
const ORACLE = path.resolve(import.meta.dirname, '../../support/olefile_streams.py');
const PICTURES_ORACLE = path.resolve(import.meta.dirname, '../../support/office/ole_pictures.py');
/** One more pixel a side than maxPicturePixels allows. */
const PAST_PIXELS = Math.floor(Math.sqrt(LAYOUT_BUDGET.maxPicturePixels)) + 1;
const UNLIMITED_LAYOUT = { ...LAYOUT_BUDGET, maxTableNesting: Infinity, maxTableCells: Infinity };

let t: TestApp;
let key: string;
const jobs: JobEvent[] = [];
const work = mkdtempSync(path.join(tmpdir(), 'docproc-legacy-budget-'));

const soffice = (args: string[]) =>
  execFileSync('soffice', [`-env:UserInstallation=file://${work}/profile`, '--headless', ...args, '--outdir', work], { timeout: 240_000, stdio: 'ignore' });

/** A table of `rows` × `columns`, each cell a number or, on the diagonal of the first rows, a nested table `depth` deep. */
const nestedHtml = (depth: number): string => (depth === 0 ? 'x' : `<table border="1"><tr><td>${nestedHtml(depth - 1)}</td><td>y</td></tr></table>`);
const gridHtml = `<table border="1">${Array.from({ length: 7 }, (_, r) => `<tr>${Array.from({ length: 4 }, (_, c) => `<td>${r}.${c}</td>`).join('')}</tr>`).join('')}</table>`;
const DOC_HTML = `<html><body><p>Tables</p>${nestedHtml(5)}<p>between</p>${gridHtml}</body></html>`;
/** The same tables with no paragraph between them: Word's format makes them one table whose rows differ in width. */
const ADJACENT_HTML = `<html><body><p>Tables</p>${nestedHtml(5)}${gridHtml}</body></html>`;

beforeAll(async () => {
  // LibreOffice-written legacy files: a DOC of nested and plain tables (from HTML), a PPT of the pandoc slides.
  writeFileSync(path.join(work, 'tables-nested.html'), DOC_HTML);
  writeFileSync(path.join(work, 'tables-adjacent.html'), ADJACENT_HTML);
  soffice(['--infilter=HTML (StarWriter)', '--convert-to', 'doc:MS Word 97', path.join(work, 'tables-nested.html'), path.join(work, 'tables-adjacent.html')]);
  soffice(['--convert-to', 'ppt:MS PowerPoint 97', path.join(FIXTURES, 'pandoc-writer.pptx')]);
  // A DOC and a PPT LibreOffice wrote holding one PNG one pixel a side past the pixel limit (from a DOCX, and pandoc's PPTX of it).
  const bigDocx = await largeImagesDocx(1, PAST_PIXELS);
  writeFileSync(path.join(work, 'big-picture.docx'), bigDocx);
  writeFileSync(path.join(work, 'big.png'), new PizZip(bigDocx).file('word/media/p0.png')!.asNodeBuffer());
  writeFileSync(path.join(work, 'big-picture.md'), '# Picture\n\n![](big.png)\n');
  execFileSync('pandoc', [path.join(work, 'big-picture.md'), '-o', path.join(work, 'big-picture.pptx')], { cwd: work });
  soffice(['--convert-to', 'doc:MS Word 97', path.join(work, 'big-picture.docx')]);
  soffice(['--convert-to', 'ppt:MS PowerPoint 97', path.join(work, 'big-picture.pptx')]);
  copyFileSync(path.join(FIXTURES, 'tdf124708.ppt'), path.join(work, 'tdf124708.ppt'));
  soffice(['--convert-to', 'odp', path.join(work, 'tdf124708.ppt'), path.join(work, 'pandoc-writer.ppt')]);
  copyFileSync(path.join(FIXTURES, 'tdf118412.doc'), path.join(work, 'tdf118412.doc'));
  copyFileSync(path.join(FIXTURES, 'tables.dot'), path.join(work, 'tables.dot'));
  soffice(['--convert-to', 'odt', ...['tables-nested.doc', 'tables-adjacent.doc', 'tdf118412.doc', 'tables.dot'].map((f) => path.join(work, f))]);
  t = await buildTestApp({ REDIS_URL: inject('redisUrl'), OFFICE_ENABLED: 'true', OFFICE_POOL_SIZE: '1', RATE_LIMIT_MAX: '1000' });
  key = await issueTestKey(t.app, 'legacy-budget@example.com');
  t.app.services.office!.on('job', (e) => jobs.push(e));
}, 300_000);
afterAll(async () => {
  await t?.app.close();
  rmSync(work, { recursive: true, force: true });
});

async function convert(data: Buffer, filename: string) {
  const body = await multipart({ file: { data, filename } });
  return t.app.inject({ method: 'POST', url: '/v1/convert', headers: { authorization: `Bearer ${key}`, 'content-type': body.contentType }, payload: body.payload });
}

/** Root streams as python3-olefile reads them. */
function olefileStreams(file: string): Map<string, Buffer> {
  const result = JSON.parse(execFileSync('/usr/bin/python3', [ORACLE, file], { encoding: 'utf8', maxBuffer: 1 << 28 }))[file] as { streams?: Record<string, string>; error?: string };
  if (!result.streams) throw new Error(`olefile: ${result.error}`);
  return new Map(Object.entries(result.streams).map(([name, hex]) => [name, Buffer.from(hex, 'hex')]));
}

/** Slides and shapes of a PPT whose streams python3-olefile read. */
function pptCount(file: string) {
  const streams = olefileStreams(file);
  return countPptRecords(streams.get('PowerPoint Document')!, streams.get('Current User')?.readUInt32LE(16));
}

describe('binary PPT and DOC counts agree with independent views of real files', () => {
  it.each(['tables-nested.doc', 'tdf118412.doc', 'tables.dot'])('%s: table cells and nesting equal those of the ODT LibreOffice writes of it', (name) => {
    const streams = olefileStreams(path.join(work, name));
    const word = streams.get('WordDocument')!;
    const table = streams.get(word.readUInt16LE(0x0a) & 0x0200 ? '1Table' : '0Table')!;
    const counted = measureDocTables(word, table, streams.get('Data'), UNLIMITED_LAYOUT);
    const odt = odtTables(path.join(work, name.replace(/\.\w+$/, '.odt')));
    console.log(`legacy-budget: ${name} counted ${JSON.stringify(counted)}, LibreOffice's ODT ${JSON.stringify(odt)}`);
    expect(counted).toEqual(odt);
    if (name === 'tables-nested.doc') expect(counted).toEqual({ cells: 5 * 2 + 7 * 4, nesting: 5 });
  });

  it('rows of different widths in one table: LibreOffice pads each narrower row with a cell the count does not see (as for DOCX)', () => {
    // The nested table's outer row and the 7 rows of the grid are one table of 8 rows in Word's format.
    const streams = olefileStreams(path.join(work, 'tables-adjacent.doc'));
    const word = streams.get('WordDocument')!;
    const counted = measureDocTables(word, streams.get(word.readUInt16LE(0x0a) & 0x0200 ? '1Table' : '0Table')!, streams.get('Data'), UNLIMITED_LAYOUT);
    const odt = odtTables(path.join(work, 'tables-adjacent.odt'));
    console.log(`legacy-budget: tables-adjacent.doc counted ${JSON.stringify(counted)}, LibreOffice's ODT ${JSON.stringify(odt)}`);
    expect(counted).toEqual({ cells: 38, nesting: 5 });
    expect(odt.nesting).toBe(5);
    expect(odt.cells).toBeGreaterThan(counted.cells);
    expect(odt.cells - counted.cells).toBeLessThanOrEqual(2 * 8);
  });

  it.each([
    ['tdf124708.ppt', FIXTURES],
    ['pandoc-writer.ppt', work],
  ])('%s: slides equal the pages of the PDF docproc makes of it, one office job', async (name, dir) => {
    const data = readFileSync(path.join(dir, name));
    const counted = pptCount(path.join(dir, name));
    const before = jobs.length;
    const res = await convert(data, name);
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect(jobs.length - before).toBe(1);
    console.log(`legacy-budget: ${name} counted ${counted.slides} slides, ${counted.shapes} shapes; PDF ${pdfPageCount(res.rawPayload)} pages`);
    expect(counted.slides).toBeGreaterThan(1);
    expect(pdfPageCount(res.rawPayload)).toBe(counted.slides);
  }, 120_000);

  it.each(['tdf124708.ppt', 'pandoc-writer.ppt'])('%s: shapes are at least the drawing shapes of the ODP LibreOffice writes of it', (name) => {
    const counted = pptCount(path.join(work, name));
    const odp = assertOdfStructure(readZip(readFileSync(path.join(work, name.replace('.ppt', '.odp')))), 'slides');
    console.log(`legacy-budget: ${name} shapes counted ${counted.shapes}, ODP ${odp.shapes} (pages ${odp.slides})`);
    expect(odp.slides).toBe(counted.slides);
    expect(counted.shapes).toBeGreaterThanOrEqual(odp.shapes);
  });

  it('raster pictures: those of every stream equal a python scan of the olefile streams', () => {
    const files = ['tdf124708.ppt', 'pandoc-writer.ppt', 'tdf118412.doc', 'tables.dot', 'big-picture.doc', 'big-picture.ppt'].map((f) => path.join(work, f));
    const expected = JSON.parse(execFileSync('/usr/bin/python3', [PICTURES_ORACLE, ...files], { encoding: 'utf8' })) as Record<string, [number, number][]>;
    for (const file of files) {
      const ours = [...olefileStreams(file).values()].flatMap((stream) => [...blipPictures(stream)].map(({ width, height }) => [width, height]));
      ours.sort((a, b) => a[0]! - b[0]! || a[1]! - b[1]!);
      expect(ours, path.basename(file)).toEqual(expected[file]);
    }
    expect(expected[path.join(work, 'big-picture.doc')]).toContainEqual([PAST_PIXELS, PAST_PIXELS]);
    expect(expected[path.join(work, 'tdf118412.doc')]!.length + expected[path.join(work, 'tdf124708.ppt')]!.length).toBeGreaterThan(0);
  });

  it.each(['big-picture.doc', 'big-picture.ppt'])('%s (written by LibreOffice) is 422 convert.maxPicturePixels, no office job', async (name) => {
    const before = jobs.length;
    const res = await convert(readFileSync(path.join(work, name)), name);
    expect(res.statusCode, res.body.slice(0, 300)).toBe(422);
    expect(res.json()).toMatchObject({ code: 'DOCUMENT_TOO_COMPLEX', limit: { name: 'convert.maxPicturePixels', max: LAYOUT_BUDGET.maxPicturePixels } });
    expect(jobs.length).toBe(before);
  });

  it('the real Word files still convert, one office job each', async () => {
    for (const name of ['tdf118412.doc', 'tables.dot', 'tables-nested.doc']) {
      const before = jobs.length;
      const res = await convert(readFileSync(path.join(work, name)), name);
      expect(res.statusCode, `${name}: ${res.body.slice(0, 300)}`).toBe(200);
      expect(pdfPageCount(res.rawPayload)).toBeGreaterThan(0);
      expect(jobs.length - before, name).toBe(1);
    }
  }, 120_000);
});

describe('POST /v1/convert: PPT and DOC past their budget never reach LibreOffice', () => {
  const table = (rows: number, columns: number): DocBlock => ({ rows: Array.from({ length: rows }, () => Array.from({ length: columns }, () => ['p'] as DocBlock[])) });
  let nested: DocBlock[] = ['p'];
  for (let i = 0; i <= LAYOUT_BUDGET.maxTableNesting; i++) nested = [{ rows: [[nested]] }];
  const doc = (blocks: DocBlock[]) => {
    const built = buildDocStreams(blocks);
    return buildCompoundFile([
      { name: 'WordDocument', data: built.word },
      { name: '1Table', data: built.table },
      { name: 'Data', data: built.data },
    ]);
  };
  const ppt = (slides: number, shapesEach: number) => {
    const built = buildPptStream({ slides: Array.from({ length: slides }, () => Array.from({ length: shapesEach }, () => 'shape' as const)), masters: [[]], notes: [] });
    return buildCompoundFile([
      { name: 'PowerPoint Document', data: built.stream },
      { name: 'Current User', data: built.currentUser },
    ]);
  };

  it.each([
    ['a PPT of 1 001 slides', () => ppt(STRUCTURE_BUDGET.maxSlides + 1, 0), 'slides.ppt', 'maxSlides', STRUCTURE_BUDGET.maxSlides],
    ['a PPT of 500 slides of 400 shapes', () => ppt(500, 400), 'shapes.ppt', 'maxShapes', STRUCTURE_BUDGET.maxShapes],
    ['a DOC of 25 050 table cells', () => doc([table(501, 50)]), 'cells.doc', 'maxTableCells', LAYOUT_BUDGET.maxTableCells],
    ['a DOC of tables nested 33 deep', () => doc(nested), 'nested.doc', 'maxTableNesting', LAYOUT_BUDGET.maxTableNesting],
  ] as const)('%s: 422 naming the limit, no office job', async (_what, build, filename, limit, max) => {
    const before = jobs.length;
    const res = await convert(build(), filename);
    expect(res.statusCode, res.body.slice(0, 300)).toBe(422);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    const problem = res.json();
    expect(problem).toMatchObject({ code: 'DOCUMENT_TOO_COMPLEX', limit: { name: `convert.${limit}`, max } });
    expect(problem.detail).toContain(max.toLocaleString('en'));
    expect(jobs.length, 'no conversion ran').toBe(before);
  }, 60_000);
});
