import { readFileSync } from 'node:fs';
import path from 'node:path';
import PizZip from 'pizzip';
import { describe, expect, it } from 'vitest';
import { attachedFileMap, normaliseReference } from '../../../src/documents/model/attached-files.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { pdfImages } from '../../support/pdf-inspect.js';
import { useOfficeTestApp } from '../../support/office-test-app.js';

/** Markdown and HTML with the images they refer to, sent as repeated `files` parts (Gotenberg's model). */
const MOON = readFileSync(path.join(CORPUS_DIR, 'md/lalune.jpg'));
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000' + '1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082', 'hex');

const t = useOfficeTestApp('attached-files@example.com');

/** A multipart body with repeated parts (the shared helper keys parts by name). */
function body(parts: { name: string; filename?: string; data: Buffer | string }[]) {
  const boundary = '----docproc-files-test';
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename === undefined ? '' : `; filename="${part.filename}"`}`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${part.filename === undefined ? '' : 'Content-Type: application/octet-stream\r\n'}\r\n`), Buffer.from(part.data), Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

async function convert(parts: Parameters<typeof body>[0], query: string) {
  const { payload, contentType } = body(parts);
  return t.app.inject({ method: 'POST', url: `/v1/convert${query}`, headers: { authorization: `Bearer ${t.key}`, 'content-type': contentType }, payload });
}

const mediaOf = (docx: Buffer) => Object.keys(new PizZip(docx).files).filter((n) => n.startsWith('word/media/'));
const warningsOf = (res: { headers: Record<string, unknown> }) => decodeURIComponent(String(res.headers['x-docproc-warnings'] ?? ''));

describe('Markdown and HTML with their files', () => {
  it('normalises names without touching a file system', () => {
    expect(normaliseReference('./img/moon.jpg')).toBe('img/moon.jpg');
    expect(normaliseReference('img\\moon.jpg')).toBe('img/moon.jpg');
    expect(normaliseReference('img/../moon%20one.jpg?v=2#x')).toBe('moon one.jpg');
    expect(normaliseReference('/moon.jpg')).toBe('moon.jpg');
    expect(normaliseReference('../etc/passwd')).toBeUndefined();
    expect(normaliseReference('file:///etc/passwd')).toBeUndefined();
    expect(normaliseReference('https://example.com/a.png')).toBeUndefined();
    expect(() => attachedFileMap([{ name: 'a.png', data: PNG }, { name: './a.png', data: PNG }])).toThrow(/Two files/);
    expect(() => attachedFileMap(Array.from({ length: 3 }, (_, i) => ({ name: `${i}.png`, data: PNG })), { maxFiles: 2, maxTotalBytes: 1e6 })).toThrow(/At most 2/);
    expect(() => attachedFileMap([{ name: 'a.png', data: MOON }], { maxFiles: 2, maxTotalBytes: 1000 })).toThrow(/add up to more than/);
  });

  it('Markdown → DOCX embeds the images sent as files parts, and warns naming the one not sent', async () => {
    const md = '# Album\n\n![moon](images/moon.jpg)\n\n![dot](./dot.png)\n\n![missing](images/missing.png)\n';
    const res = await convert(
      [
        { name: 'file', filename: 'album.md', data: md },
        { name: 'files', filename: 'images/moon.jpg', data: MOON },
        { name: 'files', filename: 'dot.png', data: PNG },
      ],
      '?to=docx',
    );
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    const media = mediaOf(res.rawPayload);
    expect(media.length).toBe(2);
    const bytes = media.map((m) => Buffer.from(new PizZip(res.rawPayload).file(m)!.asUint8Array()));
    expect(bytes.some((b) => b.equals(MOON))).toBe(true);
    expect(bytes.some((b) => b.equals(PNG))).toBe(true);
    const warnings = warningsOf(res);
    expect(warnings).toContain('images/missing.png');
    expect(warnings).not.toContain('moon.jpg');
  });

  it('HTML → PDF embeds them too (pdfimages sees the photo)', async () => {
    const html = '<html><body><h1>Moon</h1><p><img src="moon.jpg" alt="the moon"></p></body></html>';
    const res = await convert([{ name: 'file', filename: 'page.html', data: html }, { name: 'files', filename: 'moon.jpg', data: MOON }], '');
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    const images = pdfImages(res.rawPayload);
    expect(images.length).toBe(1);
    expect(images[0]!.encoding).toBe('jpeg');
    const without = await convert([{ name: 'file', filename: 'page.html', data: html }], '?to=docx');
    expect(mediaOf(without.rawPayload)).toEqual([]);
    expect(warningsOf(without)).toContain('moon.jpg');
  });

  it('the JSON body takes files: [{name, base64}] the same way, and answers in JSON', async () => {
    const md = '# Album\n\n![moon](images/moon.jpg)\n\n![gone](gone.png)\n';
    const res = await t.app.inject({
      method: 'POST',
      url: '/v1/convert?to=docx',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      payload: { document: { base64: Buffer.from(md).toString('base64') }, filename: 'album.md', files: [{ name: 'images/moon.jpg', base64: MOON.toString('base64') }] },
    });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    const answer = res.json() as { document: { base64: string; contentType: string }; warnings: { code: string; field?: string }[] };
    expect(answer.document.contentType).toBe('application/vnd.openxmlformats-officedocument.wordprocessingml.document');
    const docx = Buffer.from(answer.document.base64, 'base64');
    const media = mediaOf(docx);
    expect(media.length).toBe(1);
    expect(Buffer.from(new PizZip(docx).file(media[0]!)!.asUint8Array()).equals(MOON)).toBe(true);
    expect(answer.warnings).toContainEqual(expect.objectContaining({ code: 'IMAGE_NOT_EMBEDDED', field: 'gone.png' }));
    const escaping = await t.app.inject({
      method: 'POST',
      url: '/v1/convert?to=docx',
      headers: { authorization: `Bearer ${t.key}`, 'content-type': 'application/json' },
      payload: { document: { base64: Buffer.from('![x](../secret.png)').toString('base64') }, filename: 'a.md', files: [{ name: '../secret.png', base64: PNG.toString('base64') }] },
    });
    expect(escaping.statusCode).toBe(400);
  });

  it('refuses files with a document that is not Markdown or HTML, clashing names and too many files', async () => {
    const docx = readFileSync(path.join(CORPUS_DIR, 'docx/pandoc-tables.docx'));
    const notMarkup = await convert([{ name: 'file', filename: 't.docx', data: docx }, { name: 'files', filename: 'a.png', data: PNG }], '');
    expect(notMarkup.statusCode).toBe(400);
    const clash = await convert([{ name: 'file', filename: 'a.md', data: '![x](a.png)' }, { name: 'files', filename: 'a.png', data: PNG }, { name: 'files', filename: './a.png', data: PNG }], '?to=docx');
    expect(clash.statusCode).toBe(400);
    const many = await convert([{ name: 'file', filename: 'a.md', data: '# x' }, ...Array.from({ length: 33 }, (_, i) => ({ name: 'files', filename: `${i}.png`, data: PNG }))], '?to=docx');
    expect(many.statusCode).toBe(400);
    expect(many.json().details?.[0]?.field ?? many.body).toMatch(/files/);
    const tooBig = await convert([{ name: 'file', filename: 'a.md', data: '# x' }, ...Array.from({ length: 17 }, (_, i) => ({ name: 'files', filename: `${i}.bin`, data: Buffer.alloc(700 * 1024, i) }))], '?to=docx');
    expect(tooBig.statusCode).toBe(413);
  });
});
