import { mkdtempSync, rmSync, statSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { describeCertificate, fromPortable, loadSigningIdentity, toPortable } from '../../../src/documents/sign/identity.js';
import { assertSignableRequest } from '../../../src/documents/sign/audit.js';

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

  it('describes the key for GET /v1/verify/key and survives the worker hand-off', async () => {
    const identity = await loadSigningIdentity({ dataDir: path.join(base, 'data') });
    const d = describeCertificate(identity);
    expect(d.algorithm).toBe('RSA-SHA256');
    expect(d.publicKey).toMatch(/^-----BEGIN PUBLIC KEY-----/);
    expect(d.fingerprint).toMatch(/^([0-9A-F]{2}:){31}[0-9A-F]{2}$/);
    expect(d.chain).toHaveLength(2);
    expect(d.issuer).toContain('docproc Development CA');
    expect(new Date(d.validTo).getTime()).toBeGreaterThan(new Date(d.validFrom).getTime());
    const back = fromPortable(structuredClone(toPortable(identity)));
    expect(back.certificate.fingerprint256).toBe(identity.certificate.fingerprint256);
    expect(back.chain[0].fingerprint256).toBe(identity.chain[0].fingerprint256);
  });

  it('refuses an unreadable SIGNING_P12', async () => {
    await expect(loadSigningIdentity({ dataDir: base, signingP12: '!!not base64 nor a file!!' })).rejects.toThrow(/SIGNING_P12/);
  });
});

describe('request checks', () => {
  const ok = { signer: { name: 'Al', email: 'a@b.c' }, auditTrail: [{ type: 'submit' as const, timestamp: 't' }] };
  it('needs a submit event, a 2-255 character name and an e-mail', () => {
    expect(() => assertSignableRequest(ok)).not.toThrow();
    expect(() => assertSignableRequest({ ...ok, auditTrail: [{ type: 'scroll', timestamp: 't' }] })).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR', status: 400 }));
    expect(() => assertSignableRequest({ ...ok, signer: { name: 'A', email: 'a@b.c' } })).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR' }));
    expect(() => assertSignableRequest({ ...ok, signer: { name: 'Al', email: 'nope' } })).toThrow(expect.objectContaining({ code: 'VALIDATION_ERROR' }));
  });
});
