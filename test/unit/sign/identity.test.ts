import { execFileSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, statSync, readdirSync, writeFileSync } from 'node:fs';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeCertificate, fromPortable, loadSigningIdentity, toPortable } from '../../../src/documents/sign/identity.js';
import { assertSignableRequest } from '../../../src/documents/sign/audit.js';
import { signDigest } from '../../../src/documents/pki/cms/build.js';
import { buildTimeStampRequest } from '../../../src/documents/pki/tsa-client.js';
import { answering } from '../../support/domain-error.js';

const base = mkdtempSync(path.join(tmpdir(), 'docproc-sign-unit-'));
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('development identity', () => {
  it('is created once in DATA_DIR (0700 dir, 0600 file) and reused', async () => {
    const dataDir = path.join(base, 'data');
    const [a, b] = await Promise.all([loadSigningIdentity({ dataDir }), loadSigningIdentity({ dataDir })]);
    const c = await loadSigningIdentity({ dataDir });
    expect(a.isDevelopment).toBe(true);
    expect(b.certificate.fingerprint256).toBe(a.certificate.fingerprint256);
    expect(c.certificate.fingerprint256).toBe(a.certificate.fingerprint256);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
    expect(readdirSync(dataDir)).toEqual(['dev-signing-identity.json']);
    expect(statSync(path.join(dataDir, 'dev-signing-identity.json')).mode & 0o777).toBe(0o600);
    expect(a.certificate.checkIssued(a.chain[0])).toBe(true);
    expect(a.certificate.verify(a.chain[0].publicKey)).toBe(true);
    expect(a.certificate.checkPrivateKey(a.privateKey)).toBe(true);
  });

  it('its certificates pass openssl verify -x509_strict (CA, key usages, key identifiers)', async () => {
    const identity = await loadSigningIdentity({ dataDir: path.join(base, 'data') });
    const dir = mkdtempSync(path.join(base, 'strict-'));
    writeFileSync(path.join(dir, 'ca.pem'), identity.chain[0].toString());
    writeFileSync(path.join(dir, 'leaf.pem'), identity.certificate.toString());
    const out = execFileSync('openssl', ['verify', '-x509_strict', '-purpose', 'any', '-CAfile', 'ca.pem', 'leaf.pem', 'ca.pem'], { cwd: dir, encoding: 'utf8' });
    expect(out).toBe('leaf.pem: OK\nca.pem: OK\n');
    const text = execFileSync('openssl', ['x509', '-in', 'leaf.pem', '-noout', '-text'], { cwd: dir, encoding: 'utf8' });
    expect(text).toMatch(/Subject: CN = docproc development signing \(NOT FOR PRODUCTION\), O = docproc/);
    expect(text).toMatch(/Key Usage: critical\s+Digital Signature, Non Repudiation/);
    expect(text).toMatch(/Authority Key Identifier/);
  });

  it('describes the key for GET /v1/verify/key and survives the worker hand-off', async () => {
    const identity = await loadSigningIdentity({ dataDir: path.join(base, 'data') });
    const d = describeCertificate(identity);
    expect(d.algorithm).toBe('RSA-SHA256');
    expect(d.publicKey).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect(d.fingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(d.chain).toHaveLength(2);
    expect(d.issuer).toContain('docproc Development CA');
    expect(new Date(d.validToTime).getTime()).toBeGreaterThan(new Date(d.validFromTime).getTime());
    expect(d.validFrom).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(d.validTo).toBe(d.validToTime.slice(0, 10));
    const back = fromPortable(structuredClone(toPortable(identity)));
    expect(back.certificate.fingerprint256).toBe(identity.certificate.fingerprint256);
    expect(back.chain[0].fingerprint256).toBe(identity.chain[0].fingerprint256);
  });

  it('refuses an unreadable SIGNING_P12', async () => {
    await expect(loadSigningIdentity({ dataDir: base, signingP12: '!!not base64 nor a file!!' })).rejects.toThrow(/SIGNING_P12/);
  });
});

describe('CMS and time-stamp request encoding (pkijs/asn1js)', () => {
  /** Re-encoding a DER value must give the same bytes, and every SET OF must be in DER order. */
  function assertCanonicalDer(bytes: Buffer) {
    const parsed = asn1js.fromBER(bytes);
    expect(parsed.offset).toBe(bytes.length);
    expect(Buffer.from(parsed.result.toBER())).toEqual(bytes);
    const walk = (block: asn1js.AsnType) => {
      const children = (block as asn1js.Constructed).valueBlock?.value;
      if (!Array.isArray(children)) return;
      if (block instanceof asn1js.Set || (block.idBlock.tagClass === 3 && block.idBlock.tagNumber === 0 && children.length > 1)) {
        const encoded = children.map((c) => Buffer.from(c.toBER()));
        expect(encoded).toEqual([...encoded].sort(Buffer.compare));
      }
      children.forEach(walk);
    };
    walk(parsed.result);
  }

  it('SignedData is canonical DER and names its signer and certificate the way verify reads them', async () => {
    const identity = await loadSigningIdentity({ dataDir: path.join(base, 'data') });
    const digest = createHash('sha256').update('content').digest();
    const { cms } = signDigest(digest, identity);
    assertCanonicalDer(cms);
    const signedData = new pkijs.SignedData({ schema: pkijs.ContentInfo.fromBER(cms).content });
    expect(signedData.certificates).toHaveLength(2);
    const [signer] = signedData.signerInfos;
    const attributes = signer.signedAttrs!.attributes;
    expect(attributes.map((a) => a.type).sort()).toEqual(['1.2.840.113549.1.9.16.2.47', '1.2.840.113549.1.9.3', '1.2.840.113549.1.9.4'].sort());
    const messageDigest = attributes.find((a) => a.type === '1.2.840.113549.1.9.4')!.values[0] as asn1js.OctetString;
    expect(Buffer.from(messageDigest.getValue())).toEqual(digest);
    const sid = signer.sid as pkijs.IssuerAndSerialNumber;
    const leaf = pkijs.Certificate.fromBER(identity.certificate.raw);
    expect(Buffer.from(sid.serialNumber.valueBlock.valueHexView)).toEqual(Buffer.from(leaf.serialNumber.valueBlock.valueHexView));
    expect(sid.issuer.isEqual(leaf.issuer)).toBe(true);
  });

  it('time-stamp requests are canonical DER with a minimal nonce, whatever its leading bytes', () => {
    for (const lead of [[0x00, 0x00], [0x00, 0x7f], [0x00, 0x80], [0x7f, 0xff], [0x01, 0x00]]) {
      const nonce = Buffer.concat([Buffer.from(lead), randomBytes(6)]);
      const request = buildTimeStampRequest(createHash('sha256').update('x').digest(), nonce);
      assertCanonicalDer(request);
      const parsed = pkijs.TimeStampReq.fromBER(request);
      expect(parsed.nonce!.toBigInt()).toBe(BigInt('0x' + nonce.toString('hex')));
      expect(parsed.certReq).toBe(true);
    }
  });
});

describe('request checks', () => {
  const ok = { signer: { name: 'Al', email: 'a@b.c' }, auditTrail: [{ type: 'submit' as const, timestamp: 't' }] };
  it('needs a submit event, a 2-255 character name and an e-mail', () => {
    expect(() => assertSignableRequest(ok)).not.toThrow();
    expect(() => assertSignableRequest({ ...ok, auditTrail: [{ type: 'scroll', timestamp: 't' }] })).toThrow(answering(400, 'VALIDATION_ERROR'));
    expect(() => assertSignableRequest({ ...ok, signer: { name: 'A', email: 'a@b.c' } })).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR' }));
    expect(() => assertSignableRequest({ ...ok, signer: { name: 'Al', email: 'nope' } })).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR' }));
  });
});
