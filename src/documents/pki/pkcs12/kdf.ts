import { createHash } from 'node:crypto';

export interface Pkcs12Hash {
  /** node:crypto's name. */
  name: string;
  /** Block size v in bytes. */
  blockBytes: number;
  /** Output size u in bytes. */
  digestBytes: number;
}

/** Hash functions the PKCS#12 key derivation and MAC may name, by OID. */
export const PKCS12_HASHES: Record<string, Pkcs12Hash> = {
  '1.3.14.3.2.26': { name: 'sha1', blockBytes: 64, digestBytes: 20 },
  '2.16.840.1.101.3.4.2.4': { name: 'sha224', blockBytes: 64, digestBytes: 28 },
  '2.16.840.1.101.3.4.2.1': { name: 'sha256', blockBytes: 64, digestBytes: 32 },
  '2.16.840.1.101.3.4.2.2': { name: 'sha384', blockBytes: 128, digestBytes: 48 },
  '2.16.840.1.101.3.4.2.3': { name: 'sha512', blockBytes: 128, digestBytes: 64 },
  '2.16.840.1.101.3.4.2.5': { name: 'sha512-224', blockBytes: 128, digestBytes: 28 },
  '2.16.840.1.101.3.4.2.6': { name: 'sha512-256', blockBytes: 128, digestBytes: 32 },
};

/** Hash calls one derivation of `length` bytes makes: `iterations` per output block of u bytes. */
export function pkcs12KdfRounds(hash: Pkcs12Hash, iterations: number, length: number): number {
  return iterations * Math.ceil(length / hash.digestBytes);
}

export const KDF_PURPOSE = { key: 1, iv: 2, mac: 3 } as const;

/** A password as RFC 7292 §B.1 wants it: BMPString (UTF-16BE) with a two-byte NUL terminator. */
export function bmpPassword(password: string): Buffer {
  const units = Buffer.from(password, 'utf16le').swap16();
  return Buffer.concat([units, Buffer.alloc(2)]);
}

/** `source` repeated to `length` bytes (empty when either is empty). */
function repeatTo(source: Buffer, length: number): Buffer {
  const out = Buffer.alloc(source.length === 0 ? 0 : length);
  for (let i = 0; i < out.length; i++) out[i] = source[i % source.length];
  return out;
}

/**
 * The PKCS#12 key derivation (RFC 7292 Appendix B.2): `length` bytes of key, IV or MAC key
 * (by `purpose`) from an encoded password and salt. It makes pkcs12KdfRounds() hash calls, each a
 * node:crypto hash of u bytes but called from JavaScript (Node has no native PKCS#12 KDF): about
 * 1-2 µs per call, so the caller must have counted and bounded the rounds before calling.
 */
export function pkcs12Kdf(hash: Pkcs12Hash, password: Buffer, salt: Buffer, purpose: number, iterations: number, length: number): Buffer {
  const v = hash.blockBytes;
  const u = hash.digestBytes;
  const D = Buffer.alloc(v, purpose);
  const I = Buffer.concat([repeatTo(salt, v * Math.ceil(salt.length / v)), repeatTo(password, v * Math.ceil(password.length / v))]);
  const blocks: Buffer[] = [];
  for (let produced = 0; produced < length; produced += u) {
    let A = createHash(hash.name).update(D).update(I).digest();
    for (let r = 1; r < iterations; r++) A = createHash(hash.name).update(A).digest();
    blocks.push(A);
    if (produced + u >= length) break;
    // I_j = (I_j + B + 1) mod 2^(8v) for each v-byte block of I, B being A repeated to v bytes.
    const B = repeatTo(A, v);
    for (let j = 0; j < I.length; j += v) {
      let carry = 1;
      for (let k = v - 1; k >= 0; k--) {
        const sum = I[j + k] + B[k] + carry;
        I[j + k] = sum & 0xff;
        carry = sum >> 8;
      }
    }
  }
  return Buffer.concat(blocks).subarray(0, length);
}
