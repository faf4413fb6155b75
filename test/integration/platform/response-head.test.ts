import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_RESPONSE_HEAD_BYTES } from '../../../src/http/response-head.js';
import { issueTestKey } from '../../support/api-key.js';
import { buildDocx, para } from '../../support/annotate/docx-builder.js';
import { multipartBody } from '../../support/annotate/multipart.js';
import { buildTestApp, type TestApp } from '../../support/test-app.js';

/**
 * The largest response heads a caller can cause stay under MAX_RESPONSE_HEAD_BYTES (8 KB), which the
 * shipped nginx's proxy_buffer_size holds: many warnings, each as long as a template can make it,
 * and the longest file name, in the widest characters. (Through a real nginx: lb-faults.test.ts.)
 */
let t: TestApp;
let key: string;
beforeAll(async () => {
  t = await buildTestApp({ API_KEY_PEPPER: 'response-head-pepper-0123456789', RATE_LIMIT_MAX: '1000' });
  key = await issueTestKey(t.app, 'head@example.com');
});
afterAll(async () => t?.app.close());

/** Bytes of the head as Node writes it: status line, each header line, blank line. */
function headBytes(res: { statusCode: number; statusMessage: string; headers: Record<string, unknown> }): number {
  let bytes = Buffer.byteLength(`HTTP/1.1 ${res.statusCode} ${res.statusMessage}\r\n\r\n`);
  for (const [name, value] of Object.entries(res.headers)) {
    for (const v of Array.isArray(value) ? value : [value]) bytes += Buffer.byteLength(`${name}: ${String(v)}\r\n`);
  }
  return bytes;
}

/** A file name of 255 UTF-8 bytes in 4-byte characters: 12 bytes each once percent-encoded. */
const widestName = '😀'.repeat(70) + '.docx';

describe('response heads are bounded', () => {
  it('annotate: 60 tags of 5 000 characters without a value and the widest file name → a head under 8 KB, the warnings counted', async () => {
    const tags = Array.from({ length: 60 }, (_, i) => para(`{${String(i).padStart(2, '0')}${'x'.repeat(5000)}}`)).join('');
    const form = multipartBody([
      { name: 'file', value: buildDocx({ body: tags }), filename: widestName },
      { name: 'fields', value: '[]' },
    ]);
    const res = await t.app.inject({ method: 'POST', url: '/v1/annotate', headers: { authorization: `Bearer ${key}`, ...form.headers }, payload: form.payload });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    const warnings = String(res.headers['x-docproc-warnings']).split(', ').map(decodeURIComponent);
    expect(warnings).toHaveLength(8);
    expect(warnings.at(-1)).toBe('and 53 more');
    expect(String(res.headers['content-disposition'])).toContain("filename*=UTF-8''%F0%9F%98%80");
    const bytes = headBytes(res);
    console.log(`response-head: annotate worst head ${bytes} bytes`);
    expect(bytes).toBeLessThan(MAX_RESPONSE_HEAD_BYTES);
  });

  it('convert Markdown→DOCX: 500 remote images (each a warning) and the widest file name → a head under 8 KB', async () => {
    const markdown = Array.from({ length: 500 }, (_, i) => `![image ${i}](https://images.example.com/${i}/${'p'.repeat(2000)}.png)`).join('\n\n');
    const form = multipartBody([{ name: 'file', value: Buffer.from(markdown), filename: widestName.replace('.docx', '.md') }]);
    const res = await t.app.inject({ method: 'POST', url: '/v1/convert?to=docx', headers: { authorization: `Bearer ${key}`, ...form.headers }, payload: form.payload });
    expect(res.statusCode, res.body.slice(0, 300)).toBe(200);
    expect(String(res.headers['x-docproc-warnings'])).toMatch(/, and%20493%20more$/);
    expect(headBytes(res)).toBeLessThan(MAX_RESPONSE_HEAD_BYTES);
  });
});
