import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { issueTestKey } from '../../support/api-key.js';
import type { TestPki } from './pki.js';

/** Signing and verifying through the real routes (POST /v1/sign, POST /v1/verify, GET /v1/verify/key). */
export class SignRoutes {
  /** The x-docproc-warnings of the last sign() call, decoded. */
  lastWarnings: string[] = [];

  constructor(private readonly app: FastifyInstance, readonly key: string) {}

  private headers() {
    return { authorization: `Bearer ${this.key}`, 'content-type': 'application/json' };
  }

  /** POST /v1/sign with a JSON body; `p12` signs with the caller's PKCS#12 instead of the service identity. */
  async sign(document: Buffer, options: { signer?: string; reason?: string; p12?: { data: Buffer; passphrase: string } } = {}): Promise<Buffer> {
    const body = {
      document: { base64: document.toString('base64') },
      signer: { name: options.signer ?? 'Jane Q. Signer', email: 'jane@example.com', ip: '203.0.113.7' },
      auditTrail: [
        { type: 'ready', timestamp: '2025-03-01T09:00:00.000Z' },
        { type: 'submit', timestamp: '2025-03-01T09:01:00.000Z' },
      ],
      eventId: 'evt-tamper',
      reason: options.reason ?? 'I approve this document',
      ...(options.p12 ? { p12: { base64: options.p12.data.toString('base64'), passphrase: options.p12.passphrase } } : {}),
    };
    const res = await this.app.inject({ method: 'POST', url: '/v1/sign', headers: { ...this.headers(), accept: 'application/pdf' }, payload: JSON.stringify(body) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    const header = res.headers['x-docproc-warnings'];
    this.lastWarnings = typeof header === 'string' ? header.split(', ').map((w) => decodeURIComponent(w)) : [];
    return res.rawPayload;
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  async verify(document: Buffer): Promise<any> {
    const res = await this.app.inject({ method: 'POST', url: '/v1/verify', headers: this.headers(), payload: JSON.stringify({ document: { base64: document.toString('base64') } }) });
    expect(res.statusCode, res.body).toBe(200);
    return res.json();
  }

  /** The service's certificate chain as PEM strings, signer first. */
  async serviceChain(): Promise<string[]> {
    const res = await this.app.inject({ method: 'GET', url: '/v1/verify/key', headers: { authorization: `Bearer ${this.key}` } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json().chain as string[];
  }
}

/** Routes with a fresh API key; waits for the key store first (a loaded machine can take seconds to connect to Redis). */
export async function signRoutesFor(app: FastifyInstance, email: string): Promise<SignRoutes> {
  if (!(await app.services.store.connected(30_000))) throw new Error('the key store (Redis) did not connect');
  return new SignRoutes(app, await issueTestKey(app, email));
}

/** A PKCS#12 of the test PKI's ECDSA (P-256) certificate and key, exported by openssl. */
export function ecdsaP12(pki: TestPki, passphrase: string): Buffer {
  const out = path.join(pki.dir, 'ec.p12');
  execFileSync('openssl', ['pkcs12', '-export', '-in', 'ec.pem', '-inkey', 'ec.key', '-certfile', 'root.pem', '-passout', `pass:${passphrase}`, '-out', out], { cwd: pki.dir, stdio: ['ignore', 'pipe', 'pipe'] });
  return readFileSync(out);
}

/** Adds the service's root (the last certificate of its chain) to the test PKI's NSS database, trusted for signing. */
export function trustInNss(pki: TestPki, chain: string[]): void {
  const file = path.join(pki.dir, 'service-root.pem');
  writeFileSync(file, chain[chain.length - 1]);
  execFileSync('certutil', ['-A', '-n', 'docproc service root', '-t', 'CT,C,C', '-i', file, '-d', `sql:${pki.nssDir}`], { stdio: ['ignore', 'pipe', 'pipe'] });
}
