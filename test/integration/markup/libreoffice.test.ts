import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { htmlToDocx } from '../../../src/documents/html/index.js';
import { markdownToDocx } from '../../../src/documents/markdown/index.js';
import { CORPUS_DIR } from '../../support/corpus.js';

/** Our DOCX must open in LibreOffice without repair: render to PDF and read the text back. */
const limits = { maxBytes: 20 * 1024 * 1024, maxNestingDepth: 64 };

describe('markup output renders in LibreOffice', () => {
  let work: string;

  beforeAll(() => {
    work = mkdtempSync(join(tmpdir(), 'markup-lo-'));
  });

  afterAll(() => {
    rmSync(work, { recursive: true, force: true });
  });

  it('converts Markdown and HTML outputs to PDF with their text', async () => {
    const md = await markdownToDocx(readFileSync(`${CORPUS_DIR}/md/pandoc-testsuite.md`), { limits });
    const tables = await markdownToDocx(readFileSync(`${CORPUS_DIR}/md/pandoc-pipe-tables.md`), { limits });
    const html = await htmlToDocx(readFileSync(`${CORPUS_DIR}/html/pandoc-html-reader.html`), { limits });
    const images = await htmlToDocx(readFileSync(`${CORPUS_DIR}/html/pandoc-images-embedded.html`), { limits });
    writeFileSync(join(work, 'testsuite.docx'), md.docx);
    writeFileSync(join(work, 'tables.docx'), tables.docx);
    writeFileSync(join(work, 'reader.docx'), html.docx);
    writeFileSync(join(work, 'images.docx'), images.docx);
    execFileSync('soffice', [
      `-env:UserInstallation=file://${work}/profile`, '--headless', '--convert-to', 'pdf', '--outdir', work,
      join(work, 'testsuite.docx'), join(work, 'tables.docx'), join(work, 'reader.docx'), join(work, 'images.docx'),
    ], { timeout: 180_000, stdio: 'ignore' });
    const text = (name: string) => execFileSync('pdftotext', ['-layout', join(work, `${name}.pdf`), '-']).toString('utf8');

    const suite = text('testsuite');
    expect(suite).toContain('Level 2 with an embedded link');
    expect(suite).toContain('This is a block quote');
    expect(suite).toMatch(/sub status \{/);
    expect(suite).toMatch(/Here is a footnote reference/);
    expect(text('tables')).toMatch(/Right\s+Left\s+Default\s+Center/);
    const reader = text('reader');
    expect(reader).toContain('Tables with Headers');
    expect(reader).toContain('Violoncello');
    expect(execFileSync('pdfinfo', [join(work, 'images.pdf')]).toString()).toMatch(/Pages:\s+\d+/);
  }, 240_000);
});
