import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { htmlToDocx } from '../../../src/documents/html/index.js';
import { markdownToDocx } from '../../../src/documents/markdown/index.js';
import type { RemoteImage, RemoteImageSource } from '../../../src/documents/model/types.js';
import { dataUri, limits, part, partNames, png } from './helpers.js';

/**
 * The markup engines take their http(s) images from the RemoteImageSource the operation gives them
 * (src/operations/convert.ts, under src/inputs/remote-inputs.ts) and never reach the network
 * themselves: a live server on loopback sees no request, whatever the document asks for.
 */
let server: Server;
let base: string;
const hits: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    hits.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'image/png' }).end(png(3, 3));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A source answering from a table, recording what it was asked (the operation's side of the interface). */
function source(answers: Record<string, RemoteImage>): RemoteImageSource & { asked: string[][] } {
  const asked: string[][] = [];
  return {
    asked,
    fetch: async (urls) => {
      asked.push(urls);
      return urls.map((url) => answers[url] ?? { refused: 'Not in the table.' });
    },
  };
}

describe('remote images in Markdown/HTML come from the operation, never from the engine', () => {
  it('asks once for every http(s) image (no repeats, in order), embeds the bytes it gets, and names a refusal', async () => {
    const a = `${base}/a.png`;
    const b = `${base}/b.png`;
    const remote = source({ [a]: { bytes: png(40, 20) }, [b]: { refused: 'The host is not allowed for images (REMOTE_IMAGE_HOSTS).' } });
    const md = `![A](${a}) ![B](${b}) ![A again](${a}) ![inline](${dataUri(png(2, 2))}) ![local](pic.png)\n\n<p><img src="${a}" alt="html A"></p>\n`;
    const { docx, warnings } = await markdownToDocx(Buffer.from(md), { limits, remoteImages: remote });
    expect(remote.asked).toEqual([[a, b]]);
    expect(hits).toEqual([]);
    const xml = part(docx, 'word/document.xml');
    expect(xml).toContain('<wp:extent cx="381000" cy="190500"/>'); // A at 40×20 px
    expect(partNames(docx).filter((name) => name.startsWith('word/media/'))).toHaveLength(4); // A three times, the data: image
    expect(warnings).toContainEqual({ code: 'IMAGE_NOT_EMBEDDED', field: b, message: `Remote image "${b}" was not fetched (the host is not allowed for images (REMOTE_IMAGE_HOSTS)); its alt text was used instead.` });
    expect(xml).toContain('B');
  });

  it('without a source nothing is fetched: every http(s) image is its alt text, with a warning', async () => {
    const url = `${base}/logo.png`;
    const md = await markdownToDocx(Buffer.from(`![Logo](${url})\n`), { limits });
    const html = await htmlToDocx(Buffer.from(`<p><img src="${url}" alt="Logo"><img srcset="${base}/x.png 2x" alt="x"></p>`), { limits });
    for (const { docx, warnings } of [md, html]) {
      expect(part(docx, 'word/document.xml')).not.toContain('<w:drawing>');
      expect(warnings.some((w) => w.code === 'IMAGE_NOT_EMBEDDED' && w.field === url && /was not fetched/.test(w.message))).toBe(true);
    }
    expect(hits).toEqual([]);
  });

  it('HTML asks the same way (srcset and lazy-loading sources included)', async () => {
    const real = `${base}/real.png`;
    const remote = source({ [real]: { bytes: png(8, 4) } });
    const { docx, warnings } = await htmlToDocx(Buffer.from(`<p><img src="${dataUri(png(1, 1))}" data-src="${real}" alt="lazy"></p>`), { limits, remoteImages: remote });
    expect(remote.asked).toEqual([[real]]);
    expect(warnings).toEqual([]);
    expect(part(docx, 'word/document.xml')).toContain('<wp:extent cx="76200" cy="38100"/>');
    expect(hits).toEqual([]);
  });
});
