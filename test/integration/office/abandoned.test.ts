import http from 'node:http';
import { readdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { JobEvent } from '../../../src/office/index.js';
import { issueTestKey, multipart } from '../../support/api-key.js';
import { buildTestApp, type TestApp } from '../../support/test-app.js';
import { buildDocx, para } from '../../support/annotate/docx-builder.js';
import { corpusDocx } from './pdf-tools.js';
import { instanceRoot } from '../../../src/temp/instance-root.js';

/** ~150 pages of text: seconds of LibreOffice work on any machine. */
const SLOW = buildDocx({ body: Array.from({ length: 3000 }, (_, i) => para(`Paragraph ${i} ${'lorem ipsum dolor sit amet '.repeat(8)}`)).join('') });

/** A conversion whose client hangs up while it waits for LibreOffice never reaches LibreOffice. */
let t: TestApp;
let key: string;
let port: number;
beforeAll(async () => {
  t = await buildTestApp({ REDIS_URL: inject('redisUrl'), OFFICE_ENABLED: 'true', OFFICE_POOL_SIZE: '1', RATE_LIMIT_MAX: '1000', API_KEY_PEPPER: 'abandoned-pepper-0123456789' });
  key = await issueTestKey(t.app, 'abandoned@example.com');
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
});
afterAll(async () => t?.app.close());

async function convertRequest(docx: Buffer, hangUpAfterMs?: number): Promise<number> {
  const body = await multipart({ file: { data: docx, filename: 'doc.docx' } });
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path: '/v1/convert', method: 'POST', agent: false, headers: { authorization: `Bearer ${key}`, 'content-type': body.contentType, 'content-length': body.payload.length } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.end(body.payload);
    if (hangUpAfterMs !== undefined) setTimeout(() => req.destroy(), hangUpAfterMs);
  });
}

describe('abandoned conversions', () => {
  it('drops a queued conversion whose client has gone; the running one finishes', async () => {
    const jobs: JobEvent[] = [];
    t.app.services.office!.on('job', (e) => jobs.push(e));
    const running = convertRequest(SLOW);
    await new Promise((r) => setTimeout(r, 150));
    const abandoned = convertRequest(corpusDocx('pandoc-track_changes_insertion.docx'), 400);
    expect(await abandoned).toBe(0);
    // The slow conversion was still running when the client hung up: the other one was waiting.
    expect(jobs).toHaveLength(0);
    expect(await running).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    // Only the first conversion reached LibreOffice.
    expect(jobs.filter((j) => j.outcome === 'ok')).toHaveLength(1);
    expect(t.app.services.office!.stats().queued).toBe(0);
    // Its input, written while it waited, went with it.
    expect(readdirSync(instanceRoot()).filter((f) => /^(in|out)-/.test(f))).toEqual([]);
  }, 60_000);
});
