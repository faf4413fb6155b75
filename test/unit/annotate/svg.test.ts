import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import PizZip from 'pizzip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { annotateDocx, loadSvgRenderer, SVG_LIMITS } from '../../../src/documents/annotate/index.js';
import { inlineDrawingXml } from '../../../src/documents/annotate/drawing.js';
import { buildDocx, listParts, para, pngImage, readPart, sdt } from '../../support/annotate/docx-builder.js';
import { rejection } from '../../support/domain-error.js';
import { httpStatusOf } from '../../../src/http/error-status.js';

const EMU = 9525;
const redBox = (width = 120, height = 60, extra = '') =>
  `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}"><rect width="${width}" height="${height}" fill="#d00000"/>${extra}</svg>`;

let server: Server;
let serverHits = 0;

beforeAll(async () => {
  await loadSvgRenderer();
  server = createServer((_req, res) => {
    serverHits++;
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});


function pngSize(png: Buffer) {
  expect(png.subarray(1, 4).toString('latin1')).toBe('PNG');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

function relTarget(rels: string, rId: string): string {
  const match = new RegExp(`<Relationship Id="${rId}"[^>]*Target="([^"]+)"`).exec(rels) ?? new RegExp(`<Relationship[^>]*Target="([^"]+)"[^>]*Id="${rId}"`).exec(rels);
  expect(match, `relationship ${rId}`).not.toBeNull();
  return match![1];
}

describe('annotate: SVG images with a PNG fallback', () => {
  it('embeds the SVG beside a PNG fallback drawn at twice its size, referenced through asvg:svgBlip', () => {
    const svg = Buffer.from(redBox());
    const { docx } = annotateDocx({ template: buildDocx({ body: para('Logo: {%logo}') }), fields: [{ id: 'logo', type: 'image', value: svg.toString('base64') }] });
    const body = readPart(docx, 'word/document.xml');
    expect(body).toContain(`<wp:extent cx="${120 * EMU}" cy="${60 * EMU}"/>`);
    const blip = /<a:blip [^>]*r:embed="([^"]+)">([\s\S]*?)<\/a:blip>/.exec(body)!;
    expect(blip).not.toBeNull();
    expect(blip[2]).toContain('uri="{96DAC541-7B7A-43D3-8B79-37D633B846F1}"');
    const svgRId = /<asvg:svgBlip [^>]*r:embed="([^"]+)"/.exec(blip[2])![1];

    const rels = readPart(docx, 'word/_rels/document.xml.rels');
    const zip = new PizZip(docx);
    const png = zip.file(`word/${relTarget(rels, blip[1])}`)!.asNodeBuffer();
    expect(pngSize(png)).toEqual({ width: 240, height: 120 });
    expect(zip.file(`word/${relTarget(rels, svgRId)}`)!.asNodeBuffer().equals(svg)).toBe(true);
    expect(listParts(docx).filter((p) => p.startsWith('word/media/')).sort()).toEqual(['word/media/docproc-annotate-1.png', 'word/media/docproc-annotate-2.svg']);
    const types = readPart(docx, '[Content_Types].xml');
    expect(types).toContain('Extension="svg" ContentType="image/svg+xml"');
    expect(types).toContain('Extension="png" ContentType="image/png"');
  });

  it('reads an inline (percent-encoded) SVG data: URI and sizes it from dimensions', () => {
    const value = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(redBox(50, 100, '<text x="2" y="50" font-size="12">Ünï</text>'))}`;
    const { docx } = annotateDocx({ template: buildDocx({ body: para('{%logo}') }), fields: [{ id: 'logo', type: 'image', value, options: { dimensions: { height: 40 } } }] });
    expect(readPart(docx, 'word/document.xml')).toContain(`<wp:extent cx="${20 * EMU}" cy="${40 * EMU}"/>`);
    const svgPart = listParts(docx).find((p) => p.endsWith('.svg'))!;
    expect(new PizZip(docx).file(svgPart)!.asText()).toContain('Ünï');
  });

  it('caps the fallback raster of a huge SVG and never fetches what the SVG references', () => {
    const { port } = server.address() as AddressInfo;
    const refs = `<image href="http://127.0.0.1:${port}/tracker.png" width="10" height="10"/><image href="/etc/hostname" width="10" height="10"/><image href="file:///etc/passwd" width="10" height="10"/>`;
    const { docx } = annotateDocx({ template: buildDocx({ body: para('{%big}') }), fields: [{ id: 'big', type: 'image', value: Buffer.from(redBox(8000, 2000, refs)).toString('base64') }] });
    const png = new PizZip(docx).file('word/media/docproc-annotate-1.png')!.asNodeBuffer();
    expect(pngSize(png)).toEqual({ width: SVG_LIMITS.maxRasterSide, height: SVG_LIMITS.maxRasterSide / 4 });
    expect(serverHits).toBe(0);
  });

  it('swaps a picture content control to the SVG, replacing the SVG extension of the template picture', () => {
    const oldPicture = inlineDrawingXml({ rId: 'rIdOld', svgRId: 'rIdOldSvg' }, { cx: 100 * EMU, cy: 100 * EMU }, 7, 'Picture');
    const template = buildDocx({ body: `<w:p>${sdt('photo', `<w:r>${oldPicture}</w:r>`)}</w:p>` });
    const { docx } = annotateDocx({ template, fields: [{ id: 'photo', type: 'image', value: Buffer.from(redBox()).toString('base64') }] });
    const body = readPart(docx, 'word/document.xml');
    expect(body).toContain(`<wp:extent cx="${100 * EMU}" cy="${50 * EMU}"/>`);
    expect(body).not.toContain('rIdOld');
    expect(body.match(/<asvg:svgBlip /g)).toHaveLength(1);
    const svgRId = /<asvg:svgBlip [^>]*r:embed="([^"]+)"/.exec(body)![1];
    expect(relTarget(readPart(docx, 'word/_rels/document.xml.rels'), svgRId)).toMatch(/\.svg$/);
  });

  it('draws an SVG signature as a picture in the signature block', () => {
    const { docx } = annotateDocx({ template: buildDocx({ body: para('{%sig}') }), fields: [{ id: 'sig', type: 'signature', value: `data:image/svg+xml;base64,${Buffer.from(redBox(300, 100)).toString('base64')}`, options: { dimensions: { width: 150 } } }] });
    const body = readPart(docx, 'word/document.xml');
    expect(body).toContain(`<wp:extent cx="${150 * EMU}" cy="${50 * EMU}"/>`);
    expect(body).toContain('<asvg:svgBlip ');
  });

  it('refuses broken, sizeless and oversized SVGs with 4xx naming the field', () => {
    const template = buildDocx({ body: para('{%a}') });
    const attempt = (svg: string) => rejection(() => annotateDocx({ template, fields: [{ id: 'a', type: 'image', value: Buffer.from(svg).toString('base64') }] }));
    const broken = attempt('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"><rect></svg>');
    expect(httpStatusOf(broken)).toBe(400);
    expect(broken.message).toMatch(/fields\[0\].*SVG/);
    const sizeless = attempt('<svg xmlns="http://www.w3.org/2000/svg" width="0" height="0"></svg>');
    expect(httpStatusOf(sizeless)).toBe(400);
    const huge = attempt(redBox(10, 10, `<!--${'x'.repeat(SVG_LIMITS.maxBytes)}-->`));
    expect(httpStatusOf(huge)).toBe(413);
  });

  it('refuses pixel bombs embedded in the SVG, also inside a nested SVG, before rendering', () => {
    const template = buildDocx({ body: para('{%a}') });
    const attempt = (svg: string) => rejection(() => annotateDocx({ template, fields: [{ id: 'a', type: 'image', value: Buffer.from(svg).toString('base64') }] }));
    // A PNG header claiming 10000×10000 pixels: only the header is needed to refuse it.
    const bomb = pngImage(1, 1);
    bomb.writeUInt32BE(10_000, 16);
    bomb.writeUInt32BE(10_000, 20);
    const embed = (bytes: Buffer, type: string) => `<image width="10" height="10" href="data:${type};base64,${bytes.toString('base64')}"/>`;
    const direct = attempt(redBox(10, 10, embed(bomb, 'image/png')));
    expect(httpStatusOf(direct)).toBe(413);
    expect(direct.message).toContain('10000×10000');
    const nested = attempt(redBox(10, 10, embed(Buffer.from(redBox(5, 5, embed(bomb, 'image/png'))), 'image/svg+xml')));
    expect(httpStatusOf(nested)).toBe(413);
    // A small embedded raster is fine and drawn into the fallback.
    const { docx } = annotateDocx({ template, fields: [{ id: 'a', type: 'image', value: Buffer.from(redBox(10, 10, embed(pngImage(4, 4), 'image/png'))).toString('base64') }] });
    expect(listParts(docx)).toContain('word/media/docproc-annotate-2.svg');
  });
});
