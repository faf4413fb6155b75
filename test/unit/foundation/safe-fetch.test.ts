import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isPublicAddress, safeFetch } from '../../../src/inputs/safe-fetch.js';
import { AppError } from '../../../src/errors/app-error.js';

let server: http.Server;
let hits = 0;
let base = '';

beforeAll(async () => {
  server = http.createServer((req, res) => {
    hits++;
    if (req.url === '/redirect-private') {
      res.writeHead(302, { location: 'http://169.254.169.254/latest/meta-data/' });
      return res.end();
    }
    if (req.url === '/big') return res.end(Buffer.alloc(5000));
    res.end('hello');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const opts = { allowHttp: true, maxBytes: 1000, timeoutMs: 2000 };

async function failure(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'resolved';
  } catch (err) {
    return err instanceof AppError ? err.code : String(err);
  }
}

describe('SSRF-safe fetching', () => {
  it('classifies addresses', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1']) {
      expect(isPublicAddress(a, a.includes(':') ? 6 : 4), a).toBe(false);
    }
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700::1111']) expect(isPublicAddress(a, a.includes(':') ? 6 : 4), a).toBe(true);
  });

  it('never connects to loopback, private or metadata addresses, by IP or by name', async () => {
    const before = hits;
    expect(await failure(safeFetch(`${base}/x`, opts))).toBe('URL_NOT_ALLOWED');
    expect(await failure(safeFetch(base.replace('127.0.0.1', 'localhost') + '/x', opts))).toBe('URL_NOT_ALLOWED');
    expect(await failure(safeFetch('http://169.254.169.254/latest', opts))).toBe('URL_NOT_ALLOWED');
    expect(await failure(safeFetch('http://[::1]/', opts))).toBe('URL_NOT_ALLOWED');
    expect(hits).toBe(before);
  });

  it('refuses plain http unless allowed, and other schemes always', async () => {
    expect(await failure(safeFetch('http://example.com/', { ...opts, allowHttp: false }))).toBe('URL_NOT_ALLOWED');
    expect(await failure(safeFetch('file:///etc/passwd', opts))).toBe('URL_NOT_ALLOWED');
    expect(await failure(safeFetch('ftp://example.com/x', opts))).toBe('URL_NOT_ALLOWED');
  });

  it('checks every redirect hop and enforces the size limit', async () => {
    const loopbackAllowed = { ...opts, isAddressAllowed: (a: string, f: number) => a === '127.0.0.1' || isPublicAddress(a, f) };
    expect((await safeFetch(`${base}/ok`, loopbackAllowed)).toString()).toBe('hello');
    expect(await failure(safeFetch(`${base}/redirect-private`, loopbackAllowed))).toBe('URL_NOT_ALLOWED');
    expect(await failure(safeFetch(`${base}/big`, loopbackAllowed))).toBe('FILE_TOO_LARGE');
  });
});
