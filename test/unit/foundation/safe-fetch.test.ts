import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { isPublicAddress, safeFetch } from '../../../src/inputs/safe-fetch.js';
import { DomainError } from '../../../src/errors/domain-error.js';

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
    if (req.url === '/redirect-elsewhere') {
      res.writeHead(302, { location: 'http://not-on-the-list.example/x' });
      return res.end();
    }
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => res.end(`posted ${Buffer.concat(chunks).toString()}`));
      return;
    }
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
    return err instanceof DomainError ? err.code : String(err);
  }
}

describe('SSRF-safe fetching', () => {
  it('classifies addresses', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1']) {
      expect(isPublicAddress(a, a.includes(':') ? 6 : 4), a).toBe(false);
    }
    for (const a of ['93.184.216.34', '8.8.8.8', '2606:4700::1111']) expect(isPublicAddress(a, a.includes(':') ? 6 : 4), a).toBe(true);
  });

  it('a connection opened under a permissive policy never serves a strict one (no pooled socket skips the address check)', async () => {
    const byName = `${base.replace('127.0.0.1', 'localhost')}/x`;
    expect((await safeFetch(byName, { ...opts, isAddressAllowed: () => true })).toString()).toBe('hello');
    const before = hits;
    expect(await failure(safeFetch(byName, opts))).toBe('URL_NOT_ALLOWED');
    expect(hits).toBe(before);
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

  it('blocks every IPv6 form that carries an IPv4 address', () => {
    for (const a of [
      '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe', '::127.0.0.1', '::a00:1', '::', '::ffff:0:a00:1',
      '64:ff9b::7f00:1', '64:ff9b::808:808', '64:ff9b:1::a00:1', '2002:7f00:1::1', '2002:c0a8:101::', '2001:0:4136:e378:8000:63bf:3fff:fdd2',
    ]) expect(isPublicAddress(a, 6), a).toBe(false);
  });

  it('applies the host allow-list to every redirect hop', async () => {
    const listed = { ...opts, isAddressAllowed: () => true, isHostAllowed: (h: string) => h === '127.0.0.1' };
    expect((await safeFetch(`${base}/ok`, listed)).toString()).toBe('hello');
    expect(await failure(safeFetch(`${base}/redirect-elsewhere`, listed))).toBe('URL_NOT_ALLOWED');
    expect(await failure(safeFetch('http://not-on-the-list.example/', listed))).toBe('URL_NOT_ALLOWED');
  });

  it('answers every network failure the same way (no port-scan oracle)', async () => {
    const anywhere = { ...opts, timeoutMs: 1500, isAddressAllowed: () => true };
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    const silent = http.createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    const answers = await Promise.all(
      [`http://127.0.0.1:${closedPort}/`, `http://127.0.0.1:${(silent.address() as AddressInfo).port}/`, 'http://no-such-host.invalid/'].map(async (url) => {
        try {
          await safeFetch(url, anywhere);
          return 'resolved';
        } catch (err) {
          return `${(err as DomainError).code} ${(err as DomainError).message}`;
        }
      }),
    );
    silent.closeAllConnections();
    await new Promise<void>((r) => silent.close(() => r()));
    expect(new Set(answers).size).toBe(1);
    expect(answers[0]).toBe('URL_FETCH_FAILED The URL could not be fetched.');
  });

  it('OUTBOUND_ALLOW_PRIVATE_ADDRESSES reaches loopback; POST bodies go through the same guard', async () => {
    expect(await failure(safeFetch(`${base}/ok`, opts))).toBe('URL_NOT_ALLOWED');
    expect((await safeFetch(`${base}/ok`, { ...opts, allowPrivateAddresses: true })).toString()).toBe('hello');
    const posted = await safeFetch(`${base}/post`, { ...opts, allowPrivateAddresses: true, method: 'POST', body: Buffer.from('query'), headers: { 'content-type': 'application/timestamp-query' } });
    expect(posted.toString()).toBe('posted query');
    expect(await failure(safeFetch(`${base}/post`, { ...opts, method: 'POST', body: Buffer.from('query') }))).toBe('URL_NOT_ALLOWED');
  });
});
