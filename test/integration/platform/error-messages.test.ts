import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { FastifyInstance } from 'fastify';
import { issueTestKey, multipart } from '../../support/api-key.js';
import { buildTestApp } from '../../support/test-app.js';

/**
 * Errors say what was wrong, what is allowed and what to send instead (issue 25 item 3), through
 * the one error handler, for the mistakes platform teams make first.
 */
let app: FastifyInstance;
let auth: { authorization: string };
const PDF = Buffer.from('%PDF-1.4\n%%EOF\n');

beforeAll(async () => {
  ({ app } = await buildTestApp({ REDIS_URL: inject('redisUrl'), API_KEY_PEPPER: 'error-messages-pepper-0123', RATE_LIMIT_MAX: '1000', MAX_FILE_BYTES: String(2 * 1024 * 1024) }));
  auth = { authorization: `Bearer ${await issueTestKey(app)}` };
});
afterAll(async () => app?.close());

async function postMultipart(url: string, parts: Parameters<typeof multipart>[0]) {
  const { payload, contentType } = await multipart(parts);
  const res = await app.inject({ method: 'POST', url, headers: { ...auth, 'content-type': contentType }, payload });
  return { status: res.statusCode, body: res.json() as { code: string; detail: string; details?: { field: string; issue: string }[] } };
}

async function postJson(url: string, body: unknown) {
  const res = await app.inject({ method: 'POST', url, headers: { ...auth, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
  return { status: res.statusCode, body: res.json() as { code: string; detail: string; details?: { field: string; issue: string }[] } };
}

const signer = JSON.stringify({ email: 'ada@example.com', name: 'Ada Lovelace' });

describe('multipart part names', () => {
  it.each(['/v1/sign', '/v1/verify', '/v1/convert'])('%s: a file sent as `document` is told to send it as `file`', async (url) => {
    const parts: Parameters<typeof multipart>[0] = url === '/v1/sign'
      ? { document: { data: PDF, filename: 'a.pdf' }, signer, auditTrail: '[{"type":"submit","timestamp":"2025-01-01T00:00:00Z"}]' }
      : { document: { data: PDF, filename: 'a.pdf' } };
    const { status, body } = await postMultipart(url, parts);
    expect(status).toBe(400);
    expect(body.code).toBe('VALIDATION_ERROR');
    expect(body.detail).toBe('Unexpected part `document`; send the file as `file`.');
    expect(body.details).toEqual([{ field: 'body.document', issue: 'unexpected part' }]);
  });

  it('annotate (which takes image parts by any name) names the missing `file` and the part that came instead', async () => {
    const { status, body } = await postMultipart('/v1/annotate', { template: { data: PDF, filename: 't.docx' }, fields: '[]' });
    expect(status).toBe(400);
    expect(body.detail).toBe('The required part `file` is missing. The request has the file part `template`: send the document as `file`.');
  });

  it('a file part sent as a text field is told how to send a file', async () => {
    const { body } = await postMultipart('/v1/verify', { file: 'a.pdf' });
    expect(body.detail).toMatch(/^The required part `file` is missing\. It arrived as a text field: send it as a file \(in curl, -F "file=@path"\)\.$/);
  });

  it('an undeclared text field lists the parts the operation takes', async () => {
    const { status, body } = await postMultipart('/v1/verify', { file: { data: PDF, filename: 'a.pdf' }, trust: 'x' });
    expect(status).toBe(400);
    expect(body.detail).toMatch(/^Unexpected part `trust`; this operation takes the parts `file`(, `\w+`)*\.$/);
  });
});

describe('the multipart operations', () => {
  it('refuse a JSON body, naming the JSON operation', async () => {
    const { status, body } = await postJson('/v1/sign/multipart', { document: { base64: PDF.toString('base64') } });
    expect(status).toBe(415);
    expect(body.detail).toBe('This is the multipart form of POST /v1/sign: send multipart/form-data here, or JSON to /v1/sign.');
  });

  it('take the same multipart body and give the same part-name advice', async () => {
    const { status, body } = await postMultipart('/v1/verify/multipart', { document: { data: PDF, filename: 'a.pdf' } });
    expect(status).toBe(400);
    expect(body.detail).toBe('Unexpected part `document`; send the file as `file`.');
  });
});

describe('schema messages', () => {
  it('a missing submit event names the value expected', async () => {
    const { status, body } = await postJson('/v1/sign', {
      document: { base64: PDF.toString('base64') },
      signer: { email: 'ada@example.com', name: 'Ada Lovelace' },
      auditTrail: [{ type: 'ready', timestamp: '2025-01-01T00:00:00Z' }],
    });
    expect(status).toBe(400);
    expect(body.details).toEqual([{ field: 'body.auditTrail', issue: 'must contain an item with type `submit`' }]);
    expect(body.detail).not.toMatch(/constant/);
  });

  it('the same rule in a multipart text part says the same', async () => {
    const { body } = await postMultipart('/v1/sign', { file: { data: PDF, filename: 'a.pdf' }, signer, auditTrail: '[{"type":"ready","timestamp":"t"}]' });
    expect(body.details).toEqual([{ field: 'auditTrail', issue: 'must contain an item with type `submit`' }]);
  });

  it('a wrong enum value lists the allowed ones and what came', async () => {
    const { payload, contentType } = await multipart({ file: { data: Buffer.from('# Hi'), filename: 'a.md' } });
    const res = await app.inject({ method: 'POST', url: '/v1/convert?to=xyz', headers: { ...auth, 'content-type': contentType }, payload });
    expect(res.statusCode).toBe(400);
    expect((res.json() as { detail: string }).detail).toMatch(/^The request is invalid: querystring\.to must be one of `pdf`, `docx`(, `[a-z]+`)* \(got a string `xyz`\)\.$/);
  });

  it('an unknown JSON property lists the declared ones', async () => {
    const { body } = await postJson('/v1/verify', { file: { base64: 'AA==' } });
    expect(body.details).toContainEqual({ field: 'body.file', issue: expect.stringMatching(/^unknown property `file`; allowed: `document`/) });
    expect(body.details).toContainEqual({ field: 'body.document', issue: 'is required' });
  });

  it('a wrong member inside a nullable object is named, not "matches none"', async () => {
    const { body } = await postJson('/v1/sign', {
      document: { base64: PDF.toString('base64') },
      signer: { email: 'not-an-email', name: 'Ada Lovelace' },
      auditTrail: [{ type: 'submit', timestamp: '2025-01-01T00:00:00Z' }],
    });
    expect(body.details?.map((d) => d.field)).toContain('body.signer.email');
  });
});

describe('size limits in MB', () => {
  it('a file past MAX_FILE_BYTES is told the limit in MB', async () => {
    const { status, body } = await postMultipart('/v1/convert', { file: { data: Buffer.alloc(3 * 1024 * 1024, 0x61), filename: 'big.md' } });
    expect(status).toBe(413);
    expect(body.code).toBe('FILE_TOO_LARGE');
    expect(body.detail).toBe('The file part `file` is larger than 2 MB, the most this service accepts per file (MAX_FILE_BYTES); it was stopped there.');
  });

  it('a body past the operation budget is told the limit in MB', async () => {
    const res = await app.inject({ method: 'POST', url: '/v1/verify', headers: { ...auth, 'content-type': 'application/json', 'content-length': String(300 * 1024 * 1024) }, payload: '{}' });
    expect(res.statusCode).toBe(413);
    expect((res.json() as { detail: string }).detail).toMatch(/^The request body \(300 MB\) is larger than this operation accepts \(\d+(\.\d)? MB\); send a smaller document\.$/);
  });
});
