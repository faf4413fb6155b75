import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import PizZip from 'pizzip';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { signDocx } from '../../../src/documents/sign/docx/sign-docx.js';
import { parsePkcs12 } from '../../../src/documents/sign/identity.js';
import { verifyDocx } from '../../../src/documents/verify/index.js';
import type { SignRequest } from '../../../src/documents/sign/types.js';
import { libreOfficeVerify, type LibreOfficeSignature } from './libreoffice-verify.js';
import { createTestPki, type TestPki } from './pki.js';
import { CORPUS_DIR } from '../../support/corpus.js';

const corpus = (p: string) => readFileSync(path.join(`${CORPUS_DIR}`, p));
const request: SignRequest = {
  signer: { name: 'Jane Q. Signer', email: 'jane@example.com' },
  auditTrail: [{ type: 'ready', timestamp: '2025-03-01T09:00:00Z' }, { type: 'submit', timestamp: '2025-03-01T09:01:00Z' }],
  reason: 'I approve this document',
};
const sha256Hex = (der: Buffer) => createHash('sha256').update(der).digest('hex');

/** Rewrites one part of a ZIP package (the "attacker" edit after signing). */
function tamper(docx: Buffer, part: string, edit: (text: string) => string): Buffer {
  const zip = new PizZip(docx);
  zip.file(part, edit(zip.file(part)!.asText()));
  return zip.generate({ type: 'nodebuffer', compression: 'DEFLATE' });
}

let pki: TestPki;
let results: LibreOfficeSignature[][];
let trusted: LibreOfficeSignature[][];
const outputs: Record<string, Buffer> = {};

beforeAll(async () => {
  pki = createTestPki();
  const p12 = parsePkcs12(corpus('certs/signpdf-withpass.p12'), 'node-signpdf');
  outputs.rsa = (await signDocx(corpus('docx-signed/eid-hello-world-unsigned.docx'), request, pki.rsa)).document;
  outputs.ec = (await signDocx(corpus('docx/docx4j-sample-docx.docx'), request, pki.ec)).document;
  outputs.p12 = (await signDocx(corpus('docx/superdoc-advanced-text.docx'), request, p12)).document;
  outputs.second = (await signDocx(corpus('docx-signed/eid-hello-world-signed.docx'), request, pki.rsa)).document;
  outputs.third = (await signDocx(outputs.rsa, { ...request, signer: { name: 'Second Signer', email: 'second@example.com' } }, pki.ec)).document;
  outputs.tamperedBody = tamper(outputs.rsa, 'word/document.xml', (t) => t.replace('Hello', 'Goodbye'));
  outputs.tamperedAudit = tamper(outputs.rsa, 'docproc/audit-trail.json', (t) => t.replace('jane@example.com', 'mallory@example.com'));
  outputs.tamperedRels = tamper(outputs.rsa, 'word/_rels/document.xml.rels', (t) => t.replace('styles.xml', 'styles2.xml'));
  const order = ['rsa', 'ec', 'p12', 'second', 'third', 'tamperedBody', 'tamperedAudit', 'tamperedRels'];
  results = await libreOfficeVerify(order.map((k) => outputs[k]));
  trusted = await libreOfficeVerify([outputs.rsa], pki.nssDir);
  const named = Object.fromEntries(order.map((k, i) => [k, results[i]]));
  Object.assign(byName, named);
}, 240_000);
afterAll(() => pki?.cleanup());

const byName: Record<string, LibreOfficeSignature[]> = {};

describe('signDocx checked by LibreOffice (xmlsec)', () => {
  it('RSA: one valid signature by our certificate', () => {
    expect(byName.rsa).toHaveLength(1);
    expect(byName.rsa[0].valid).toBe(true);
    expect(byName.rsa[0].signerSha256).toBe(sha256Hex(pki.rsa.certificate.raw));
    expect(byName.rsa[0].signer).toContain('docproc test rsa');
  });

  it('ECDSA P-256 signature on a document with images, headers and a tracked change', () => {
    expect(byName.ec).toHaveLength(1);
    expect(byName.ec[0]).toMatchObject({ valid: true, signerSha256: sha256Hex(pki.ec.certificate.raw) });
  });

  it("a caller's PKCS#12 (corpus signpdf-withpass.p12) signs a real multi-page Word document", () => {
    expect(byName.p12).toHaveLength(1);
    expect(byName.p12[0].valid).toBe(true);
    expect(byName.p12[0].signer).toContain('SignPdf');
  });

  it('signing an already signed DOCX keeps the first signature valid and adds a second', () => {
    expect(byName.second).toHaveLength(2);
    expect(byName.second.map((s) => s.valid)).toEqual([true, true]);
    expect(byName.second.map((s) => s.signer)).toEqual([expect.stringContaining('Bart Hanssens'), expect.stringContaining('docproc test rsa')]);
    expect(byName.third).toHaveLength(2);
    expect(byName.third.every((s) => s.valid)).toBe(true);
    expect(byName.third[1].signerSha256).toBe(sha256Hex(pki.ec.certificate.raw));
  });

  it('any change to a signed part (body, audit trail, relationships) invalidates the signature', () => {
    for (const key of ['tamperedBody', 'tamperedAudit', 'tamperedRels']) {
      expect(byName[key], key).toHaveLength(1);
      expect(byName[key][0].valid, key).toBe(false);
    }
  });

  it('certificate status: unknown without trust information, trusted with our root in the NSS database', () => {
    // Without a certificate database LibreOffice cannot judge trust (UNKNOWN); the signature itself is valid.
    expect(byName.rsa[0].certificateStatusNames).toContain('UNKNOWN');
    expect(trusted[0][0]).toMatchObject({ valid: true, certificateStatus: 0, certificateStatusNames: ['OK'] });
  });
});

describe("signDocx checked by docproc's own verifier (verifyDocx)", () => {
  it('RSA, ECDSA and the added second signature are intact, cryptographically valid and trusted', async () => {
    for (const key of ['rsa', 'ec', 'third']) {
      const report = await verifyDocx(outputs[key], { trustRoots: [pki.rootPem] });
      expect(report.valid, `${key}: ${report.reason}`).toBe(true);
      for (const signature of report.signatures) expect(signature).toMatchObject({ intact: true, cryptoValid: true, trusted: true, xades: true });
    }
    const second = await verifyDocx(outputs.second, { trustRoots: [pki.rootPem] });
    expect(second.signatures.map((s) => s.cryptoValid && s.intact)).toEqual([true, true]);
    expect(second.signatures[1].trusted).toBe(true);
  });

  it('reports the tampered packages as failed', async () => {
    for (const key of ['tamperedBody', 'tamperedAudit', 'tamperedRels']) {
      const report = await verifyDocx(outputs[key], { trustRoots: [pki.rootPem] });
      expect(report.valid, key).toBe(false);
      expect(report.signatures[0].intact, key).toBe(false);
    }
  });
});
