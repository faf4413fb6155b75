import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outputFilename } from '../../../src/http/document-reply.js';
import { issueTestKey, multipart } from '../../support/api-key.js';
import { buildTestApp, type TestApp } from '../../support/test-app.js';

/** Malformed requests get a 4xx problem, never a 500; answers stay readable whatever the upload's name. */
let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await buildTestApp({ API_KEY_PEPPER: 'malformed-pepper-0123456789' });
  key = await issueTestKey(t.app, 'malformed@example.com');
});
afterAll(async () => t?.app.close());

describe('malformed requests', () => {
  it.each(['/v1/verify', '/v1/annotate', '/v1/sign', '/v1/convert'])('%s with Content-Type text/plain (or an unknown type) → 415 problem', async (url) => {
    for (const type of ['text/plain', 'text/plain; charset=utf-8', 'application/x-unknown']) {
      const res = await t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}`, 'content-type': type }, payload: 'hello' });
      expect(res.statusCode, `${url} ${type}`).toBe(415);
      expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(res.json()).toMatchObject({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
    }
  });
});

async function multipartPost(url: string, fields: Record<string, string>) {
  const form = new FormData();
  form.append('file', new Blob([Buffer.from('%PDF-1.4\n')], { type: 'application/pdf' }), 'a.pdf');
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  const request = new Request('http://localhost/', { method: 'POST', body: form });
  const payload = Buffer.from(await request.arrayBuffer());
  return t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}`, 'content-type': request.headers.get('content-type')! }, payload });
}

describe('multipart bodies are bounded', () => {
  it('a field the operation does not declare is refused (400), however small', async () => {
    for (const url of ['/v1/verify', '/v1/sign', '/v1/annotate']) {
      const res = await multipartPost(url, { notAField: 'x' });
      expect(res.statusCode, url).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'body.notAField', issue: 'unexpected part' }] });
    }
  });

  it('a declared text field past MULTIPART_FIELD_MAX_BYTES is 413, not silently cut', async () => {
    const small = await buildTestApp({ API_KEY_PEPPER: 'malformed-pepper-0123456789', MULTIPART_FIELD_MAX_BYTES: '2048' });
    try {
      const smallKey = await issueTestKey(small.app, 'small@example.com');
      const form = new FormData();
      form.append('file', new Blob([Buffer.from('%PDF-1.4\n')], { type: 'application/pdf' }), 'a.pdf');
      form.append('signer', JSON.stringify({ name: 'x'.repeat(5000), email: 'a@example.com' }));
      const request = new Request('http://localhost/', { method: 'POST', body: form });
      const res = await small.app.inject({ method: 'POST', url: '/v1/sign', headers: { authorization: `Bearer ${smallKey}`, 'content-type': request.headers.get('content-type')! }, payload: Buffer.from(await request.arrayBuffer()) });
      expect(res.statusCode).toBe(413);
      expect(res.json().detail).toMatch(/"signer" is larger than 2 KB \(MULTIPART_FIELD_MAX_BYTES\)/);
    } finally {
      await small.app.close();
    }
  });
});

describe('malformed and oversized multipart bodies', () => {
  const boundary = 'XyZboundary';
  const post = (url: string, payload: string | Buffer, app = t.app, apiKey = key, type = `multipart/form-data; boundary=${boundary}`) =>
    app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${apiKey}`, 'content-type': type }, payload });

  it.each(['/v1/convert', '/v1/annotate', '/v1/sign', '/v1/verify'])('%s: a file part that is never terminated is 400, not 500', async (url) => {
    const unterminated = `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.docx"\r\nContent-Type: application/octet-stream\r\n\r\nPK\x03\x04abcdef`;
    for (const payload of [unterminated, `${unterminated}\r\n--${boundary}\r\n`]) {
      const res = await post(url, payload);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR' });
    }
    const noBoundary = await post(url, 'x', t.app, key, 'multipart/form-data');
    expect(noBoundary.statusCode).toBe(400);
  });

  it('a part past its limit is refused while it arrives: the answer comes before the client has sent the rest', async () => {
    const small = await buildTestApp({ API_KEY_PEPPER: 'malformed-pepper-0123456789', MAX_FILE_BYTES: String(1024 * 1024), MULTIPART_FIELD_MAX_BYTES: '65536', MAX_JSON_BYTES: String(1024 ** 3) });
    try {
      const smallKey = await issueTestKey(small.app, 'stream@example.com');
      await small.app.listen({ port: 0, host: '127.0.0.1' });
      const { port } = small.app.server.address() as import('node:net').AddressInfo;
      const { request } = await import('node:http');
      /** Streams a part of `total` bytes; resolves with the answer and how much had been sent when it came. */
      const stream = (head: string, total: number) =>
        new Promise<{ status: number; body: string; sentWhenAnswered: number }>((resolve, reject) => {
          let sent = 0;
          let sentWhenAnswered = -1;
          const req = request({ port, method: 'POST', path: '/v1/sign', headers: { authorization: `Bearer ${smallKey}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' } }, (res) => {
            sentWhenAnswered = sent;
            let body = '';
            res.on('data', (d) => (body += d));
            res.on('end', () => resolve({ status: res.statusCode!, body, sentWhenAnswered }));
          });
          req.on('error', (err) => (sentWhenAnswered >= 0 ? undefined : reject(err)));
          const chunk = Buffer.alloc(64 * 1024, 0x61);
          const pump = () => {
            while (sentWhenAnswered < 0 && sent < total) {
              sent += chunk.length;
              if (!req.write(chunk)) return void req.once('drain', pump);
            }
            if (sent >= total) req.end();
          };
          req.write(`--${boundary}\r\n${head}\r\n\r\n`);
          pump();
        });
      const field = await stream('Content-Disposition: form-data; name="signer"', 256 * 1024 * 1024);
      expect(field.status).toBe(413);
      expect(JSON.parse(field.body)).toMatchObject({ code: 'FILE_TOO_LARGE', detail: expect.stringContaining('"signer"') });
      const file = await stream('Content-Disposition: form-data; name="file"; filename="big.pdf"\r\nContent-Type: application/pdf', 256 * 1024 * 1024);
      expect(file.status).toBe(413);
      expect(JSON.parse(file.body).detail).toContain('The file part `file` is larger than 1 MB');
      console.log(`malformed: 413 after ${field.sentWhenAnswered} bytes of a 256 MB field (limit 64 KB), ${file.sentWhenAnswered} bytes of a 256 MB file (limit 1 MB)`);
      // Socket buffers hold a few MB at most: the 256 MB were never all sent.
      expect(field.sentWhenAnswered).toBeLessThan(32 * 1024 * 1024);
      expect(file.sentWhenAnswered).toBeLessThan(32 * 1024 * 1024);
    } finally {
      await small.app.close();
    }
  }, 60_000);

  it('convert refuses text fields it does not declare, like every other operation', async () => {
    const res = await multipartPost('/v1/convert', { notAField: 'x' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'body.notAField', issue: 'unexpected part' }] });
  });
});

describe('outputFilename', () => {
  it('keeps names at most 255 UTF-8 bytes, cut between code points, extension kept', () => {
    expect(outputFilename('a'.repeat(1_000_000) + '.docx', 'pdf')).toBe('a'.repeat(251) + '.pdf');
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 600 }), fc.constantFrom('pdf', 'docx') as fc.Arbitrary<'pdf' | 'docx'>, (name, format) => {
        const out = outputFilename(`${name}.docx`, format);
        expect(Buffer.byteLength(out)).toBeLessThanOrEqual(255);
        expect(out.endsWith(`.${format}`)).toBe(true);
        expect(out).not.toContain('\uFFFD');
        expect(Buffer.from(out).toString('utf8')).toBe(out);
      }),
      { seed: 9, numRuns: 300 },
    );
  });

  it('drops control and bidirectional formatting characters (the answer shows the name the file really has)', () => {
    expect(outputFilename('invoice\u202Efdp.exe.docx', 'pdf')).toBe('invoicefdp.exe.pdf');
    expect(outputFilename('a\u2066b\u2069c\u200F\u061C\nd\u0000.docx', 'pdf')).toBe('abcd.pdf');
    expect(outputFilename('\u202E\u202E.docx', 'docx', 'signed')).toBe('signed.docx');
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 100 }), (name) => {
        expect(outputFilename(`${name}.docx`, 'pdf')).not.toMatch(/[\p{Cc}\p{Bidi_Control}]/u);
      }),
      { seed: 10, numRuns: 100 },
    );
  });
});

describe('deeply nested JSON', () => {
  const nested = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);
  const minimalDocx = () => Buffer.from('PK').toString('base64');

  it('annotate `data` nested 5000 levels is a 400 naming the body, not a 500 from the structured clone', async () => {
    const payload = `{"document":{"base64":"${minimalDocx()}"},"fields":[],"data":${nested(5000)}}`;
    const res = await t.app.inject({ method: 'POST', url: '/v1/annotate', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'body' }] });
  });

  it('the same nesting in a multipart JSON field is a 400 naming the field', async () => {
    const res = await multipartPost('/v1/sign', {
      signer: '{"name":"Ann Signer","email":"a@example.com"}',
      auditTrail: '[{"type":"submit","timestamp":"2025-01-01T00:00:00Z"}]',
      metadata: nested(5000),
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'body.metadata' }] });
  });

  it('every route refuses 100 000 nested arrays quickly with a 4xx', async () => {
    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    for (const url of ['/v1/verify', '/v1/annotate', '/v1/sign']) {
      const res = await t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, payload: `{"document":${deep}}` });
      expect(res.statusCode, url).toBe(400);
    }
  });

  it('64 levels are still accepted by the depth check', async () => {
    const { jsonDepthExceeds, MAX_JSON_DEPTH } = await import('../../../src/http/json-depth.js');
    expect(jsonDepthExceeds(JSON.parse(nested(MAX_JSON_DEPTH - 1)), MAX_JSON_DEPTH)).toBe(false);
    expect(jsonDepthExceeds(JSON.parse(nested(MAX_JSON_DEPTH)), MAX_JSON_DEPTH)).toBe(false);
    expect(jsonDepthExceeds(JSON.parse(nested(MAX_JSON_DEPTH + 1)), MAX_JSON_DEPTH)).toBe(true);
  });
});

describe('every route declares its body budget', () => {
  it('a body past the route’s budget is 413 from its Content-Length alone; routes without a body take almost none', async () => {
    const small = await buildTestApp({ API_KEY_PEPPER: 'malformed-pepper-0123456789', MAX_FILE_BYTES: String(1024 * 1024), MULTIPART_FIELD_MAX_BYTES: '65536' });
    try {
      const smallKey = await issueTestKey(small.app, 'budget@example.com');
      // convert: two files of MAX_FILE_BYTES, 10 MB of the document's own files and 1 MB of fields = 13 MB.
      const big = Buffer.alloc(13 * 1024 * 1024 + 4096, 0x61);
      const convert = await small.app.inject({ method: 'POST', url: '/v1/convert', headers: { authorization: `Bearer ${smallKey}`, 'content-type': 'multipart/form-data; boundary=x' }, payload: big });
      expect(convert.statusCode).toBe(413);
      expect(convert.json()).toMatchObject({ code: 'FILE_TOO_LARGE' });
      expect(convert.json().detail).toContain('larger than this operation accepts');
      const health = await small.app.inject({ method: 'GET', url: '/v1/health', headers: { 'content-type': 'application/json' }, payload: `{"pad":"${'x'.repeat(20_000)}"}` });
      expect(health.statusCode).toBe(413);
      const register = await small.app.inject({ method: 'GET', url: '/v1/auth/register?email=a@example.com', headers: { 'content-type': 'application/json' }, payload: `{"pad":"${'x'.repeat(20_000)}"}` });
      expect(register.statusCode).toBe(413);
    } finally {
      await small.app.close();
    }
  });
});

describe('error media type follows Accept', () => {
  it('problem+json by default and for browsers; application/json when the client prefers it', async () => {
    const cases: [string | undefined, string][] = [
      [undefined, 'application/problem+json'],
      ['*/*', 'application/problem+json'],
      ['text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8', 'application/problem+json'],
      ['application/json', 'application/json'],
      ['application/json, application/problem+json', 'application/problem+json'],
      ['application/problem+json;q=0.5, application/json', 'application/json'],
      ['application/json;q=0.2, application/problem+json', 'application/problem+json'],
      ['application/*', 'application/problem+json'],
    ];
    for (const [accept, expected] of cases) {
      const res = await t.app.inject({ method: 'POST', url: '/v1/verify', headers: { ...(accept ? { accept } : {}), 'content-type': 'application/json' }, payload: '{}' });
      expect(res.statusCode, String(accept)).toBe(401);
      expect(res.headers['content-type'], String(accept)).toMatch(new RegExp(`^${expected.replace('+', '\\+')}`));
      expect(res.json()).toMatchObject({ status: 401, code: 'AUTHENTICATION_ERROR', error: expect.any(String), message: expect.any(String) });
    }
  });
});

describe('GET / and /documentation (as SuperDoc has them)', () => {
  it('GET / answers JSON with name, version, message, endpoints, authentication, example and links; plain text for curl', async () => {
    const json = await t.app.inject({ method: 'GET', url: '/' });
    expect(json.statusCode).toBe(200);
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect(json.json()).toMatchObject({
      name: expect.any(String), version: 'v1', message: expect.any(String),
      endpoints: { convert: 'POST /v1/convert', health: 'GET /v1/health', docs: 'GET /docs' },
      authentication: expect.stringContaining('Bearer'), example: expect.stringContaining('/v1/health'),
      links: { documentation: expect.stringMatching(/\/documentation$/), github: expect.any(String), support: expect.any(String) },
    });
    const text = await t.app.inject({ method: 'GET', url: '/', headers: { 'user-agent': 'curl/8.5.0', accept: '*/*' } });
    expect(text.headers['content-type']).toMatch(/^text\/plain/);
    expect(text.body).toContain('POST /v1/convert');
    const asked = await t.app.inject({ method: 'GET', url: '/', headers: { 'user-agent': 'curl/8.5.0', accept: 'application/json' } });
    expect(asked.headers['content-type']).toMatch(/^application\/json/);
  });

  it('/documentation leads to the interactive documentation', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/documentation' });
    expect(res.statusCode).toBe(302);
    expect(res.headers.location).toBe('/docs');
    expect((await t.app.inject({ method: 'GET', url: '/docs' })).statusCode).toBeLessThan(400);
  });
});

describe('every operation takes exactly what it declares', () => {
  const bearer = () => ({ authorization: `Bearer ${key}` });
  it('an undeclared query parameter is 400 naming it, on every route', async () => {
    const cases: [string, string][] = [
      ['GET', '/v1/health?verbose=1'],
      ['GET', '/v1/health/ready?x=1'],
      ['GET', '/v1/verify/key?format=pem'],
      ['GET', '/v1/auth/register?email=a@example.com&lang=en'],
      ['POST', '/v1/verify?strict=true'],
      ['POST', '/v1/sign?level=B-B&visible=1'],
      ['POST', '/v1/convert?to=pdf&nativePageRanges=1'],
      ['POST', '/v1/annotate?to=docx&flatten=1'],
      ['DELETE', '/v1/auth/key?all=1'],
      ['GET', '/?pretty=1'],
    ];
    // Bodies that pass validation, so the query is what is refused (Fastify validates the body first).
    const document = { base64: Buffer.from('%PDF-1.4').toString('base64') };
    const bodies: Record<string, unknown> = { '/v1/verify': { document }, '/v1/sign': { document }, '/v1/annotate': { document, fields: [] } };
    const upload = await multipart({ file: { data: Buffer.from('# Title'), filename: 'a.md' } });
    for (const [method, url] of cases) {
      const path = url.split('?')[0]!;
      const payload = path === '/v1/convert' ? { payload: upload.payload } : method === 'POST' ? { payload: JSON.stringify(bodies[path]) } : {};
      const type = path === '/v1/convert' ? upload.contentType : 'application/json';
      const res = await t.app.inject({ method: method as 'GET', url, headers: { ...bearer(), ...(method === 'POST' ? { 'content-type': type } : {}) }, ...payload });
      const param = new URL(url, 'http://x').searchParams;
      const unknown = [...param.keys()].at(-1)!;
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(400);
      expect(res.json().details ?? [], `${url}: ${res.body}`).toContainEqual({ field: `querystring.${unknown}`, issue: expect.stringMatching(new RegExp(`^unknown property \`${unknown}\``)) });
    }
  });

  it('an undeclared JSON body property is 400 naming it, at the top level and inside', async () => {
    const signed = { base64: Buffer.from('%PDF-1.4').toString('base64'), contentType: 'application/pdf' };
    const bodies: [string, unknown, string][] = [
      ['/v1/verify', { document: signed, eventId: 'evt-1', strict: true }, 'body.strict'],
      ['/v1/verify', { document: { ...signed, name: 'a.pdf' } }, 'body.document'],
      ['/v1/sign', { document: signed, signer: { name: 'Ann Lee', email: 'a@example.com' }, auditTrail: [{ type: 'submit', timestamp: '2026-01-01T00:00:00Z' }], visible: true }, 'body.visible'],
      ['/v1/annotate', { document: signed, fields: [], flatten: true }, 'body.flatten'],
      ['/v1/auth/key/rotate', { reason: 'leak' }, 'body.reason'],
    ];
    for (const [url, body, field] of bodies) {
      const res = await t.app.inject({ method: 'POST', url, headers: { ...bearer(), 'content-type': 'application/json' }, payload: JSON.stringify(body) });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(400);
      expect(res.json().details.map((d: { field: string }) => d.field).join(' '), url).toContain(field);
    }
    // What docproc answers ({base64, contentType}) and SuperDoc's eventId are declared, so they pass validation.
    const ok = await t.app.inject({ method: 'POST', url: '/v1/verify', headers: { ...bearer(), 'content-type': 'application/json' }, payload: JSON.stringify({ document: signed, eventId: 'evt-1' }) });
    expect(ok.json().code).not.toBe('VALIDATION_ERROR');
  });
});
