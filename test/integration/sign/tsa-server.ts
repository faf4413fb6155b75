import { execFileSync } from 'node:child_process';
import { rmSync, readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { TestPki } from './pki.js';

/** A tiny RFC 3161 TSA on loopback: each query is answered by `openssl ts -reply`. */
export async function startTsa(pki: TestPki): Promise<{ url: string; requests: () => number; close: () => Promise<void> }> {
  let count = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      count++;
      const id = `${process.pid}-${count}`;
      const query = path.join(pki.dir, `tsq-${id}`);
      const reply = path.join(pki.dir, `tsr-${id}`);
      try {
        writeFileSync(query, Buffer.concat(chunks));
        execFileSync('openssl', ['ts', '-reply', '-config', pki.tsaConfig, '-queryfile', query, '-inkey', pki.tsaKey, '-signer', pki.tsaCert, '-out', reply], { stdio: 'ignore' });
        res.writeHead(200, { 'content-type': 'application/timestamp-reply' }).end(readFileSync(reply));
      } catch {
        res.writeHead(500).end();
      } finally {
        rmSync(query, { force: true });
        rmSync(reply, { force: true });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/tsa`, requests: () => count, close: () => new Promise((r) => server.close(() => r())) };
}
