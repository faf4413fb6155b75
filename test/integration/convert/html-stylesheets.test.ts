import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { pdfText } from '../../support/pdf-text.js';
import { useOfficeTestApp } from '../../support/office-test-app.js';

/**
 * An HTML page whose styling is in a stylesheet sent as a `files` part: the PDF docproc makes shows
 * it (bold font, red text fill read from the PDF with pdffonts and qpdf), as LibreOffice's own HTML
 * import shows the same page with the stylesheet inline — the independent reading of what the CSS
 * means — and without the stylesheet neither is there.
 */
const t = useOfficeTestApp('html-stylesheets@example.com');

function body(parts: { name: string; filename: string; data: string }[]) {
  const boundary = '----docproc-css-test';
  const chunks = parts.map((p) => `--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"; filename="${p.filename}"\r\nContent-Type: application/octet-stream\r\n\r\n${p.data}\r\n`);
  return { payload: Buffer.from(`${chunks.join('')}--${boundary}--\r\n`), contentType: `multipart/form-data; boundary=${boundary}` };
}

const CSS = '.alert { color: #ff0000; font-weight: bold } p.quiet { font-style: italic }';
const page = (head: string) =>
  `<!DOCTYPE html><html><head><title>Styles</title>${head}</head><body><p>Ordinary words here.</p><p class="alert">Warning words here.</p><div><p class="quiet">Quiet words here.</p></div></body></html>`;

/** Fonts the PDF uses and whether some text is painted pure red (the `1 0 0 rg` fill operator). */
function rendering(pdf: Buffer) {
  const fonts = execFileSync('pdffonts', ['-'], { input: pdf }).toString('utf8');
  const dir = mkdtempSync(path.join(tmpdir(), 'css-pdf-'));
  let content: string;
  try {
    writeFileSync(path.join(dir, 'in.pdf'), pdf);
    content = execFileSync('qpdf', ['--qdf', '--object-streams=disable', path.join(dir, 'in.pdf'), '-']).toString('latin1');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return { bold: /Bold(?!Italic)/.test(fonts), italic: /Italic/.test(fonts), red: /(^|\s)1 0 0 rg\b/m.test(content) };
}

describe('HTML → PDF with a stylesheet sent as a file', () => {
  it('shows the stylesheet’s bold, colour and italics, as LibreOffice’s own HTML import does (LibreOffice 7.4 did not apply `div p.quiet`: descendant selectors are checked in the unit tests)', async () => {
    const { payload, contentType } = body([
      { name: 'file', filename: 'page.html', data: page('<link rel="stylesheet" href="styles/site.css">') },
      { name: 'files', filename: 'site.css', data: CSS },
    ]);
    const res = await t.app.inject({ method: 'POST', url: '/v1/convert?to=pdf', headers: { authorization: `Bearer ${t.key}`, 'content-type': contentType }, payload });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect(pdfText(res.rawPayload)).toContain('Warning words here.');
    const ours = rendering(res.rawPayload);

    // The oracle: LibreOffice Writer's HTML import of the same page, the stylesheet written inline.
    const inline = Buffer.from(page(`<style>${CSS}</style>`));
    const theirs = rendering(await t.app.services.office!.convertToPdf(inline, { loadFilter: 'HTML (StarWriter)', application: 'writer', inputExtension: 'html' }));
    expect(theirs).toEqual({ bold: true, italic: true, red: true });
    expect(ours).toEqual(theirs);

    // Control: without the file the page has none of it, and a warning names the stylesheet.
    const bare = body([{ name: 'file', filename: 'page.html', data: page('<link rel="stylesheet" href="styles/site.css">') }]);
    const without = await t.app.inject({ method: 'POST', url: '/v1/convert?to=pdf', headers: { authorization: `Bearer ${t.key}`, 'content-type': bare.contentType }, payload: bare.payload });
    expect(without.statusCode).toBe(200);
    expect(rendering(without.rawPayload)).toEqual({ bold: false, italic: false, red: false });
    expect(decodeURIComponent(String(without.headers['x-docproc-warnings'] ?? ''))).toMatch(/Stylesheet "styles\/site\.css" refers to the file "styles\/site\.css", which was not sent/);
  }, 120_000);
});
