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
import { hostilePkcs12 } from '../../support/pkcs12-hostile.js';

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

function sign(p12: Buffer | undefined, passphrase?: string, apiKey = key) {
  const body = {
    document: { base64: pdf().toString('base64') },
    signer: { name: 'Edge Case', email: 'edge@example.com' },
    auditTrail: [{ type: 'submit', timestamp: '2025-03-01T09:01:00.000Z' }],
    ...(p12 ? { p12: { base64: p12.toString('base64'), ...(passphrase === undefined ? {} : { passphrase }) } } : {}),
  };
  return app.inject({ method: 'POST', url: '/v1/sign', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'application/pdf' }, payload: JSON.stringify(body) });
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

describe('PKCS#12 key-derivation work is bounded per file (issue 26 item 2)', () => {
  it('a 4 KB PKCS#12 of 20 shrouded keys × 1 000 000 iterations is refused at once with 422 DOCUMENT_TOO_COMPLEX; another key signs meanwhile', async () => {
    const hostile = hostilePkcs12(20, 1_000_000);
    expect(hostile.length).toBeLessThan(4096);
    const otherKey = await issueTestKey(app, 'p12-bystander@example.com');
    const started = performance.now();
    const timed = async (request: Promise<Awaited<ReturnType<typeof sign>>>) => {
      const res = await request;
      return { res, ms: performance.now() - started };
    };
    // Two hostile files (they took every worker for the whole 60 s deadline before) and a bystander's sign.
    const [first, second, bystander] = await Promise.all([timed(sign(hostile, '')), timed(sign(hostile, 'pw')), timed(sign(undefined, undefined, otherKey))]);
    for (const { res } of [first, second]) {
      expect(res.statusCode, res.body.slice(0, 300)).toBe(422);
      expect(res.json()).toMatchObject({ code: 'DOCUMENT_TOO_COMPLEX', limit: { name: 'sign.p12KdfRounds', max: 1_000_000 } });
      expect(res.json().detail).toMatch(/6[12],000,000 key-derivation rounds/);
    }
    expect(bystander.res.statusCode, bystander.res.body.slice(0, 300)).toBe(200);
    // Generous against a loaded machine: deriving the keys would take minutes.
    expect(Math.max(first.ms, second.ms)).toBeLessThan(10_000);
    console.log(`hostile PKCS#12 (${hostile.length} bytes) refused in ${first.ms.toFixed(0)} / ${second.ms.toFixed(0)} ms; bystander's sign ${bystander.ms.toFixed(0)} ms`);
  });
});
