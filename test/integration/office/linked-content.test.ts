import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import PizZip from 'pizzip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { convertDocxToPdf } from '../../../src/documents/docx-pdf/index.js';
import { OfficePool } from '../../../src/office/index.js';
import { corpusDocx, flatText, isPdf } from './pdf-tools.js';

/**
 * A hostile DOCX pointing at remote and local resources in every way Word knows: a DrawingML
 * picture with r:link to a URL and to a local file, a VML image with an external r:id,
 * INCLUDEPICTURE and INCLUDETEXT fields. LibreOffice must fetch none of them.
 */
const REL_IMAGE = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/image';
const DRAWING_NS =
  'xmlns:wp="http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing" xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:pic="http://schemas.openxmlformats.org/drawingml/2006/picture"';

const linkedPicture = (relId: string, id: number) =>
  `<w:p><w:r><w:drawing><wp:inline ${DRAWING_NS}><wp:extent cx="914400" cy="914400"/><wp:docPr id="${id}" name="linked${id}"/>` +
  `<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic>` +
  `<pic:nvPicPr><pic:cNvPr id="${id}" name="linked${id}.png"/><pic:cNvPicPr/></pic:nvPicPr>` +
  `<pic:blipFill><a:blip r:link="${relId}"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill>` +
  `<pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="914400" cy="914400"/></a:xfrm><a:prstGeom prst="rect"/></pic:spPr>` +
  `</pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>`;

const field = (instruction: string) =>
  `<w:p><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText xml:space="preserve"> ${instruction} </w:instrText></w:r>` +
  `<w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>cached result</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>`;

const vmlImage = (relId: string) =>
  `<w:p><w:r><w:pict><v:shape style="width:50pt;height:50pt"><v:imagedata r:id="${relId}" o:title=""/></v:shape></w:pict></w:r></w:p>`;

function hostileDocx(baseUrl: string, localFile: string): Buffer {
  const zip = new PizZip(corpusDocx('pandoc-track_changes_insertion.docx'));
  const body =
    '<w:p><w:r><w:t>Linked content probe</w:t></w:r></w:p>' +
    linkedPicture('rIdRemotePicture', 101) +
    linkedPicture('rIdLocalPicture', 102) +
    linkedPicture('rIdHostnamePicture', 103) +
    vmlImage('rIdRemoteVml') +
    field(`INCLUDEPICTURE "${baseUrl}/includepicture.png" \\d`) +
    field(`INCLUDETEXT "${localFile}"`) +
    field('INCLUDETEXT "/etc/hostname"') +
    field(`INCLUDETEXT "${baseUrl}/includetext.txt"`);
  const document = zip.file('word/document.xml')!.asText().replace('<w:body>', `<w:body>${body}`);
  const relationships = [
    ['rIdRemotePicture', `${baseUrl}/linked.png`],
    ['rIdLocalPicture', `file://${localFile}`],
    ['rIdHostnamePicture', 'file:///etc/hostname'],
    ['rIdRemoteVml', `${baseUrl}/vml.png`],
  ]
    .map(([id, target]) => `<Relationship Id="${id}" Type="${REL_IMAGE}" Target="${target}" TargetMode="External"/>`)
    .join('');
  const rels = zip.file('word/_rels/document.xml.rels')!.asText().replace('</Relationships>', `${relationships}</Relationships>`);
  zip.file('word/document.xml', document);
  zip.file('word/_rels/document.xml.rels', rels);
  return zip.generate({ type: 'nodebuffer', compression: 'DEFLATE' });
}

/**
 * A DOCX whose embedded SVG picture draws local files: an <image> of a local SVG (whose text would
 * come out through pdftotext), a <use> of an element in it, and a CSS @import of it.
 */
function svgDocx(secretSvgPath: string): Buffer {
  const zip = new PizZip(corpusDocx('pandoc-track_changes_insertion.docx'));
  const svg =
    '<?xml version="1.0" encoding="UTF-8"?>' +
    `<?xml-stylesheet href="file://${secretSvgPath}" type="text/css"?>` +
    '<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="600" height="300" viewBox="0 0 600 300">' +
    `<style>@import url("file://${secretSvgPath}");</style>` +
    '<text x="10" y="30" font-size="20">SVG-OWN-TEXT</text>' +
    `<image x="0" y="40" width="600" height="120" xlink:href="file://${secretSvgPath}"/>` +
    `<image x="0" y="160" width="600" height="120" href="file://${secretSvgPath}"/>` +
    `<use xlink:href="file://${secretSvgPath}#secret"/>` +
    '</svg>';
  const picture =
    `<w:p><w:r><w:drawing><wp:inline ${DRAWING_NS}><wp:extent cx="5486400" cy="2743200"/><wp:docPr id="201" name="svg201"/>` +
    `<a:graphic><a:graphicData uri="http://schemas.openxmlformats.org/drawingml/2006/picture"><pic:pic>` +
    `<pic:nvPicPr><pic:cNvPr id="201" name="probe.svg"/><pic:cNvPicPr/></pic:nvPicPr>` +
    `<pic:blipFill><a:blip r:embed="rIdSvgProbe"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill>` +
    `<pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="5486400" cy="2743200"/></a:xfrm><a:prstGeom prst="rect"/></pic:spPr>` +
    `</pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing></w:r></w:p>`;
  zip.file('word/media/probe.svg', svg);
  zip.file('word/document.xml', zip.file('word/document.xml')!.asText().replace('<w:body>', `<w:body><w:p><w:r><w:t>SVG probe</w:t></w:r></w:p>${picture}`));
  zip.file('word/_rels/document.xml.rels', zip.file('word/_rels/document.xml.rels')!.asText().replace('</Relationships>', `<Relationship Id="rIdSvgProbe" Type="${REL_IMAGE}" Target="media/probe.svg"/></Relationships>`));
  const types = zip.file('[Content_Types].xml')!.asText();
  if (!/Extension="svg"/i.test(types)) zip.file('[Content_Types].xml', types.replace('</Types>', '<Default Extension="svg" ContentType="image/svg+xml"/></Types>'));
  return zip.generate({ type: 'nodebuffer', compression: 'DEFLATE' });
}

const SVG_SECRET = 'SVG-SECRET-71c2d9';
const secretSvg = `<svg xmlns="http://www.w3.org/2000/svg" width="600" height="120"><text id="secret" x="10" y="60" font-size="40">${SVG_SECRET}</text></svg>`;

const requests: string[] = [];
const REMOTE_TEXT = 'REMOTE-CONTENT-5be1c0';
const SECRET = 'LOCAL-SECRET-9f3a77e2';
let server: http.Server;
let baseUrl: string;
let secretDir: string;
let pool: OfficePool;

beforeAll(async () => {
  server = http.createServer((req, res) => {
    requests.push(req.url ?? '');
    res.end(REMOTE_TEXT);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  secretDir = await mkdtemp(path.join(os.tmpdir(), 'docproc-linked-test-'));
  await writeFile(path.join(secretDir, 'secret.txt'), SECRET);
  await writeFile(path.join(secretDir, 'secret.svg'), secretSvg);
  pool = new OfficePool({ size: 1 });
  await pool.start();
}, 90_000);

afterAll(async () => {
  await pool?.close();
  await new Promise((resolve) => server?.close(resolve));
  if (secretDir) await rm(secretDir, { recursive: true, force: true });
});

describe('linked and remote content', () => {
  it('is never fetched, and local files never reach the PDF', async () => {
    const docx = hostileDocx(baseUrl, path.join(secretDir, 'secret.txt'));
    const pdf = await convertDocxToPdf(pool, docx);
    // Give a late fetch the chance to show up.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(isPdf(pdf)).toBe(true);
    const text = flatText(pdf);
    expect(text).toContain('Linked content probe');
    expect(requests).toEqual([]);
    expect(text).not.toContain(SECRET);
    expect(text).not.toContain(REMOTE_TEXT);
    const hostname = (await readFile('/etc/hostname', 'utf8').catch(() => '')).trim();
    if (hostname.length >= 6) expect(text).not.toContain(hostname);
  });
});

describe('local files referenced from inside an SVG picture', () => {
  it('the attack is real: unjailed and unscrubbed, LibreOffice draws the local SVG into the PDF', async () => {
    const bare = new OfficePool({ size: 1, jail: false });
    await bare.start();
    try {
      const text = flatText(await bare.convertToPdf(svgDocx(path.join(secretDir, 'secret.svg'))));
      expect(text).toContain('SVG probe');
      expect(text).toContain(SVG_SECRET);
    } finally {
      await bare.close();
    }
  }, 90_000);

  it('scrubbing alone stops it (no jail)', async () => {
    const bare = new OfficePool({ size: 1, jail: false });
    await bare.start();
    try {
      const text = flatText(await convertDocxToPdf(bare, svgDocx(path.join(secretDir, 'secret.svg'))));
      expect(text).toContain('SVG probe');
      expect(text).toContain('SVG-OWN-TEXT');
      expect(text).not.toContain(SVG_SECRET);
    } finally {
      await bare.close();
    }
  }, 90_000);

  it('the jail alone stops it (no scrubbing): the file is not there to read', async () => {
    expect(pool.jail).toBe(true);
    const text = flatText(await pool.convertToPdf(svgDocx(path.join(secretDir, 'secret.svg'))));
    expect(text).toContain('SVG probe');
    expect(text).not.toContain(SVG_SECRET);
  });

  it('the service path (jail and scrubbing) leaks nothing', async () => {
    const text = flatText(await convertDocxToPdf(pool, svgDocx(path.join(secretDir, 'secret.svg'))));
    expect(text).toContain('SVG probe');
    expect(text).not.toContain(SVG_SECRET);
  });
});

describe('path-revealing fields', () => {
  it('FILENAME \\p prints the neutral jail path of the document, never a server path', async () => {
    const zip = new PizZip(corpusDocx('pandoc-track_changes_insertion.docx'));
    const body = '<w:p><w:r><w:t>Path probe:</w:t></w:r></w:p>' + field('FILENAME \\p') + field('FILENAME');
    zip.file('word/document.xml', zip.file('word/document.xml')!.asText().replace('<w:body>', `<w:body>${body}`));
    const text = flatText(await convertDocxToPdf(pool, zip.generate({ type: 'nodebuffer', compression: 'DEFLATE' })));
    expect(text).toContain('Path probe:');
    expect(text).toContain('/document/job/input.docx');
    expect(text).not.toMatch(/\/tmp\/|docproc-office|\/work\//);
  });
});
