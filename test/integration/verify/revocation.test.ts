import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseCert } from '../../../src/documents/verify/cms/certificates.js';
import { EvidenceProblem, readCrl, readOcspResponse } from '../../../src/documents/verify/revocation/evidence.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { startRevocationPki, type RevocationPki } from '../../support/revocation-pki.js';
import { buildTestApp } from '../../support/test-app.js';
import { createTestPki, type TestPki } from '../sign/pki.js';
import { signRoutesFor, type SignRoutes } from '../sign/route-signing.js';
import { startTsa } from '../sign/tsa-server.js';

/**
 * Revocation checking in verify against a test PKI on loopback made with openssl: its own CA, an
 * `openssl ocsp` responder with a delegated responder certificate, a CRL over HTTP, and the loopback
 * TSA for proof of time. Signatures are made by POST /v1/sign with caller PKCS#12 files.
 */
const PDF = readFileSync(path.join(CORPUS_DIR, 'pdf-unsigned/signpdf-w3dummy.pdf'));

let pki: TestPki;
let revocation: RevocationPki;
let tsa: Awaited<ReturnType<typeof startTsa>>;
let online: { app: FastifyInstance; routes: SignRoutes };
let offline: { app: FastifyInstance; routes: SignRoutes };
let noTsa: { app: FastifyInstance; routes: SignRoutes };
const signed: Record<string, Buffer> = {};

async function appWith(env: Record<string, string>, name: string) {
  const { app } = await buildTestApp({
    REDIS_URL: inject('redisUrl'), API_KEY_PEPPER: 'revocation-pepper-0123456789abcdef', RATE_LIMIT_MAX: '1000',
    DATA_DIR: path.join(pki.dir, `data-${name}`), TRUST_ROOTS: path.join(pki.dir, 'root.pem'), OUTBOUND_ALLOW_PRIVATE_ADDRESSES: 'true', ...env,
  });
  return { app, routes: await signRoutesFor(app, `revocation-${name}@example.com`) };
}

const p12 = (name: string) => ({ data: readFileSync(path.join(pki.dir, `${name}.p12`)), passphrase: 'pw' });

beforeAll(async () => {
  pki = createTestPki();
  tsa = await startTsa(pki);
  revocation = await startRevocationPki(pki.dir);
  revocation.issueLeaf('good', { ocsp: true, crl: true });
  revocation.issueLeaf('revoked-before', { ocsp: true, crl: true });
  revocation.issueLeaf('revoked-after', { ocsp: true, crl: true });
  revocation.issueLeaf('revoked-no-poe', { ocsp: true });
  revocation.issueLeaf('crl-only', { crl: true });
  revocation.issueLeaf('responder-down', { deadOcsp: true });
  online = await appWith({ TSA_URL: tsa.url, REVOCATION_FETCH: 'true', REVOCATION_TIMEOUT_MS: '2000' }, 'online');
  offline = await appWith({ TSA_URL: tsa.url }, 'offline');
  noTsa = await appWith({ REVOCATION_FETCH: 'true' }, 'no-tsa');

  await revocation.revoke('revoked-before');
  await revocation.revoke('crl-only');
  await new Promise((r) => setTimeout(r, 1_100)); // signing times strictly after those revocations
  for (const name of ['good', 'revoked-before', 'revoked-after', 'crl-only', 'responder-down']) {
    signed[name] = await online.routes.sign(PDF, { signer: name, p12: p12(name) });
  }
  signed['revoked-no-poe'] = await noTsa.routes.sign(PDF, { signer: 'no poe', p12: p12('revoked-no-poe') });
  await new Promise((r) => setTimeout(r, 1_100)); // these revocations come strictly after the time-stamps
  await revocation.revoke('revoked-after');
  await revocation.revoke('revoked-no-poe');
}, 180_000);

afterAll(async () => {
  await Promise.all([online?.app.close(), offline?.app.close(), noTsa?.app.close()]);
  await revocation?.close();
  await tsa?.close();
  pki?.cleanup();
});

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const signatureOf = (report: any) => report.signatures[0];

describe('verify asks OCSP responders and CRLs (REVOCATION_FETCH=true)', () => {
  it('a good certificate passes, its status from the OCSP responder', async () => {
    const sig = signatureOf(await online.routes.verify(signed.good!));
    expect(sig.indication, JSON.stringify(sig.errors)).toBe('TOTAL_PASSED');
    expect(sig.timestamp?.valid).toBe(true);
    expect(sig.revocation).toHaveLength(1);
    expect(sig.revocation[0]).toMatchObject({ status: 'good', source: 'ocsp-fetched', method: 'ocsp', subject: expect.stringContaining('revocation good') });
  });

  it('revoked before the time-stamped signing time: TOTAL_FAILED/REVOKED with the reason', async () => {
    const sig = signatureOf(await online.routes.verify(signed['revoked-before']!));
    expect(sig).toMatchObject({ indication: 'TOTAL_FAILED', subIndication: 'REVOKED' });
    expect(sig.revocation[0]).toMatchObject({ status: 'revoked', source: 'ocsp-fetched', reason: 'keyCompromise' });
    expect(new Date(sig.revocation[0].revokedAt).getTime()).toBeLessThan(new Date(sig.timestamp.time).getTime());
  });

  it('revoked after the time-stamp: still TOTAL_PASSED, with a warning naming the revocation', async () => {
    const sig = signatureOf(await online.routes.verify(signed['revoked-after']!));
    expect(sig.indication, JSON.stringify(sig.errors)).toBe('TOTAL_PASSED');
    expect(sig.revocation[0]).toMatchObject({ status: 'revoked', source: 'ocsp-fetched' });
    expect(sig.warnings.join(' ')).toMatch(/revoked .* after the time-stamp/);
  });

  it('revoked without a time-stamp: INDETERMINATE/REVOKED_NO_POE', async () => {
    const sig = signatureOf(await noTsa.routes.verify(signed['revoked-no-poe']!));
    expect(sig).toMatchObject({ indication: 'INDETERMINATE', subIndication: 'REVOKED_NO_POE' });
    expect(sig.timestamp).toBeNull();
  });

  it('a certificate that names only a CRL is checked against it', async () => {
    const sig = signatureOf(await online.routes.verify(signed['crl-only']!));
    expect(sig).toMatchObject({ indication: 'TOTAL_FAILED', subIndication: 'REVOKED' });
    expect(sig.revocation[0]).toMatchObject({ status: 'revoked', source: 'crl-fetched', method: 'crl', reason: 'keyCompromise' });
  });

  it('a responder that is down: INDETERMINATE/TRY_LATER, the failure named', async () => {
    const sig = signatureOf(await online.routes.verify(signed['responder-down']!));
    expect(sig).toMatchObject({ indication: 'INDETERMINATE', subIndication: 'TRY_LATER' });
    expect(sig.revocation[0]).toMatchObject({ status: 'unknown', source: 'none' });
    expect(sig.revocation[0].problems.join(' ')).toContain(revocation.deadUrl);
  });
});

describe('without REVOCATION_FETCH (the default)', () => {
  it('nothing is fetched: the status is notChecked and the verdict does not change', async () => {
    for (const name of ['good', 'revoked-before']) {
      const sig = signatureOf(await offline.routes.verify(signed[name]!));
      expect(sig.indication, name).toBe('TOTAL_PASSED');
      expect(sig.revocation[0]).toMatchObject({ status: 'notChecked', source: 'none' });
    }
  });
});

describe('the evidence readers', () => {
  const certOf = (name: string) => parseCert(new Uint8Array(Buffer.from(readFileSync(path.join(pki.dir, `${name}.pem`), 'utf8').replace(/-----[^-]+-----|\s/g, ''), 'base64')))!;

  it('read openssl OCSP responses and CRLs, and refuse them for another certificate or with a broken signature', () => {
    const root = certOf('root');
    const good = certOf('good');
    const revoked = certOf('revoked-before');
    expect(readOcspResponse(revocation.ocspResponseFor('good'), good, root, new Date())).toMatchObject({ status: 'good', method: 'ocsp' });
    expect(readOcspResponse(revocation.ocspResponseFor('revoked-before'), revoked, root, new Date())).toMatchObject({ status: 'revoked', reason: 'keyCompromise' });
    expect(() => readOcspResponse(revocation.ocspResponseFor('good'), revoked, root, new Date())).toThrow(/another certificate/);
    const tampered = Buffer.from(revocation.ocspResponseFor('good'));
    tampered[tampered.length - 10]! ^= 0xff;
    expect(() => readOcspResponse(tampered, good, root, new Date())).toThrow(EvidenceProblem);
    expect(() => readOcspResponse(revocation.ocspResponseFor('good'), good, root, new Date(), new Uint8Array(16))).toThrow(/nonce/);
    expect(readCrl(revocation.crlDer(), revoked, root)).toMatchObject({ status: 'revoked', method: 'crl', reason: 'keyCompromise' });
    expect(readCrl(revocation.crlDer(), good, root)).toMatchObject({ status: 'good' });
    const crl = Buffer.from(revocation.crlDer());
    crl[crl.length - 5]! ^= 0xff;
    expect(() => readCrl(crl, good, root)).toThrow(/signature/);
    // The responder's own certificate is not the issuer: a response it signs for a foreign CA is refused.
    expect(() => readOcspResponse(revocation.ocspResponseFor('good'), good, certOf('ocsp-responder'), new Date())).toThrow(EvidenceProblem);
  });
});
