import { lookup } from 'node:dns/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import PizZip from 'pizzip';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildDocx, para, pngChunk, pngImage } from '../../support/annotate/docx-builder.js';
import { issueTestKey } from '../../support/api-key.js';
import { buildTestApp, type TestApp } from '../../support/test-app.js';

/**
 * One remote-input policy (src/inputs/remote-inputs.ts) for both operations that take images by URL:
 * POST /v1/annotate (image fields) and POST /v1/convert (Markdown images). Every case runs over both
 * routes on the same real app and image server: the same URLs are fetched or refused, the server sees
 * the same requests, and a refusal is the same sentence — annotate's problem `detail` (it cannot leave
 * an image out) is the reason named in convert's IMAGE_NOT_EMBEDDED warning (it uses the alt text).
 */
const LOCAL_NAME = 'localhost';
let address: string;
let server: Server;
let port: number;
const hits: string[] = [];

/** A valid PNG of about `size` bytes (a text chunk pads it), distinct per `tag`. */
const paddedPng = (size: number, tag: string) => {
  const png = pngImage(2, 2);
  const text = pngChunk('tEXt', Buffer.concat([Buffer.from(`Comment\0${tag}`), Buffer.alloc(Math.max(0, size - png.length - 12 - tag.length - 8), 0x61)]));
  return Buffer.concat([png.subarray(0, 33), text, png.subarray(33)]);
};

const apps: Record<'strict' | 'listed' | 'anyHost' | 'open', { t: TestApp; key: string }> = {} as never;
const url = (path: string, host = LOCAL_NAME) => `http://${host.includes(':') ? `[${host}]` : host}:${port}${path}`;

beforeAll(async () => {
  ({ address } = await lookup(LOCAL_NAME));
  server = createServer((req, res) => {
    const path = req.url ?? '';
    hits.push(path);
    if (path.startsWith('/hang')) return; // never answers: the deadline ends it
    if (path.startsWith('/doc.md')) {
      res.writeHead(200, { 'content-type': 'text/markdown' }).end(`# Fetched\n\n![pic](${url('/from-doc.png')})\n`);
      return;
    }
    if (path.startsWith('/big')) {
      res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(16 * 1024 * 1024) });
      res.write(pngImage(2, 2));
      return;
    }
    const body = path.startsWith('/mid') ? paddedPng(3000, path) : paddedPng(0, path);
    res.writeHead(200, { 'content-type': 'image/png' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, address, resolve));
  port = (server.address() as AddressInfo).port;
  const base = { REDIS_URL: inject('redisUrl'), RATE_LIMIT_MAX: '1000', REMOTE_IMAGE_HOSTS: LOCAL_NAME };
  const settings = {
    // The listed host resolves to a loopback address: refused as private.
    strict: base,
    // Private addresses allowed (the test server is local), a small byte budget and a short deadline.
    listed: { ...base, OUTBOUND_ALLOW_PRIVATE_ADDRESSES: 'true', URL_INPUT_MAX_BYTES: '4096', URL_INPUT_TIMEOUT_MS: '1500' },
    // ALLOW_URL_INPUTS without ALLOW_HTTP_URL_INPUTS and no image hosts: https from any host.
    anyHost: { REDIS_URL: inject('redisUrl'), RATE_LIMIT_MAX: '1000', ALLOW_URL_INPUTS: 'true', OUTBOUND_ALLOW_PRIVATE_ADDRESSES: 'true' },
    // ALLOW_URL_INPUTS with http, no image hosts: documents and images from any host.
    open: { REDIS_URL: inject('redisUrl'), RATE_LIMIT_MAX: '1000', ALLOW_URL_INPUTS: 'true', ALLOW_HTTP_URL_INPUTS: 'true', OUTBOUND_ALLOW_PRIVATE_ADDRESSES: 'true' },
  };
  for (const [name, env] of Object.entries(settings)) {
    const t = await buildTestApp(env);
    apps[name as keyof typeof apps] = { t, key: await issueTestKey(t.app, `remote-inputs-${name}@example.com`) };
  }
}, 120_000);

afterAll(async () => {
  await Promise.all(Object.values(apps).map(({ t }) => t.app.close()));
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
});

interface Outcome {
  status: number;
  /** annotate: the problem; convert: the IMAGE_NOT_EMBEDDED warnings. */
  problem?: { code: string; detail: string; limit?: { name: string; max: number } };
  warnings: { code: string; message: string; field?: string }[];
  media: number;
  hits: string[];
}

async function post(app: keyof typeof apps, route: 'annotate' | 'convert', urls: string[]): Promise<Outcome> {
  const { t, key } = apps[app];
  hits.length = 0;
  const body =
    route === 'annotate'
      ? { document: { base64: buildDocx({ body: urls.map((_, i) => para(`{%img${i}}`)).join('') }).toString('base64') }, fields: urls.map((value, i) => ({ id: `img${i}`, type: 'image', value })) }
      : { document: { base64: Buffer.from(urls.map((u, i) => `![alt ${i}](${u})`).join('\n\n')).toString('base64') }, filename: 'images.md' };
  const res = await t.app.inject({
    method: 'POST', url: `/v1/${route}${route === 'convert' ? '?to=docx' : ''}`,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: JSON.stringify(body),
  });
  const json = res.json();
  const docx = res.statusCode === 200 ? Buffer.from(json.document.base64, 'base64') : undefined;
  return {
    status: res.statusCode,
    problem: res.statusCode === 200 ? undefined : json,
    warnings: res.statusCode === 200 ? (json.warnings ?? []).filter((w: { code: string }) => w.code === 'IMAGE_NOT_EMBEDDED') : [],
    media: docx ? Object.keys(new PizZip(docx).files).filter((name) => name.startsWith('word/media/')).length : 0,
    hits: [...hits].sort(),
  };
}

/** The policy's sentence as convert's warning carries it: "Remote image "…" was not fetched (the URL …); …". */
const asReason = (detail: string) => detail.replace(/\.$/, '').replace(/^[A-Z](?=[a-z ])/, (c) => c.toLowerCase());

const range = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => url(`/${prefix}-${i}.png`));

interface Case {
  name: string;
  app: keyof typeof apps;
  urls: () => string[];
  /** annotate's answer; undefined = 200 with every image filled. */
  refusal?: { status: number; code: string; detail: RegExp; limit?: string };
  /** How many of the URLs convert cannot embed (the rest it embeds), and which paths the server sees per route. */
  refused: number;
  annotateHits: (urls: string[]) => number;
  convertHits: (urls: string[]) => number;
}

const CASES: Case[] = [
  { name: 'a host in REMOTE_IMAGE_HOSTS is fetched, once per route', app: 'listed', urls: () => [url('/ok.png')], refused: 0, annotateHits: () => 1, convertHits: () => 1 },
  {
    name: 'a listed host resolving to a private address is refused (OUTBOUND_ALLOW_PRIVATE_ADDRESSES off)', app: 'strict', urls: () => [url('/private.png')],
    refusal: { status: 400, code: 'URL_NOT_ALLOWED', detail: /private or reserved address/ }, refused: 1, annotateHits: () => 0, convertHits: () => 0,
  },
  {
    name: 'a host not in REMOTE_IMAGE_HOSTS is refused before any request', app: 'listed', urls: () => [url('/other-host.png', address)],
    refusal: { status: 400, code: 'URL_NOT_ALLOWED', detail: /not allowed for images \(REMOTE_IMAGE_HOSTS\)/ }, refused: 1, annotateHits: () => 0, convertHits: () => 0,
  },
  {
    name: 'ALLOW_URL_INPUTS without ALLOW_HTTP_URL_INPUTS: an http URL is refused', app: 'anyHost', urls: () => [url('/plain-http.png')],
    refusal: { status: 400, code: 'URL_NOT_ALLOWED', detail: /Only https URLs are accepted/ }, refused: 1, annotateHits: () => 0, convertHits: () => 0,
  },
  {
    name: 'more than 20 images: annotate refuses before fetching, convert fetches 20', app: 'listed', urls: () => range(21, 'many'),
    refusal: { status: 422, code: 'DOCUMENT_TOO_COMPLEX', detail: /More than 20 remote images in one request/, limit: 'remoteInputs.maxImages' }, refused: 1, annotateHits: () => 0, convertHits: () => 20,
  },
  {
    name: 'one image past 15 MB (declared) is refused', app: 'listed', urls: () => [url('/big.png')],
    refusal: { status: 413, code: 'FILE_TOO_LARGE', detail: /image at the URL is larger than 15728640 bytes/ }, refused: 1, annotateHits: () => 1, convertHits: () => 1,
  },
  {
    name: "the request's images together past URL_INPUT_MAX_BYTES are refused", app: 'listed', urls: () => range(2, 'mid'),
    refusal: { status: 413, code: 'FILE_TOO_LARGE', detail: /remote images are larger than 4096 bytes together \(URL_INPUT_MAX_BYTES\)/ }, refused: -1, annotateHits: () => 2, convertHits: () => 2,
  },
  {
    name: 'past the one deadline (URL_INPUT_TIMEOUT_MS) the fetch fails', app: 'listed', urls: () => [url('/hang.png')],
    refusal: { status: 422, code: 'URL_FETCH_FAILED', detail: /The URL could not be fetched/ }, refused: 1, annotateHits: () => 1, convertHits: () => 1,
  },
];

describe('one remote-input policy for annotate and Markdown/HTML convert', () => {
  it.each(CASES)('$name', async ({ app, urls: makeUrls, refusal, refused, annotateHits, convertHits }) => {
    const urls = makeUrls();
    const annotate = await post(app, 'annotate', urls);
    const convert = await post(app, 'convert', urls);
    expect(convert.status, JSON.stringify(convert.problem)).toBe(200);
    expect(annotate.hits.length, JSON.stringify(annotate)).toBe(annotateHits(urls));
    expect(convert.hits.length).toBe(convertHits(urls));

    if (!refusal) {
      expect(annotate.status, JSON.stringify(annotate.problem)).toBe(200);
      expect(annotate.media).toBe(urls.length);
      expect(convert.warnings).toEqual([]);
      expect(convert.media).toBe(urls.length);
      return;
    }
    expect(annotate.status).toBe(refusal.status);
    expect(annotate.problem!.code).toBe(refusal.code);
    expect(annotate.problem!.detail).toMatch(refusal.detail);
    if (refusal.limit) expect(annotate.problem!.limit).toEqual({ name: refusal.limit, max: 20 });
    // The same sentence, as the reason of convert's warning, on the URL(s) refused.
    const reason = asReason(annotate.problem!.detail);
    const naming = convert.warnings.filter((w) => w.message.includes(`was not fetched (${reason})`));
    if (refused >= 0) expect(naming.length).toBe(refused);
    else expect(naming.length).toBeGreaterThanOrEqual(1);
    expect(naming.every((w) => urls.includes(w.field!))).toBe(true);
    expect(convert.media).toBe(urls.length - naming.length);
  });
});

describe('documents by URL go through the same policy, fetched by the operation (convert JSON)', () => {
  const convertUrl = async (app: keyof typeof apps, documentUrl: string) => {
    const { t, key } = apps[app];
    hits.length = 0;
    const res = await t.app.inject({
      method: 'POST', url: '/v1/convert?to=docx', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ document: { url: documentUrl }, filename: 'doc.md' }),
    });
    return { res, hits: [...hits].sort() };
  };

  it('REMOTE_IMAGE_HOSTS does not open documents: without ALLOW_URL_INPUTS a listed host is refused, nothing fetched', async () => {
    const { res, hits: seen } = await convertUrl('listed', url('/doc.md'));
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'URL_NOT_ALLOWED', detail: expect.stringMatching(/Documents by URL are disabled on this service \(ALLOW_URL_INPUTS\)/) });
    expect(seen).toEqual([]);
  });

  it('ALLOW_URL_INPUTS (+ http): the document is fetched, and its Markdown images by the same rule (any host)', async () => {
    const { res, hits: seen } = await convertUrl('open', url('/doc.md'));
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    const { document, warnings } = res.json();
    expect(warnings).toEqual([]);
    const docx = new PizZip(Buffer.from(document.base64, 'base64'));
    expect(Object.keys(docx.files).filter((name) => name.startsWith('word/media/'))).toHaveLength(1);
    expect(seen).toEqual(['/doc.md', '/from-doc.png']);
  });
});
