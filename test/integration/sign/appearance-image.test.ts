import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { crc32, deflateSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { generateApiKey, hashApiKey } from '../../../src/accounts/api-keys.js';
import { PdfView } from '../../../src/documents/pdf/document.js';
import { PdfStream, isName } from '../../../src/documents/pdf/objects.js';
import { findSignatureFields } from '../../../src/documents/pdf/structure.js';
import { imagePlacement } from '../../../src/documents/sign/pdf/appearance.js';
import { signPdfReport } from '../../../src/documents/sign/sign-pdf.js';
import type { SignRequest } from '../../../src/documents/sign/types.js';
import { verifyPdf } from '../../../src/documents/verify/verify-pdf.js';
import type { Services } from '../../../src/services.js';
import { multipartBody } from '../../support/annotate/multipart.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { answering } from '../../support/domain-error.js';
import { buildTestApp } from '../../support/test-app.js';
import { createTestPki, pdfsig, type TestPki } from './pki.js';

/**
 * appearance.image: a PNG (with transparency) or JPEG drawn in the visible signature box left of
 * the text. Judged by poppler: pdfimages lists the image on the page (from the widget's
 * appearance), pdftoppm renders the image's colour where the image was placed; the limits refuse
 * before anything is decoded.
 */
const UNSIGNED = readFileSync(path.join(CORPUS_DIR, 'pdf-unsigned/signpdf-w3dummy.pdf'));
const JPEG = readFileSync(path.join(CORPUS_DIR, 'md/lalune.jpg'));
const BOX = { page: 1, x: 60, y: 60, width: 300, height: 90 };
const DPI = 72; // one pixel per point: pixel (x, height - y) is PDF point (x, y)

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** An RGBA PNG (8 bits); `idat` replaces the pixel data when given. */
function png(width: number, height: number, pixel: (x: number, y: number) => number[], idat?: Buffer): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8;
  ihdr[9] = 6;
  let data = idat;
  if (!data) {
    const rows = Buffer.alloc((width * 4 + 1) * height);
    for (let y = 0; y < height; y++) for (let x = 0; x < width; x++) Buffer.from(pixel(x, y)).copy(rows, y * (width * 4 + 1) + 1 + x * 4);
    data = deflateSync(rows);
  }
  return Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), pngChunk('IHDR', ihdr), pngChunk('IDAT', data), pngChunk('IEND', Buffer.alloc(0))]);
}

/** Red, opaque on the left half and half transparent on the right half. */
const RED_PNG = png(80, 40, (x) => [220, 20, 20, x < 40 ? 255 : 128]);

const request = (appearance: SignRequest['appearance']): SignRequest => ({
  signer: { name: 'Ivy Image', email: 'ivy@example.com' },
  auditTrail: [{ type: 'submit', timestamp: '2025-03-01T09:01:00Z' }],
  certificate: { enabled: false },
  appearance,
});

let pki: TestPki;
beforeAll(() => {
  pki = createTestPki();
});
afterAll(() => pki?.cleanup());

function tool(name: string, args: string[], pdf: Buffer): Buffer {
  const file = path.join(pki.dir, `image-${process.hrtime.bigint()}.pdf`);
  writeFileSync(file, pdf);
  try {
    return execFileSync(name, [...args, file], { stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 64 * 1024 * 1024 });
  } finally {
    rmSync(file, { force: true });
  }
}

/** pdfimages -list rows: [page, type, width, height, color, enc]. */
const imagesListed = (pdf: Buffer) => tool('pdfimages', ['-list'], pdf).toString('latin1').split('\n').slice(2).filter(Boolean)
  .map((line) => line.trim().split(/\s+/)).map((c) => [Number(c[0]), c[2], Number(c[3]), Number(c[4]), c[5], c[8]]);

/** Page 1 rendered by pdftoppm at 72 dpi as RGB pixels (PPM). */
function render(pdf: Buffer): { width: number; height: number; rgb: (x: number, y: number) => [number, number, number] } {
  const ppm = tool('pdftoppm', ['-r', String(DPI), '-f', '1', '-l', '1'], pdf);
  const header = /^P6\s+(\d+)\s+(\d+)\s+255\s/.exec(ppm.toString('latin1', 0, 40))!;
  const [width, height] = [Number(header[1]), Number(header[2])];
  const start = header[0].length;
  return { width, height, rgb: (x, y) => [...ppm.subarray(start + (y * width + x) * 3, start + (y * width + x) * 3 + 3)] as [number, number, number] };
}

/** Mean colour of PDF-point rectangle [x, y, w, h] on page 1 (page height from the render). */
function meanColour(pdf: Buffer, area: { x: number; y: number; width: number; height: number }): [number, number, number] {
  const page = render(pdf);
  const sum = [0, 0, 0];
  let n = 0;
  for (let px = Math.ceil(area.x + 1); px < area.x + area.width - 1; px++) {
    for (let py = Math.ceil(page.height - area.y - area.height + 1); py < page.height - area.y - 1; py++) {
      page.rgb(px, py).forEach((v, i) => (sum[i]! += v));
      n++;
    }
  }
  return sum.map((v) => v / n) as [number, number, number];
}

/** The image XObject named in the signature widget's normal appearance. */
function widgetImage(pdf: Buffer): PdfStream | undefined {
  const view = new PdfView(pdf, pdf.length);
  const widget = findSignatureFields(view)[0]!.field;
  const appearance = view.resolve(view.dict(widget.get('AP'))?.get('N'));
  if (!(appearance instanceof PdfStream)) return undefined;
  const image = view.resolve(view.dict(view.dict(appearance.dict.get('Resources'))?.get('XObject'))?.get('Im1'));
  return image instanceof PdfStream && isName(image.dict.get('Subtype'), 'Image') ? image : undefined;
}

/** Where the image lands inside BOX, in page points. */
function placed(image: { width: number; height: number }) {
  const inBox = imagePlacement({ name: 'Im1', ...image }, BOX.width, BOX.height, 4);
  return { x: BOX.x + inBox.x, y: BOX.y + inBox.y, width: inBox.width, height: inBox.height };
}

describe('appearance.image (engine)', () => {
  it('PNG with transparency: pdfimages lists it and its soft mask on page 1, from the widget appearance; pdftoppm shows red there; signature valid', async () => {
    const { document: out, warnings } = await signPdfReport(UNSIGNED, request({ ...BOX, image: RED_PNG }), pki.rsa);
    expect(warnings).toEqual([]);
    expect(imagesListed(out)).toEqual(expect.arrayContaining([[1, 'image', 80, 40, 'rgb', 'image'], [1, 'smask', 80, 40, 'gray', 'image']]));
    expect(widgetImage(out)?.dict.get('Width')).toBe(80);

    const area = placed({ width: 80, height: 40 });
    const opaqueHalf = { ...area, width: area.width / 2 };
    const [r, g, b] = meanColour(out, opaqueHalf);
    expect(r).toBeGreaterThan(180);
    expect(g).toBeLessThan(60);
    expect(b).toBeLessThan(60);
    const [, g2] = meanColour(out, { ...area, x: area.x + area.width / 2, width: area.width / 2 });
    expect(g2, 'the half-transparent half is lighter: the soft mask is applied').toBeGreaterThan(90);
    // Without the image the same place is white: the colour is the image's.
    const { document: plain } = await signPdfReport(UNSIGNED, request({ ...BOX }), pki.rsa);
    expect(meanColour(plain, opaqueHalf)[1]).toBeGreaterThan(240);

    expect(pdfsig(pki, out)).toMatchObject([{ valid: true, total: true }]);
    expect(verifyPdf(out, { trustRoots: [pki.rootPem] }).signatures.map((s) => s.indication)).toEqual(['TOTAL_PASSED']);
  });

  it('JPEG: embedded as it is (DCT), drawn where placed (the render there is not blank)', async () => {
    const { document: out } = await signPdfReport(UNSIGNED, request({ ...BOX, image: JPEG }), pki.rsa);
    expect(imagesListed(out)).toEqual(expect.arrayContaining([[1, 'image', 250, 250, 'rgb', 'jpeg']]));
    expect(widgetImage(out)?.dict.get('Filter')).toMatchObject({ name: 'DCTDecode' });
    const colour = meanColour(out, placed({ width: 250, height: 250 }));
    expect(Math.min(...colour), 'not white').toBeLessThan(200);
  });

  it('refuses before decoding: over 1 MB (413), over 4 megapixels by its header (422), more pixel data than the header says (422), not PNG/JPEG (400)', async () => {
    const sign = (image: Buffer) => signPdfReport(UNSIGNED, request({ ...BOX, image }), pki.rsa);
    await expect(sign(Buffer.concat([JPEG, Buffer.alloc(1024 * 1024)]))).rejects.toEqual(answering(413, 'FILE_TOO_LARGE'));
    // A header announcing 3000 × 3000 with 1 row of data: refused by the header alone.
    await expect(sign(png(3000, 3000, () => [0, 0, 0, 0], deflateSync(Buffer.alloc(10))))).rejects.toEqual(answering(422, 'DOCUMENT_TOO_COMPLEX'));
    // 10 × 10 announced, 50 MB of zeros inflated from ~50 KB: stopped by the bounded inflate.
    await expect(sign(png(10, 10, () => [0, 0, 0, 0], deflateSync(Buffer.alloc(50 * 1024 * 1024))))).rejects.toEqual(answering(422, 'DOCUMENT_TOO_COMPLEX'));
    const gif = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
    await expect(sign(gif)).rejects.toEqual(answering(400, 'INVALID_FILE_FORMAT'));
    await expect(sign(Buffer.from('not an image'))).rejects.toEqual(answering(400, undefined));
    await expect(sign(png(10, 10, () => [0, 0, 0, 0], Buffer.from('not zlib data')))).rejects.toEqual(answering(400, undefined));
  });
});

describe('POST /v1/sign appearance.image (JSON base64, multipart file part)', () => {
  let app: FastifyInstance;
  let key: string;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'docproc-sign-image-'));
    const pepper = 'sign-image-pepper-0123456789abcdef';
    ({ app } = await buildTestApp({ REDIS_URL: inject('redisUrl'), API_KEY_PEPPER: pepper, RATE_LIMIT_MAX: '1000', DATA_DIR: path.join(dir, 'data') }));
    key = generateApiKey();
    const services = (app as unknown as { services: Services }).services;
    // A loaded machine can take seconds to connect to Redis.
    if (!(await services.store.connected(30_000))) throw new Error('the key store (Redis) did not connect');
    await services.store.putApiKey(hashApiKey(key, pepper), { email: 'sign-image@example.com', createdAt: new Date().toISOString() });
  });
  afterAll(async () => {
    await app?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const signer = JSON.stringify({ name: 'Ivy Image', email: 'ivy@example.com' });
  const auditTrail = JSON.stringify([{ type: 'submit', timestamp: '2025-03-01T09:01:00Z' }]);

  it('JSON: appearance.image as base64 is drawn (pdfimages)', async () => {
    const res = await app.inject({
      method: 'POST', url: '/v1/sign', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/pdf' },
      payload: JSON.stringify({ document: { base64: UNSIGNED.toString('base64') }, signer: JSON.parse(signer), auditTrail: JSON.parse(auditTrail), appearance: { ...BOX, image: RED_PNG.toString('base64') } }),
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(imagesListed(res.rawPayload)).toEqual(expect.arrayContaining([[1, 'image', 80, 40, 'rgb', 'image']]));
  });

  it('multipart: the appearanceImage file part is drawn; without an appearance part it is a 400', async () => {
    const parts = [
      { name: 'file', value: UNSIGNED, filename: 'contract.pdf', contentType: 'application/pdf' },
      { name: 'signer', value: signer },
      { name: 'auditTrail', value: auditTrail },
      { name: 'appearanceImage', value: JPEG, filename: 'signature.jpg', contentType: 'image/jpeg' },
    ];
    const post = (body: typeof parts) => {
      const { payload, headers } = multipartBody(body);
      return app.inject({ method: 'POST', url: '/v1/sign', headers: { authorization: `Bearer ${key}`, accept: 'application/pdf', ...headers }, payload });
    };
    const ok = await post([...parts, { name: 'appearance', value: JSON.stringify(BOX) }]);
    expect(ok.statusCode, ok.body).toBe(200);
    expect(imagesListed(ok.rawPayload)).toEqual(expect.arrayContaining([[1, 'image', 250, 250, 'rgb', 'jpeg']]));
    const missing = await post(parts);
    expect(missing.statusCode).toBe(400);
    expect(missing.json().detail ?? missing.body).toMatch(/appearanceImage part needs an `appearance` part/);
  });

  it('JSON: base64 over 1 MB is refused before decoding (413)', async () => {
    const res = await app.inject({
      method: 'POST', url: '/v1/sign', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ document: { base64: UNSIGNED.toString('base64') }, signer: JSON.parse(signer), auditTrail: JSON.parse(auditTrail), appearance: { ...BOX, image: 'A'.repeat(1_500_000) } }),
    });
    expect([400, 413]).toContain(res.statusCode);
    expect(res.body).toMatch(/appearance|image/);
  });
});
