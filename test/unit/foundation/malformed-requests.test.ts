import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outputFilename } from '../../../src/http/document-reply.js';
import { issueTestKey } from '../../support/api-key.js';
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
      expect(res.json()).toMatchObject({ code: 'VALIDATION_ERROR', details: [{ field: 'body.notAField', issue: 'unknown field' }] });
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
      expect(res.json().detail).toMatch(/"signer" is larger than 2048 bytes/);
    } finally {
      await small.app.close();
    }
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
});
