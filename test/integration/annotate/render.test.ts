import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkerPool } from '../../../src/compute/worker-pool.js';
import { annotateDocx } from '../../../src/documents/annotate/index.js';
import type { AnnotateTaskInput, AnnotateTaskOutput } from '../../../workers/annotate.js';
import { buildDocx, cell, para, pngImage, row, sdt, table, textBox } from '../../support/annotate/docx-builder.js';

const run = promisify(execFile);
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'docproc-annotate-it-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** Cold LibreOffice conversion in a private profile, then pdftotext as the independent reader. */
async function renderText(docx: Buffer, name: string): Promise<{ text: string; images: number }> {
  const input = join(dir, `${name}.docx`);
  await writeFile(input, docx);
  await run('soffice', ['--headless', `-env:UserInstallation=file://${join(dir, `profile-${name}`)}`, '--convert-to', 'pdf', '--outdir', dir, input], { timeout: 120_000 });
  const pdf = join(dir, `${name}.pdf`);
  const { stdout: text } = await run('pdftotext', ['-layout', pdf, '-']);
  const { stdout: list } = await run('pdfimages', ['-list', pdf]);
  return { text, images: list.trim().split('\n').length - 2 };
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
        para('{%signature}'),
      header: sdt('company', para('Company placeholder')),
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
        { id: 'signature', type: 'signature', value: 'Grace Hopper', options: { bottomLabel: { text: 'Signed 2026-11-23' } } },
      ],
    });
    const { text, images } = await renderText(docx, 'full');
    for (const expected of ['Customer: Grace Hopper', 'Reference: REF-2026-0042', 'Boxed note', 'Initech Holdings', 'Signed 2026-11-23']) {
      expect(text).toContain(expected);
    }
    expect(text).not.toContain('Click to enter');
    expect(text).toMatch(/Widget\s+7/);
    expect(text).toMatch(/Doohickey\s+11/);
    expect(text).toMatch(/Nut\s+N-2/);
    expect(text).toMatch(/Grace Hopper[\s\S]*_{10,}/);
    expect(images).toBe(1);
  });

  it('renders a corpus template with loops (tag-intelligent-loop-table)', async () => {
    const template = await readFile('/work/shared/corpus/templates/docxtemplater-tag-intelligent-loop-table.docx');
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
  it('runs the `annotate` task and carries AppErrors back', async () => {
    const pool = new WorkerPool({ threads: 1, maxQueue: 10 });
    try {
      const template = buildDocx({ body: para('Hi {name}') });
      const output = await pool.run<AnnotateTaskInput, AnnotateTaskOutput>('annotate', {
        template: new Uint8Array(template),
        fields: [{ id: 'name', type: 'text', value: 'Worker' }],
      });
      expect(Buffer.from(output.docx).includes(Buffer.from('PK'))).toBe(true);
      const bad = pool.run('annotate', { template: new Uint8Array(template), fields: [{ id: 'zzz', type: 'text', value: 'x' }] });
      await expect(bad).rejects.toMatchObject({ status: 422, code: 'FIELD_NOT_FOUND' });
    } finally {
      await pool.close();
    }
  });
});
