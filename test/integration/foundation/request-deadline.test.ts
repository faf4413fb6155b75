import net, { type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { issueTestKey } from '../../support/api-key.js';
import { buildTestApp, type TestApp } from '../../support/test-app.js';

/** REQUEST_TIMEOUT_MS bounds the whole request, enforced on time: a stalled upload, a slow job. */
const DEADLINE_MS = 2000;
/** The slow job's deadline: about a third of the 3 s or more its render takes, so that no machine is fast enough to finish. */
const PROCESSING_DEADLINE_MS = 1000;
let t: TestApp;
let fast: TestApp;
let key: string;
let fastKey: string;
let port: number;

beforeAll(async () => {
  t = await buildTestApp({ API_KEY_PEPPER: 'deadline-pepper-0123456789', REQUEST_TIMEOUT_MS: String(DEADLINE_MS), RATE_LIMIT_MAX: '1000' });
  key = await issueTestKey(t.app, 'deadline@example.com');
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  port = (t.app.server.address() as AddressInfo).port;
  fast = await buildTestApp({ API_KEY_PEPPER: 'deadline-pepper-0123456789', REQUEST_TIMEOUT_MS: String(PROCESSING_DEADLINE_MS), RATE_LIMIT_MAX: '1000' });
  fastKey = await issueTestKey(fast.app, 'deadline-fast@example.com');
  await fast.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t?.app.close();
  await fast?.app.close();
});

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
    // 600 KB of Markdown tables and lists: several seconds of worker time anywhere (a 2 MB file takes
    // 26 s on the CI machine), far past this app's 1 s deadline.
    const section = (n: number) => `## Section ${n}\n\n| a | b | c |\n|---|---|---|\n${'| *x* | **y** | `z` |\n'.repeat(40)}\n${'- item with [a link](https://example.com) and *emphasis*\n'.repeat(40)}\n`;
    const markdown = Array.from({ length: 200 }, (_, n) => section(n)).join('');
    const form = new FormData();
    form.append('file', new Blob([markdown], { type: 'text/markdown' }), 'big.md');
    const fastPort = (fast.app.server.address() as AddressInfo).port;
    const started = performance.now();
    const res = await fetch(`http://127.0.0.1:${fastPort}/v1/convert?from=md&to=docx`, {
      method: 'POST',
      headers: { authorization: `Bearer ${fastKey}` },
      body: form,
    });
    const afterMs = performance.now() - started;
    expect(res.status).toBe(504);
    expect(await res.json()).toMatchObject({ code: 'PROCESSING_TIMEOUT' });
    expect(afterMs).toBeLessThan(PROCESSING_DEADLINE_MS + 1500);
    // The work finishing later does not disturb anything: the next request is served.
    await new Promise((r) => setTimeout(r, 3000));
    expect((await fetch(`http://127.0.0.1:${fastPort}/v1/health`)).status).toBe(200);
    expect(fast.logs.filter((l) => /"level":(50|60)/.test(l))).toEqual([]);
  }, 30_000);
});
