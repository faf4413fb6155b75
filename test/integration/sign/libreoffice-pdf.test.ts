import { createHash, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildTestApp } from '../../support/test-app.js';
import { libreOfficeVerifyPdf, type LibreOfficeSignature } from './libreoffice-verify.js';
import { flipByteInSignedRange } from './pdf-update.js';
import { createTestPki, type TestPki } from './pki.js';
import { ecdsaP12, signRoutesFor, trustInNss } from './route-signing.js';
import { CORPUS_DIR } from '../../support/corpus.js';

/**
 * LibreOffice 7.4 as an independent PDF signature verifier (NSS for the CMS, its own PDF reader):
 * every PDF POST /v1/sign produces must be reported valid, a one-byte change must not.
 */
const corpus = (p: string) => readFileSync(path.join(`${CORPUS_DIR}`, p));
const sha256 = (der: Buffer) => createHash('sha256').update(der).digest('hex');
const pemDer = (pem: string) => Buffer.from(new X509Certificate(pem).raw);

let pki: TestPki;
let app: FastifyInstance;
let serviceLeaf: string;
const pdfs: Record<string, Buffer> = {};
const plain: Record<string, LibreOfficeSignature[]> = {};
const trusted: Record<string, LibreOfficeSignature[]> = {};

beforeAll(async () => {
  pki = createTestPki();
  ({ app } = await buildTestApp({ REDIS_URL: inject('redisUrl'), API_KEY_PEPPER: 'lo-pdf-pepper-0123456789abcdef', RATE_LIMIT_MAX: '1000', DATA_DIR: path.join(pki.dir, 'data') }));
  const routes = await signRoutesFor(app, 'lo-pdf@example.com');
  const chain = await routes.serviceChain();
  serviceLeaf = sha256(pemDer(chain[0]));
  trustInNss(pki, chain);
  const p12 = { data: ecdsaP12(pki, 'ec-secret'), passphrase: 'ec-secret' };

  pdfs.service = await routes.sign(corpus('pdf-unsigned/signpdf-w3dummy.pdf'));
  pdfs.ecdsa = await routes.sign(corpus('pdf-unsigned/signpdf-formexample.pdf'), { signer: 'Erin C. Dsa', p12 });
  pdfs.twice = await routes.sign(pdfs.service, { signer: 'Second Signer', p12 });
  pdfs.thrice = await routes.sign(pdfs.twice, { signer: 'Third Signer' });
  pdfs.flipped = flipByteInSignedRange(pdfs.service).tampered;
  const order = Object.keys(pdfs);
  const [withoutTrust, withTrust] = [await libreOfficeVerifyPdf(order.map((k) => pdfs[k])), await libreOfficeVerifyPdf(order.map((k) => pdfs[k]), pki.nssDir)];
  order.forEach((k, i) => {
    plain[k] = withoutTrust[i];
    trusted[k] = withTrust[i];
  });
}, 240_000);

afterAll(async () => {
  await app?.close();
  pki?.cleanup();
});

describe('LibreOffice verifies PDFs signed by POST /v1/sign', () => {
  it('service identity (RSA): one valid signature by the service certificate', () => {
    expect(plain.service).toHaveLength(1);
    expect(plain.service[0]).toMatchObject({ valid: true, partial: false });
    expect(plain.service[0].signerSha256).toBe(serviceLeaf);
  });

  it("caller's ECDSA P-256 PKCS#12: valid, signed by that certificate", () => {
    expect(plain.ecdsa).toHaveLength(1);
    expect(plain.ecdsa[0]).toMatchObject({ valid: true, partial: false });
    expect(plain.ecdsa[0].signerSha256).toBe(sha256(Buffer.from(pki.ec.certificate.raw)));
    expect(plain.ecdsa[0].signer).toContain('docproc test ec');
  });

  // LibreOffice's "partial" for a PDF signature means a later revision that no later signature
  // covers; a revision that only adds the next signature keeps the first one complete.
  it('signed twice: both signatures valid, neither partial (the only later revision is the second signature)', () => {
    expect(plain.twice).toHaveLength(2);
    const [first, second] = plain.twice;
    expect(first).toMatchObject({ valid: true, partial: false, signerSha256: serviceLeaf });
    expect(second).toMatchObject({ valid: true, partial: false });
    expect(second.signerSha256).toBe(sha256(Buffer.from(pki.ec.certificate.raw)));
  });

  it('signed three times (service, caller PKCS#12, service): all three signatures valid', () => {
    expect(plain.thrice).toHaveLength(3);
    expect(plain.thrice.map((s) => s.valid)).toEqual([true, true, true]);
    expect(plain.thrice.map((s) => s.signerSha256)).toEqual([serviceLeaf, sha256(Buffer.from(pki.ec.certificate.raw)), serviceLeaf]);
    expect(trusted.thrice.map((s) => [s.valid, s.certificateStatus])).toEqual([[true, 0], [true, 0], [true, 0]]);
  });

  it('one flipped byte inside the signed range: invalid', () => {
    expect(plain.flipped).toHaveLength(1);
    expect(plain.flipped[0].valid).toBe(false);
  });

  it('certificate status: UNKNOWN without trust information, OK once the roots are in the NSS database', () => {
    for (const k of ['service', 'ecdsa']) {
      expect(plain[k][0].certificateStatusNames, k).toEqual(['UNKNOWN']);
      expect(trusted[k][0], k).toMatchObject({ valid: true, certificateStatus: 0, certificateStatusNames: ['OK'] });
    }
    expect(trusted.twice.map((s) => [s.valid, s.certificateStatus])).toEqual([[true, 0], [true, 0]]);
    expect(trusted.flipped[0].valid).toBe(false);
  });
});
