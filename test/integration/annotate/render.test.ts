import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkerPool } from '../../../src/compute/worker-pool.js';
import { annotateDocx, loadSvgRenderer } from '../../../src/documents/annotate/index.js';
import type { AnnotateTaskInput, AnnotateTaskOutput } from '../../../workers/annotate.js';
import { buildDocx, cell, noteReference, para, pngImage, row, sdt, table, textBox } from '../../support/annotate/docx-builder.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { answering } from '../../support/domain-error.js';

const BADGE_SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="90" height="30"><rect width="90" height="30" fill="#00A050"/></svg>';

const run = promisify(execFile);
let dir: string;

beforeAll(async () => {
  await loadSvgRenderer();
  dir = await mkdtemp(join(tmpdir(), 'docproc-annotate-it-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Cold LibreOffice conversion in a private profile, then pdftotext as the independent reader. */
async function renderText(docx: Buffer, name: string): Promise<{ text: string; images: number; imageSizes: string[]; strokes: string[] }> {
  const input = join(dir, `${name}.docx`);
  await writeFile(input, docx);
  await run('soffice', ['--headless', `-env:UserInstallation=file://${join(dir, `profile-${name}`)}`, '--convert-to', 'pdf', '--outdir', dir, input], { timeout: 120_000 });
  const pdf = join(dir, `${name}.pdf`);
  const { stdout: text } = await run('pdftotext', ['-layout', pdf, '-']);
  const { stdout: list } = await run('pdfimages', ['-list', pdf]);
  const rows = list.trim().split('\n').slice(2).map((line) => line.trim().split(/\s+/));
  // Vector strokes (the signature arcs) as pdftocairo draws them: "rgb(r%,g%,b%)" per stroked path.
  await run('pdftocairo', ['-svg', pdf, join(dir, `${name}.svg`)]);
  const svg = await readFile(join(dir, `${name}.svg`), 'utf8');
  const strokes = [...svg.matchAll(/<path style="fill:none;[^"]*stroke:(rgb\([^)]*\))[^"]*" d="M [^"]* C /g)].map((m) => m[1]);
  return { text, images: rows.filter((r) => r[2] === 'image').length, imageSizes: rows.filter((r) => r[2] === 'image').map((r) => `${r[3]}x${r[4]}`), strokes };
}

describe('annotate rendered by LibreOffice', () => {
  it('shows text, content controls (body, header, table, text box), images, signature and table rows in the PDF', async () => {
    const template = buildDocx({
      body:
        para('Customer: {customer}') +
        `<w:p><w:r><w:t xml:space="preserve">Reference: </w:t></w:r>${sdt('ref', '<w:r><w:rPr><w:rStyle w:val="PlaceholderText"/></w:rPr><w:t>Click to enter</w:t></w:r>', { placeholder: true })}</w:p>` +
        textBox(sdt('boxed', para('box placeholder'))) +
        para('Logo: {%logo}') +
        table([row([cell('Item'), cell('Qty')], true), row([cell('{#lines}{c0}'), cell('{c1}{/lines}')])]) +
        sdt('parts', table([row([cell('Part'), cell('Code')], true), row([cell(''), cell('')])])) +
        para('{%signature}') +
        para('Badge: {%badge}') +
        `<w:p><w:r><w:t xml:space="preserve">See the note</w:t></w:r>${noteReference('endnote')}</w:p>`,
      header: sdt('company', para('Company placeholder')),
      endnote: para('Endnote for {customer}'),
    });
    const { docx } = annotateDocx({
      template,
      fields: [
        { id: 'customer', type: 'text', value: 'Grace Hopper' },
        { id: 'ref', type: 'text', value: 'REF-2026-0042' },
        { id: 'boxed', type: 'text', value: 'Boxed note' },
        { id: 'company', type: 'text', value: 'Initech Holdings' },
        { id: 'logo', type: 'image', value: pngImage(120, 60).toString('base64'), options: { dimensions: { width: 120 } } },
        { id: 'lines', type: 'table', value: [['Widget', '7'], ['Gadget', '9'], ['Doohickey', '11']] },
        { id: 'parts', type: 'table', value: [['Bolt', 'B-1'], ['Nut', 'N-2']] },
        { id: 'signature', type: 'signature', value: 'Grace Hopper', options: { arcElement: { color: '#C00000' }, bottomLabel: { text: 'Signed 2026-11-23' } } },
        { id: 'badge', type: 'image', value: Buffer.from(BADGE_SVG).toString('base64') },
      ],
    });
    const { text, images, imageSizes, strokes } = await renderText(docx, 'full');
    for (const expected of ['Customer: Grace Hopper', 'Reference: REF-2026-0042', 'Boxed note', 'Initech Holdings', 'Signed 2026-11-23', 'Endnote for Grace Hopper']) {
      expect(text).toContain(expected);
    }
    expect(text).not.toContain('Click to enter');
    expect(text).toMatch(/Widget\s+7/);
    expect(text).toMatch(/Doohickey\s+11/);
    expect(text).toMatch(/Nut\s+N-2/);
    expect(text).toMatch(/Grace Hopper\s+Signed 2026-11-23/);
    // The logo, and the SVG badge drawn through its PNG fallback (twice its 90×30 size).
    expect(images).toBe(2);
    expect(imageSizes).toContain('180x60');
    // The signature arc is a curve stroked in the arcElement colour (#C00000 = 75.29% red).
    expect(strokes).toHaveLength(1);
    expect(strokes[0]).toMatch(/^rgb\(75\.\d+%,0%,0%\)$/);
  });

  it('renders a corpus template with loops (tag-intelligent-loop-table)', async () => {
    const template = await readFile(`${CORPUS_DIR}/templates/docxtemplater-tag-intelligent-loop-table.docx`);
    const { docx } = annotateDocx({
      template,
      fields: [],
      data: { clients: [{ first_name: 'Ada', last_name: 'Lovelace', phone: '0101' }, { first_name: 'Alan', last_name: 'Turing', phone: '0202' }] },
    });
    const { text } = await renderText(docx, 'loop');
    expect(text).toMatch(/Ada\s+Lovelace\s+0101/);
    expect(text).toMatch(/Alan\s+Turing\s+0202/);
  });
});

describe('annotate through the worker pool', () => {
  it('runs the `annotate` task and carries DomainErrors back', async () => {
    const pool = new WorkerPool({ threads: 1, maxQueue: 10 });
    try {
      const template = buildDocx({ body: para('Hi {name}') });
      const output = await pool.run<AnnotateTaskInput, AnnotateTaskOutput>('annotate', {
        template: new Uint8Array(template),
        fields: [{ id: 'name', type: 'text', value: 'Worker' }],
      });
      expect(Buffer.from(output.docx).includes(Buffer.from('PK'))).toBe(true);
      const bad = pool.run('annotate', { template: new Uint8Array(template), fields: [{ id: 'zzz', type: 'text', value: 'x' }] });
      await expect(bad).rejects.toMatchObject(answering(422, 'FIELD_NOT_FOUND'));
    } finally {
      await pool.close();
    }
  });
});
