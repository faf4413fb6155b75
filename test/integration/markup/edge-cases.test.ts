import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { WorkerPool } from '../../../src/compute/worker-pool.js';
import { markdownToDocx } from '../../../src/documents/markdown/index.js';
import PizZip from 'pizzip';
import { CORPUS_DIR } from '../../support/corpus.js';
import { answering } from '../../support/domain-error.js';

const limits = { maxBytes: 16 * 1024 * 1024, maxNestingDepth: 64 };

describe('markup edge cases', () => {
  const pool = new WorkerPool({ threads: 1, maxQueue: 4 });
  afterAll(() => pool.close());

  // micromark parses ~100-300 KB/s on this machine, so the default run uses 2 MB; set
  // MARKUP_BIG_MB=10 to measure the 10 MB case (slow: minutes on a loaded 2-core box).
  const megabytes = Number(process.env.MARKUP_BIG_MB ?? 2);
  it(`converts ${megabytes} MB of Markdown in time proportional to its size`, async () => {
    const prose = readFileSync(`${CORPUS_DIR}/md/pandoc-writer.md`, 'utf8').replace(/^---[\s\S]*?\n---\n/, '');
    const source = Buffer.from(prose.repeat(Math.ceil((megabytes * 1024 * 1024) / prose.length)), 'utf8');
    const started = performance.now();
    const { docx } = await markdownToDocx(source, { limits });
    const seconds = (performance.now() - started) / 1000;
    console.log(`${megabytes} MB Markdown → DOCX: ${seconds.toFixed(1)} s, ${(docx.length / 1e6).toFixed(1)} MB`);
    expect(seconds).toBeLessThan(60 * megabytes);
    const xml = new PizZip(docx).file('word/document.xml')!.asText();
    expect((xml.match(/w:val="Heading1"/g) ?? []).length).toBeGreaterThan(100);
  }, 1_000_000);

  it('converts a 5 000-row table with one repeating header row', async () => {
    const rows = Array.from({ length: 5000 }, (_, i) => `| ${i} | row ${i} |`).join('\n');
    const { docx } = await markdownToDocx(Buffer.from(`| n | text |\n|--:|---|\n${rows}\n`), { limits });
    const xml = new PizZip(docx).file('word/document.xml')!.asText();
    expect((xml.match(/<w:tr>/g) ?? []).length).toBe(5001);
    expect((xml.match(/<w:tblHeader\/>/g) ?? []).length).toBe(1);
    expect(xml).toContain('row 4999');
  });

  it('runs as worker tasks and carries typed errors across the thread boundary', async () => {
    const out = await pool.run<unknown, { docx: Uint8Array; warnings: { message: string }[] }>('markdownToDocx', {
      source: new TextEncoder().encode('# Hi\n\n![x](movie.jpg)'), limits,
    });
    expect(Buffer.from(out.docx).subarray(0, 2).toString('latin1')).toBe('PK');
    expect(out.warnings.map((w) => w.message).join(' ')).toContain('movie.jpg');
    const html = await pool.run<unknown, { docx: Uint8Array }>('htmlToDocx', { source: new TextEncoder().encode('<p>x</p>'), limits });
    expect(html.docx.byteLength).toBeGreaterThan(1000);
    await expect(pool.run('htmlToDocx', { source: new TextEncoder().encode('<div>'.repeat(500)), limits }))
      .rejects.toMatchObject(answering(422, 'DOCUMENT_TOO_COMPLEX'));
  });
});
