import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parseCert } from '../../../src/documents/pki/certificates.js';
import { EvidenceProblem, readCrl, readOcspResponse } from '../../../src/documents/pki/revocation/evidence.js';
import { CORPUS_DIR } from '../../support/corpus.js';
import { startRevocationPki, type RevocationPki } from '../../support/revocation-pki.js';
import { buildTestApp } from '../../support/test-app.js';
import { verifyPdf } from '../../../src/documents/verify/index.js';
import { createTestPki, pdfsig, type TestPki } from '../sign/pki.js';
import { signRoutesFor, type SignRoutes } from '../sign/route-signing.js';
import { libreOfficeVerifyPdf } from '../sign/libreoffice-verify.js';
import { startTsa } from '../sign/tsa-server.js';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { TestPdf } from '../../unit/verify/helpers/pdf.js';
import type { TestIdentity } from '../../unit/verify/helpers/pki.js';
import { Pyhanko } from '../../support/pyhanko.js';

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
let key: string;

/** POST /v1/sign on the online app with a caller PKCS#12, at a PAdES level (or `extend` of a signed PDF). */
async function signAt(document: Buffer, options: { level?: string; extend?: string; p12Name?: string }): Promise<Buffer> {
  const body = options.extend
    ? { document: { base64: document.toString('base64') }, extend: options.extend }
    : {
      document: { base64: document.toString('base64') },
      signer: { name: 'Level Signer', email: 'level@example.com' },
      auditTrail: [{ type: 'submit', timestamp: '2025-03-01T09:01:00.000Z' }],
      p12: { base64: readFileSync(path.join(pki.dir, `${options.p12Name ?? 'good'}.p12`)).toString('base64'), passphrase: 'pw' },
    };
  const res = await online.app.inject({
    method: 'POST', url: `/v1/sign${options.level ? `?level=${options.level}` : ''}`,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/pdf' }, payload: JSON.stringify(body),
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.rawPayload;
}

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
  revocation.issueLeaf('short-lived', { ocsp: true, days: 2 });
  // Issued before the responder restarts below, so that it knows them.
  revocation.issueLeaf('revoked-backdated', { ocsp: true });
  revocation.issueLeaf('fresh-check', { ocsp: true });
  revocation.issueLeaf('pyhanko-lt', { ocsp: true, crl: true });
  online = await appWith({ TSA_URL: tsa.url, REVOCATION_FETCH: 'true', REVOCATION_TIMEOUT_MS: '2000' }, 'online');
  key = online.routes.key;
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

  it('damaged OCSP responses and CRLs (as a hostile DSS carries them) end in a verdict or EvidenceProblem, never another error', () => {
    const root = certOf('root');
    const good = certOf('good');
    const samples = [revocation.ocspResponseFor('good'), revocation.crlDer()];
    const damaged = fc.tuple(fc.constantFrom(0, 1), fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 8 }), fc.option(fc.nat()))
      .map(([which, flips, cut]) => {
        const bytes = Buffer.from(samples[which]!);
        for (const [at, value] of flips) bytes[at % bytes.length] = value;
        return { which, bytes: cut === null ? bytes : bytes.subarray(0, cut % (bytes.length + 1)) };
      });
    let verdicts = 0;
    fc.assert(fc.property(damaged, ({ which, bytes }) => {
      try {
        if (which === 0) readOcspResponse(bytes, good, root, new Date());
        else readCrl(bytes, good, root);
        verdicts++;
      } catch (error) {
        if (!(error instanceof EvidenceProblem)) throw error;
      }
    }), { numRuns: 1500, seed: Number(process.env.FUZZ_SEED ?? 1414) });
    // Flipped bytes mostly break the signature; the few that land in unsigned parts still read.
    expect(verdicts).toBeLessThan(1500);
  });
});

/**
 * Independent checks of a B-LT/B-LTA file: pdfsig must find every CMS signature valid and see the
 * document time-stamp cover the whole file (poppler 22 does not verify RFC 3161 document time-stamps:
 * it lists them as "Signature Type: unknown"), and `openssl ts -verify` checks each document
 * time-stamp token against the bytes its /ByteRange names and the test root.
 */
function expectValidInPdfsigAndOpenssl(pdf: Buffer, count: number): void {
  const checked = pdfsig(pki, pdf);
  expect(checked).toHaveLength(count);
  for (const signature of checked) {
    if (signature.raw.includes('docproc test tsa')) expect(signature.total, signature.raw).toBe(true);
    else expect(signature.valid, signature.raw).toBe(true);
  }
  const text = pdf.toString('latin1');
  const stamps = [...text.matchAll(/\/Type \/DocTimeStamp[^]*?\/ByteRange \[(\d+) (\d+) (\d+) (\d+)\]\s*\/Contents <([0-9A-F]+)>/g)];
  expect(stamps.length).toBeGreaterThan(0);
  for (const [, a, b, c, d, hex] of stamps) {
    const data = Buffer.concat([pdf.subarray(Number(a), Number(a) + Number(b)), pdf.subarray(Number(c), Number(c) + Number(d))]);
    const dataFile = path.join(pki.dir, `tsdata-${process.hrtime.bigint()}`);
    const tokenFile = `${dataFile}.tst`;
    writeFileSync(dataFile, data);
    writeFileSync(tokenFile, Buffer.from(hex!.replace(/(00)+$/, ''), 'hex'));
    const out = execFileSync('openssl', ['ts', '-verify', '-data', dataFile, '-in', tokenFile, '-token_in', '-CAfile', path.join(pki.dir, 'root.pem'), '-untrusted', path.join(pki.dir, 'tsa.pem')], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    expect(out).toContain('Verification: OK');
  }
}

const levelFiles: Buffer[] = [];

describe('PAdES B-LT and B-LTA', () => {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const passed = (report: any) => [...report.signatures, ...report.timestamps].map((s: { kind: string; indication: string; subIndication: string | null; errors: string[] }) => `${s.kind} ${s.indication}${s.subIndication ? `/${s.subIndication}` : ''} ${s.errors.join('; ')}`.trim());

  it('level=B-LT stores the validation data: verify reads the status from the DSS without fetching, pdfsig finds the signature valid', async () => {
    const pdf = await signAt(PDF, { level: 'B-LT' });
    levelFiles.push(pdf);
    const report = await offline.routes.verify(pdf);
    expect(passed(report)).toEqual(['approval TOTAL_PASSED']);
    expect(signatureOf(report).revocation[0]).toMatchObject({ status: 'good', source: 'pdf-dss', method: 'ocsp' });
    expect(pdf.toString('latin1')).toMatch(/\/Type \/DSS \/Certs \[\d+ 0 R[^\]]*\] \/OCSPs \[\d+ 0 R\]/);
    const checked = pdfsig(pki, pdf);
    expect(checked).toHaveLength(1);
    expect(checked[0]).toMatchObject({ valid: true });
  });

  it('level=B-LTA adds a document time-stamp over it all: both verify, in our verifier and in pdfsig', async () => {
    const pdf = await signAt(PDF, { level: 'B-LTA' });
    levelFiles.push(pdf);
    const report = await offline.routes.verify(pdf);
    expect(passed(report)).toEqual(['approval TOTAL_PASSED', 'documentTimestamp TOTAL_PASSED']);
    // DSS and a document time-stamp are archival updates; the TSA signs for nobody.
    expect(report.signatures[0].modificationsAfter).toBe('archival');
    expect(report.signers).toHaveLength(1);
    expect(report.signer).toEqual(report.signers[0]);
    expect(report.signer.name).not.toBe(report.timestamps[0].signer.commonName);
    expectValidInPdfsigAndOpenssl(pdf, 2);
  });

  it('extend raises a signed PDF without signing it again; the archive time-stamp is proof of existence after the certificate expires', async () => {
    const plain = await signAt(PDF, { level: 'B-B', p12Name: 'short-lived' });
    const extended = await signAt(plain, { extend: 'B-LTA' });
    levelFiles.push(extended);
    const now = await offline.routes.verify(extended);
    expect(passed(now)).toEqual(['approval TOTAL_PASSED', 'documentTimestamp TOTAL_PASSED']);
    expect(now.signatures[0].timestamp).toBeNull(); // B-B: no signature time-stamp of its own
    expect(now.signatures[0].revocation[0]).toMatchObject({ status: 'good', source: 'pdf-dss' });
    // Three days later the 2-day certificate has expired: only the archive time-stamp proves the signature is older.
    const later = new Date(Date.now() + 3 * 24 * 3600 * 1000);
    const trustRoots = [readFileSync(path.join(pki.dir, 'root.pem'), 'utf8')];
    expect(passed(verifyPdf(extended, { trustRoots, now: later }))[0]).toBe('approval TOTAL_PASSED');
    expect(passed(verifyPdf(plain, { trustRoots, now: later }))[0]).toMatch(/^approval INDETERMINATE\/OUT_OF_BOUNDS_NO_POE/);
    expectValidInPdfsigAndOpenssl(extended, 2);
  });

  it('LibreOffice finds every CMS signature of the B-LT and B-LTA files valid (it cannot read document time-stamps)', async () => {
    expect(levelFiles).toHaveLength(3);
    const results = await libreOfficeVerifyPdf(levelFiles, pki.nssDir);
    expect(results.map((signatures) => signatures.length)).toEqual([1, 2, 2]);
    for (const signatures of results) {
      expect(signatures[0], JSON.stringify(signatures)).toMatchObject({ valid: true, certificateStatusNames: ['OK'] });
      // LibreOffice 7.4 lists an ETSI.RFC3161 document time-stamp without reading it (no signer, not
      // verified); the token is checked by openssl ts -verify above and by our verifier.
      for (const stamp of signatures.slice(1)) expect(stamp.signer).toBeNull();
    }
  }, 120_000);

  it('level=B-T or B-LTA without a TSA is a 422 naming what is missing; extend of an unsigned PDF is a 422', async () => {
    const res = await noTsa.app.inject({
      method: 'POST', url: '/v1/sign?level=B-LTA',
      headers: { authorization: `Bearer ${noTsa.routes.key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ document: { base64: PDF.toString('base64') }, signer: { name: 'No TSA', email: 'x@example.com' }, auditTrail: [{ type: 'submit', timestamp: '2025-03-01T09:01:00.000Z' }] }),
    });
    expect(res.statusCode, res.body).toBe(422);
    expect(res.json().detail).toMatch(/TSA_URL/);
    const unsigned = await online.app.inject({
      method: 'POST', url: '/v1/sign', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      payload: JSON.stringify({ document: { base64: PDF.toString('base64') }, extend: 'B-LT' }),
    });
    expect(unsigned.statusCode, unsigned.body).toBe(422);
    expect(unsigned.json().detail).toMatch(/no signature/);
  });
});

describe('the time-stamp unit', () => {
  let revocableTsa: Awaited<ReturnType<typeof startTsa>>;
  let stamped: { app: FastifyInstance; routes: SignRoutes };
  let beforeRevocation: Buffer;
  let afterRevocation: Buffer;

  beforeAll(async () => {
    revocation.issueLeaf('tsa-revocable', { ocsp: true, timeStamping: true });
    revocableTsa = await startTsa({ ...pki, tsaCert: path.join(pki.dir, 'tsa-revocable.pem'), tsaKey: path.join(pki.dir, 'tsa-revocable.key') });
    stamped = await appWith({ TSA_URL: revocableTsa.url, REVOCATION_FETCH: 'true', REVOCATION_TIMEOUT_MS: '2000' }, 'stamped');
    beforeRevocation = await stamped.routes.sign(PDF, { signer: 'before', p12: p12('good') });
    await new Promise((r) => setTimeout(r, 1_100));
    await revocation.revoke('tsa-revocable');
    await new Promise((r) => setTimeout(r, 1_100));
    afterRevocation = await stamped.routes.sign(PDF, { signer: 'after', p12: p12('good') });
  }, 120_000);
  afterAll(async () => {
    await stamped?.app.close();
    await revocableTsa?.close();
  });

  it("is checked too: a unit revoked after its time-stamp leaves it proof, one revoked before does not", async () => {
    const early = signatureOf(await stamped.routes.verify(beforeRevocation));
    expect(early.timestamp.revocation[0]).toMatchObject({ status: 'revoked', source: 'ocsp-fetched', subject: expect.stringContaining('tsa-revocable') });
    expect(early.warnings.join(' ')).not.toMatch(/time-stamp unit/);
    expect(early.indication).toBe('TOTAL_PASSED');
    const late = signatureOf(await stamped.routes.verify(afterRevocation));
    expect(late.timestamp.revocation[0]).toMatchObject({ status: 'revoked' });
    expect(late.warnings.join(' ')).toMatch(/time-stamp unit certificate .* was revoked .* not proof of the signing time/);
  });
});

/** A leaf of the revocation PKI as a TestIdentity, to sign as its (dishonest) holder would. */
function identityOf(name: string): TestIdentity {
  const pem = readFileSync(path.join(pki.dir, `${name}.pem`), 'utf8');
  const keyPem = readFileSync(path.join(pki.dir, `${name}.key`), 'utf8');
  const cert = new X509Certificate(pem);
  return { der: Buffer.from(cert.raw), pem, key: createPrivateKey(keyPem), keyPem, cert };
}

/**
 * An OCSP "good" for `name` made now by `openssl ocsp` from the CA database, as a signer could keep
 * one from before the revocation: without nextUpdate (RFC 6960: newer information is always
 * available), or with nextUpdate `minutes` after thisUpdate.
 */
function goodOcspNow(name: string, minutes?: number): Buffer {
  const request = path.join(pki.dir, `${name}.ocsp-req`);
  const response = path.join(pki.dir, `${name}.ocsp-${minutes ?? 'open'}`);
  execFileSync('openssl', ['ocsp', '-issuer', 'root.pem', '-cert', `${name}.pem`, '-reqout', request, '-no_nonce'], { cwd: pki.dir, stdio: 'ignore' });
  execFileSync('openssl', ['ocsp', '-index', 'index.txt', '-CA', 'root.pem', '-rsigner', 'ocsp-responder.pem', '-rkey', 'ocsp-responder.key', '-reqin', request, '-respout', response, ...(minutes ? ['-nmin', String(minutes)] : [])], { cwd: pki.dir, stdio: 'ignore' });
  return readFileSync(response);
}

/** Adds a /DSS holding `ocsps` to a TestPdf-made document in a new revision (an archival update). */
function withDss(pdf: TestPdf, ocsps: Buffer[]): Buffer {
  const first = pdf.size;
  const objects: Record<number, string> = {};
  ocsps.forEach((der, i) => {
    objects[first + i] = `<< /Length ${der.length} >>\nstream\n${der.toString('latin1')}\nendstream`;
  });
  const dss = first + ocsps.length;
  objects[dss] = `<< /Type /DSS /OCSPs [${ocsps.map((_, i) => `${first + i} 0 R`).join(' ')}] >>`;
  objects[1] = `<< /Type /Catalog /Pages 2 0 R /AcroForm 5 0 R /DSS ${dss} 0 R >>`;
  return pdf.update(objects).bytes;
}

describe('revocation freshness (ETSI EN 319 102-1 §5.2.5)', () => {
  const trustRoots = () => [readFileSync(path.join(pki.dir, 'root.pem'), 'utf8')];
  const YEAR = 365 * 24 * 3600 * 1000;

  it('a signature made after its certificate was revoked, claiming an earlier time and carrying an old OCSP "good" in its DSS, does not pass: offline INDETERMINATE naming the discarded answer, online the responder is asked and says revoked', async () => {
    const openGood = goodOcspNow('revoked-backdated');
    const oneMinuteGood = goodOcspNow('revoked-backdated', 1);
    const claimed = new Date(Date.now() - 5_000); // "signed" a few seconds before the answers
    await revocation.revoke('revoked-backdated');
    await new Promise((r) => setTimeout(r, 1_100));
    const signer = identityOf('revoked-backdated');
    const root = identityOf('root');
    const forge = (ocsp: Buffer) => withDss(TestPdf.base().sign({ cms: { signer, certificates: [signer, root], signingTime: claimed } }), [ocsp]);

    // An answer without nextUpdate speaks for its own moment only: without a time-stamp the validation time is now.
    const forged = forge(openGood);
    const offlineReport = await offline.routes.verify(forged);
    const first = signatureOf(offlineReport);
    expect(offlineReport.valid).toBe(false);
    expect(first, first.errors.join('; ')).toMatchObject({ indication: 'INDETERMINATE', subIndication: 'TRY_LATER', trusted: true, modificationsAfter: 'archival' });
    expect(first.revocation[0]).toMatchObject({ status: 'unknown', subject: expect.stringContaining('revoked-backdated') });
    expect(first.revocation[0].problems.join(' ')).toMatch(/pdf-dss: discarded a "good" OCSP response issued .*\(no next update\): not fresh for the validation time .*, now \(no time-stamp/);

    // REVOCATION_FETCH=true: the discarded answer does not stop the responder from being asked.
    const onlineReport = await online.routes.verify(forged);
    const fetched = signatureOf(onlineReport);
    expect(onlineReport.valid).toBe(false);
    expect(fetched.revocation[0]).toMatchObject({ status: 'revoked', source: 'ocsp-fetched', reason: 'keyCompromise' });
    expect(fetched.revocation[0].problems.join(' ')).toMatch(/discarded a "good" OCSP response/);
    expect(fetched).toMatchObject({ indication: 'INDETERMINATE', subIndication: 'REVOKED_NO_POE' });

    // An answer past its nextUpdate (clock two minutes on): discarded the same way.
    const expired = signatureOf(verifyPdf(forge(oneMinuteGood), { trustRoots: trustRoots(), now: new Date(Date.now() + 120_000) }));
    expect(expired).toMatchObject({ indication: 'INDETERMINATE', subIndication: 'TRY_LATER' });
    expect(expired.revocation[0].problems.join(' ')).toMatch(/discarded a "good" OCSP response issued .* \(next update .*\): not fresh/);
  }, 60_000);

  it('an embedded OCSP answer counts until its nextUpdate when nothing proves the signing time; past it, it is discarded', () => {
    const signer = identityOf('fresh-check');
    const root = identityOf('root');
    const live = revocation.ocspResponseFor('fresh-check'); // the responder's answer: nextUpdate 10 minutes on
    const pdf = withDss(TestPdf.base().sign({ cms: { signer, certificates: [signer, root] } }), [live]);
    const now = signatureOf(verifyPdf(pdf, { trustRoots: trustRoots() }));
    expect(now, now.errors.join('; ')).toMatchObject({ indication: 'TOTAL_PASSED' });
    expect(now.revocation[0]).toMatchObject({ status: 'good', source: 'pdf-dss', problems: [] });
    const later = signatureOf(verifyPdf(pdf, { trustRoots: trustRoots(), now: new Date(Date.now() + 3600_000) }));
    expect(later).toMatchObject({ indication: 'INDETERMINATE', subIndication: 'TRY_LATER' });
    expect(later.revocation[0].status).toBe('unknown');
    expect(later.revocation[0].problems.join(' ')).toMatch(/discarded a "good" OCSP response .*next update/);
  });

  describe("pyHanko's own B-LT and B-LTA files (revocation data fetched before the time-stamp)", () => {
    let pyhanko: Pyhanko;
    const made: Record<string, Buffer> = {};
    beforeAll(async () => {
      pyhanko = new Pyhanko();
      const input = path.join(pki.dir, 'pyhanko-in.pdf');
      writeFileSync(input, PDF);
      for (const pades of ['B-LT', 'B-LTA'] as const) {
        const out = path.join(pki.dir, `pyhanko-${pades}.pdf`);
        await pyhanko.sign({
          in: input, out, field: 'Sig1', key: path.join(pki.dir, 'pyhanko-lt.key'), cert: path.join(pki.dir, 'pyhanko-lt.pem'),
          chain: [path.join(pki.dir, 'root.pem')], tsa_url: tsa.url, pades, trust: [path.join(pki.dir, 'root.pem')],
        });
        made[pades] = readFileSync(out);
      }
    }, 120_000);
    afterAll(() => pyhanko?.close());

    for (const pades of ['B-LT', 'B-LTA'] as const) {
      it(`${pades}: TOTAL_PASSED offline, now and with the clock 1, 10 and 30 years on, the evidence counted though issued before the time-stamp`, async () => {
        const pdf = made[pades]!;
        const routeReport = await offline.routes.verify(pdf);
        expect(routeReport.valid, routeReport.reason).toBe(true);
        for (const years of [0, 1, 10, 30]) {
          const report = verifyPdf(pdf, { trustRoots: trustRoots(), now: new Date(Date.now() + years * YEAR) });
          const signature = report.signatures[0]!;
          expect(report.valid, `+${years} years: ${report.reason}`).toBe(true);
          expect(signature.revocation[0], `+${years} years`).toMatchObject({ status: 'good', problems: [] });
          expect(['pdf-dss', 'cms']).toContain(signature.revocation[0]!.source);
          // pyHanko fetched the answer before asking for the signature time-stamp (ours discarded it before).
          expect(new Date(signature.revocation[0]!.producedAt!).getTime()).toBeLessThanOrEqual(new Date(signature.timestamp!.time!).getTime());
          if (pades === 'B-LTA') expect(report.timestamps.map((t) => t.indication)).toEqual(['TOTAL_PASSED']);
        }
      });
    }
  });
});
