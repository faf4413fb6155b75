import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parseCert } from '../../../src/documents/pki/certificates.js';
import { makeRoot } from './helpers/pki.js';

describe('parseCert', () => {
  it('treats a certificate whose public key OpenSSL cannot decode as no certificate (found by test/fuzz, seed 99)', () => {
    const der = Buffer.from(makeRoot().der);
    expect(parseCert(der)).toBeDefined();
    // rsaEncryption's OID, then the BIT STRING holding SEQUENCE { modulus, exponent }: break that SEQUENCE's tag.
    const rsaOid = Buffer.from('06092a864886f70d010101', 'hex');
    const at = der.indexOf(rsaOid);
    const bitString = der.indexOf(0x03, at + rsaOid.length);
    const innerSequence = der.indexOf(0x30, bitString);
    const broken = Buffer.from(der);
    broken[innerSequence] = 0x31;
    const x509 = new X509Certificate(broken);
    expect(() => x509.publicKey).toThrow();
    expect(parseCert(broken)).toBeUndefined();
  });
});
