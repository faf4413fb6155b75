import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CORPUS_DIR } from '../../support/corpus.js';
import { issueTestKey } from '../../support/api-key.js';
import { buildTestApp } from '../../support/test-app.js';
import { makeLeaf, makeRoot, type TestIdentity } from '../../unit/verify/helpers/pki.js';

/**
 * Caller PKCS#12 files at the edges: certificates that cannot make a lasting signature are refused
 * before signing (422 CERTIFICATE_EXPIRED), and a PKCS#12 with an empty password opens whether the
 * caller sends "" or no passphrase at all, in each encoding OpenSSL writes.
 */
let app: FastifyInstance;
let key: string;
let dir: string;
const pdf = () => readFileSync(path.join(CORPUS_DIR, 'pdf-unsigned/signpdf-w3dummy.pdf'));

function p12Of(identity: TestIdentity, password: string, extra: string[] = []): Buffer {
  writeFileSync(path.join(dir, 'cert.pem'), identity.pem);
  writeFileSync(path.join(dir, 'key.pem'), identity.keyPem);
  const out = path.join(dir, `id-${process.hrtime.bigint()}.p12`);
  execFileSync('openssl', ['pkcs12', '-export', '-in', 'cert.pem', '-inkey', 'key.pem', '-passout', `pass:${password}`, ...extra, '-out', out], { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
  const data = readFileSync(out);
  rmSync(out);
  return data;
}

function sign(p12: Buffer, passphrase?: string) {
  const body = {
    document: { base64: pdf().toString('base64') },
    signer: { name: 'Edge Case', email: 'edge@example.com' },
    auditTrail: [{ type: 'submit', timestamp: '2025-03-01T09:01:00.000Z' }],
    p12: { base64: p12.toString('base64'), ...(passphrase === undefined ? {} : { passphrase }) },
  };
  return app.inject({ method: 'POST', url: '/v1/sign', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/pdf' }, payload: JSON.stringify(body) });
}

let root: TestIdentity;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'docproc-p12-'));
  ({ app } = await buildTestApp({ REDIS_URL: inject('redisUrl'), API_KEY_PEPPER: 'p12-edges-pepper-0123456789abcdef', RATE_LIMIT_MAX: '1000' }));
  if (!(await app.services.store.connected(30_000))) throw new Error('the key store (Redis) did not connect');
  key = await issueTestKey(app, 'p12-edges@example.com');
  root = makeRoot();
}, 120_000);

afterAll(async () => {
  await app?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('caller certificates that cannot make a lasting signature', () => {
  it.each([
    ['expired', { expired: true }, /expired on 2002-01-01/],
    ['not yet valid', { notYetValid: true }, /not valid yet/],
  ] as const)('%s: 422 CERTIFICATE_EXPIRED in the problem format, nothing signed', async (_label, options, message) => {
    const res = await sign(p12Of(makeLeaf(root, options), 'pw'), 'pw');
    expect(res.statusCode).toBe(422);
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(res.json()).toMatchObject({ status: 422, code: 'CERTIFICATE_EXPIRED' });
    expect(res.json().detail ?? res.json().message ?? '').toMatch(message);
  });

  it('a current certificate from the same CA signs', async () => {
    const res = await sign(p12Of(makeLeaf(root), 'pw'), 'pw');
    expect(res.statusCode, res.body).toBe(200);
  });
});

describe('PKCS#12 with an empty password', () => {
  it.each([
    ['PBES2/AES (OpenSSL 3 default)', []],
    ['legacy RC2/3DES', ['-legacy']],
    ['no encryption, no MAC', ['-nomac', '-keypbe', 'NONE', '-certpbe', 'NONE']],
  ] as const)('%s: opens with "" and with no passphrase alike', async (_label, extra) => {
    const p12 = p12Of(makeLeaf(root), '', [...extra]);
    for (const passphrase of ['', undefined]) {
      const res = await sign(p12, passphrase);
      expect(res.statusCode, `${String(passphrase)}: ${res.body.slice(0, 300)}`).toBe(200);
      expect(res.rawPayload.subarray(0, 5).toString()).toBe('%PDF-');
    }
  });
});
