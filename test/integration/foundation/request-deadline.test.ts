import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueTestKey } from '../../support/api-key.js';
import { buildDocx, para } from '../../support/annotate/docx-builder.js';
import { buildTestApp, type TestApp } from '../../support/test-app.js';

/** REQUEST_TIMEOUT_MS bounds the whole request, enforced on time: a stalled upload, a slow job. */
const DEADLINE_MS = 2000;
let t: TestApp;
let key: string;
let port: number;

beforeAll(async () => {
  t = await buildTestApp({ API_KEY_PEPPER: 'deadline-pepper-0123456789', REQUEST_TIMEOUT_MS: String(DEADLINE_MS), RATE_LIMIT_MAX: '1000' });
  key = await issueTestKey(t.app, 'deadline@example.com');
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
});
afterAll(async () => t?.app.close());

/** Sends `head` (and part of a body), then nothing; resolves with the raw answer and when it came. */
function stalledUpload(head: string): Promise<{ answer: string; afterMs: number; closed: boolean }> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = net.connect({ port, host: '127.0.0.1' }, () => socket.write(head));
    let answer = '';
    let answeredAt = 0;
    socket.on('data', (d) => {
      answer += d;
      answeredAt ||= performance.now();
    });
    socket.on('close', () => resolve({ answer, afterMs: (answeredAt || performance.now()) - started, closed: true }));
    setTimeout(() => {
      socket.destroy();
      resolve({ answer, afterMs: performance.now() - started, closed: false });
    }, DEADLINE_MS + 8000).unref();
  });
}

describe('REQUEST_TIMEOUT_MS is the whole-request deadline', () => {
  it('a stalled upload gets 408 at the deadline (within a second), and its connection is closed', async () => {
    const boundary = 'stall';
    const { answer, afterMs, closed } = await stalledUpload(
      `POST /v1/verify HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: 100000\r\n\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.pdf"\r\n\r\n%PDF-1.4`,
    );
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toContain('"code":"REQUEST_TIMEOUT"');
    expect(afterMs).toBeGreaterThanOrEqual(DEADLINE_MS - 50);
    expect(afterMs).toBeLessThan(DEADLINE_MS + 1500);
    expect(closed).toBe(true);
  });

  it('a request still being processed at the deadline gets 504 then, and the service stays sound', async () => {
    // About 2 s of worker time (the annotate budget), past the 2 s deadline with the rest of the request.
    const body = para('{#rows}') + para('{a} {b} {c} {d}') + para('{#items}{x}-{y}{/items}') + para('{/rows}');
    const rows = Array.from({ length: 6000 }, (_, i) => ({ a: i, b: 'b', c: 'c', d: 'd', items: Array.from({ length: 10 }, (_, j) => ({ x: j, y: 'y' })) }));
    const started = performance.now();
    const res = await fetch(`http://127.0.0.1:${port}/v1/annotate`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ document: { base64: buildDocx({ body }).toString('base64') }, fields: [], data: { rows } }),
    });
    const afterMs = performance.now() - started;
    expect(res.status).toBe(504);
    expect(await res.json()).toMatchObject({ code: 'PROCESSING_TIMEOUT' });
    expect(afterMs).toBeLessThan(DEADLINE_MS + 1500);
    // The work finishing later does not disturb anything: the next request is served.
    await new Promise((r) => setTimeout(r, 3000));
    expect((await fetch(`http://127.0.0.1:${port}/v1/health`)).status).toBe(200);
    expect(t.logs.filter((l) => /"level":(50|60)/.test(l))).toEqual([]);
  }, 30_000);
});
