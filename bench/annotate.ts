/**
 * Annotate benchmark: a 10-page template with 50 text fields, 2 images and a 100-row table.
 * Prints p50/p95 per call for the engine through the Piscina pool at concurrency 1 and 4,
 * beside a bare docxtemplater render of the same data in the same run.
 *   npx tsx bench/annotate.ts [--iterations 60] [--url http://localhost:3000 --key <api key> [--pdf]]
 * With --pdf, the HTTP rows are repeated with ?to=pdf (the server needs its office pool).
 */
import { measure as measureLatency } from './lib/measure.js';
import { parseArgs } from 'node:util';
import Docxtemplater from 'docxtemplater';
import PizZip from 'pizzip';
import { WorkerPool } from '../src/compute/worker-pool.js';
import { annotateDocx, DOCX_CONTENT_TYPE, type AnnotateField } from '../src/documents/annotate/index.js';
import type { AnnotateTaskInput, AnnotateTaskOutput } from '../workers/annotate.js';
import { buildDocx, cell, para, pngImage, row, table } from '../test/support/annotate/docx-builder.js';

const { values: args } = parseArgs({
  options: { iterations: { type: 'string', default: '60' }, url: { type: 'string' }, key: { type: 'string' }, pdf: { type: 'boolean', default: false } },
});
const iterations = Number(args.iterations);

function buildTemplate(): Buffer {
  const filler = 'Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. ';
  const paragraphs: string[] = [];
  for (let i = 0; i < 50; i++) paragraphs.push(para(`Field ${i}: {field${i}}. ${filler.repeat(3)}`));
  paragraphs.push(para('{%logo}'), para('{%stamp}'));
  paragraphs.push(table([row([cell('Item'), cell('Qty'), cell('Price')], true), row([cell('{#lines}{c0}'), cell('{c1}'), cell('{c2}{/lines}')])], [3000, 3000, 3000]));
  for (let i = 0; i < 60; i++) paragraphs.push(para(filler.repeat(2)));
  return buildDocx({ body: paragraphs.join('') });
}

const template = buildTemplate();
const logo = pngImage(300, 120).toString('base64');
const stamp = pngImage(160, 160, [20, 60, 200]).toString('base64');
const rows = Array.from({ length: 100 }, (_, i) => [`Item ${i}`, String(i % 7), `${(i * 1.5).toFixed(2)} EUR`]);
const fields: AnnotateField[] = [
  ...Array.from({ length: 50 }, (_, i): AnnotateField => ({ id: `field${i}`, type: 'text', value: `value number ${i}` })),
  { id: 'logo', type: 'image', value: logo, options: { dimensions: { width: 200 } } },
  { id: 'stamp', type: 'image', value: stamp },
  { id: 'lines', type: 'table', value: rows },
];

function bareDocxtemplater(): Buffer {
  const data: Record<string, unknown> = { lines: rows.map(([c0, c1, c2]) => ({ c0, c1, c2 })) };
  for (let i = 0; i < 50; i++) data[`field${i}`] = `value number ${i}`;
  const doc = new Docxtemplater(new PizZip(template), { paragraphLoop: true, linebreaks: true, nullGetter: () => '' });
  doc.render(data);
  return doc.getZip().generate({ type: 'nodebuffer', compression: 'DEFLATE' }) as Buffer;
}

const measure = (label: string, concurrency: number, run: () => Promise<unknown> | unknown) =>
  measureLatency(label, concurrency, run, { iterations, unit: 'docs' });

async function main() {
  const check = annotateDocx({ template, fields });
  console.log(`template ${template.length} bytes → output ${check.docx.length} bytes, ${check.warnings.length} warnings; ${iterations} calls per row\n`);
  await measure('bare docxtemplater (text + loop, no images)', 1, bareDocxtemplater);
  await measure('annotateDocx in-process', 1, () => annotateDocx({ template, fields }));
  const pool = new WorkerPool({ threads: 4, maxQueue: 100 });
  try {
    const input = (): AnnotateTaskInput => ({ template: new Uint8Array(template), fields });
    for (const concurrency of [1, 4]) {
      await measure('annotate via Piscina pool', concurrency, () => pool.run<AnnotateTaskInput, AnnotateTaskOutput>('annotate', input()));
    }
  } finally {
    await pool.close();
  }
  if (args.url) {
    const body = JSON.stringify({ document: { base64: template.toString('base64') }, fields });
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    if (args.key) headers.authorization = `Bearer ${args.key}`;
    for (const to of args.pdf ? ['docx', 'pdf'] : ['docx']) {
      for (const concurrency of [1, 4]) {
        await measure(`POST ${args.url}/v1/annotate?to=${to}`, concurrency, async () => {
          const response = await fetch(`${args.url}/v1/annotate?to=${to}`, { method: 'POST', headers: { ...headers, accept: to === 'pdf' ? 'application/pdf' : DOCX_CONTENT_TYPE }, body });
          if (!response.ok) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
          await response.arrayBuffer();
        });
      }
    }
  }
}

await main();
