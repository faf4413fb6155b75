import { createCipheriv, createDecipheriv, createHash } from 'node:crypto';
import { PdfDict, PdfString, asArray, asNumber, isName, nameOf, type PdfValue } from './objects.js';

/**
 * The standard security handler (ISO 32000-1 §7.6.3, ISO 32000-2 §7.6.4), opened with the empty
 * user password: that is how most "protected" signed PDFs ship (open freely, restrict editing).
 * Supports RC4 40/128 (V1/V2, R2/R3), AES-128 (V4, AESV2) and AES-256 (V5, R5/R6).
 */

export type CipherMethod = 'none' | 'rc4' | 'aes128' | 'aes256';

export class EncryptionError extends Error {
  constructor(
    readonly reason: 'password' | 'unsupported',
    message: string,
  ) {
    super(message);
  }
}

export interface Decryptor {
  decryptString(bytes: Uint8Array, num: number, gen: number): Uint8Array;
  decryptStream(bytes: Uint8Array, num: number, gen: number): Uint8Array;
  /** False when /EncryptMetadata is false: XMP metadata streams are stored in the clear. */
  readonly encryptMetadata: boolean;
}

const PASSWORD_PADDING = Buffer.from('28bf4e5e4e758a4164004e56fffa01082e2e00b6d0683e802f0ca9fe6453697a', 'hex');

const md5 = (...parts: Uint8Array[]) => {
  const h = createHash('md5');
  for (const p of parts) h.update(p);
  return h.digest();
};

/** RC4 (OpenSSL 3 keeps it in the legacy provider, so it is done here; it only runs over bounded objects). */
export function rc4(key: Uint8Array, data: Uint8Array): Uint8Array {
  const s = new Uint8Array(256);
  for (let i = 0; i < 256; i++) s[i] = i;
  for (let i = 0, j = 0; i < 256; i++) {
    j = (j + s[i]! + key[i % key.length]!) & 0xff;
    [s[i], s[j]] = [s[j]!, s[i]!];
  }
  const out = new Uint8Array(data.length);
  for (let k = 0, i = 0, j = 0; k < data.length; k++) {
    i = (i + 1) & 0xff;
    j = (j + s[i]!) & 0xff;
    [s[i], s[j]] = [s[j]!, s[i]!];
    out[k] = data[k]! ^ s[(s[i]! + s[j]!) & 0xff]!;
  }
  return out;
}

function aesCbcDecrypt(key: Uint8Array, data: Uint8Array): Uint8Array {
  // IV + at least one block; anything shorter or misaligned decrypts to nothing.
  if (data.length < 32 || data.length % 16 !== 0) return new Uint8Array();
  const algorithm = key.length === 32 ? 'aes-256-cbc' : 'aes-128-cbc';
  try {
    const decipher = createDecipheriv(algorithm, key, data.subarray(0, 16));
    return Buffer.concat([decipher.update(data.subarray(16)), decipher.final()]);
  } catch {
    // Bad padding: keep what decrypts without it, as readers do.
    const decipher = createDecipheriv(algorithm, key, data.subarray(0, 16)).setAutoPadding(false);
    return Buffer.concat([decipher.update(data.subarray(16)), decipher.final()]);
  }
}

const bytesOf = (v: PdfValue | undefined): Uint8Array | undefined => (v instanceof PdfString ? v.bytes : undefined);

function le32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32LE(n | 0);
  return b;
}

/** Algorithm 2 (R2-R4): the file key from a password. */
function legacyFileKey(password: Uint8Array, o: Uint8Array, p: number, id0: Uint8Array, r: number, lengthBytes: number, encryptMetadata: boolean): Buffer {
  const padded = Buffer.concat([password.subarray(0, 32), PASSWORD_PADDING.subarray(0, 32 - Math.min(32, password.length))]);
  let key = md5(padded, o.subarray(0, 32), le32(p), id0, r >= 4 && !encryptMetadata ? Buffer.from([0xff, 0xff, 0xff, 0xff]) : Buffer.alloc(0));
  const n = r === 2 ? 5 : lengthBytes;
  if (r >= 3) for (let i = 0; i < 50; i++) key = md5(key.subarray(0, n));
  return key.subarray(0, n);
}

/** Algorithms 4/5: does this file key belong to the user password? */
function legacyUserKeyMatches(key: Buffer, u: Uint8Array, id0: Uint8Array, r: number): boolean {
  if (r === 2) return Buffer.from(rc4(key, PASSWORD_PADDING)).equals(Buffer.from(u.subarray(0, 32)));
  let x = rc4(key, md5(PASSWORD_PADDING, id0));
  for (let i = 1; i <= 19; i++) x = rc4(key.map((b) => b ^ i), x);
  return Buffer.from(x.subarray(0, 16)).equals(Buffer.from(u.subarray(0, 16)));
}

/** Algorithm 2.B (R6): the iterated SHA-2/AES hash; R5 uses plain SHA-256. */
function hardenedHash(password: Uint8Array, salt: Uint8Array, udata: Uint8Array, r: number): Buffer {
  let k = createHash('sha256').update(password).update(salt).update(udata).digest();
  if (r === 5) return k;
  for (let round = 0; round < 2048; round++) {
    const k1 = Buffer.concat(Array(64).fill(Buffer.concat([password, k, udata])));
    const cipher = createCipheriv('aes-128-cbc', k.subarray(0, 16), k.subarray(16, 32)).setAutoPadding(false);
    const e = Buffer.concat([cipher.update(k1), cipher.final()]);
    let sum = 0;
    for (let i = 0; i < 16; i++) sum += e[i]!;
    k = createHash(['sha256', 'sha384', 'sha512'][sum % 3]!).update(e).digest();
    // At least 64 rounds, then until the last byte of E is at most (rounds done) - 32.
    if (round >= 63 && e[e.length - 1]! <= round + 1 - 32) break;
  }
  return k.subarray(0, 32);
}

function aes256FileKey(password: Uint8Array, u: Uint8Array, ue: Uint8Array, r: number): Buffer | undefined {
  if (u.length < 48 || ue.length < 32) return undefined;
  const hash = hardenedHash(password, u.subarray(32, 40), new Uint8Array(), r);
  if (!hash.equals(Buffer.from(u.subarray(0, 32)))) return undefined;
  const intermediate = hardenedHash(password, u.subarray(40, 48), new Uint8Array(), r);
  const decipher = createDecipheriv('aes-256-cbc', intermediate, Buffer.alloc(16)).setAutoPadding(false);
  return Buffer.concat([decipher.update(ue.subarray(0, 32)), decipher.final()]);
}

function cryptFilterMethod(encrypt: PdfDict, filterName: string | undefined, v: number): CipherMethod {
  if (v < 4) return 'rc4';
  if (!filterName || filterName === 'Identity') return 'none';
  const filters = encrypt.get('CF');
  const filter = filters instanceof PdfDict ? filters.get(filterName) : undefined;
  const cfm = filter instanceof PdfDict ? nameOf(filter.get('CFM')) : undefined;
  if (cfm === 'AESV2') return 'aes128';
  if (cfm === 'AESV3') return 'aes256';
  if (cfm === 'V2') return 'rc4';
  if (cfm === 'None' || cfm === undefined) return 'none';
  throw new EncryptionError('unsupported', `the crypt filter method /${cfm} is not supported`);
}

/**
 * Opens the standard security handler with the empty user password. Throws EncryptionError:
 * 'password' when the file needs a user password, 'unsupported' for other handlers or versions.
 * `resolve` follows references inside the (unencrypted) /Encrypt dictionary.
 */
export function openStandardSecurity(encrypt: PdfDict, id0: Uint8Array, resolve: (v: PdfValue | undefined) => PdfValue | undefined): Decryptor {
  const filter = nameOf(encrypt.get('Filter'));
  if (filter !== 'Standard') throw new EncryptionError('unsupported', `the security handler /${filter ?? '?'} is not supported (only /Standard)`);
  const num = (key: string) => asNumber(resolve(encrypt.get(key)));
  const v = num('V') ?? 0;
  const r = num('R') ?? 0;
  const p = num('P') ?? 0;
  const o = bytesOf(resolve(encrypt.get('O'))) ?? new Uint8Array();
  const u = bytesOf(resolve(encrypt.get('U'))) ?? new Uint8Array();
  const encryptMetadata = resolve(encrypt.get('EncryptMetadata')) !== false;
  if (![1, 2, 4, 5].includes(v) || r < 2 || r > 6) throw new EncryptionError('unsupported', `standard security handler V${v} R${r} is not supported`);
  const empty = new Uint8Array();

  let fileKey: Buffer | undefined;
  if (r >= 5) {
    fileKey = aes256FileKey(empty, u, bytesOf(resolve(encrypt.get('UE'))) ?? empty, r);
  } else {
    const lengthBits = num('Length') ?? 40;
    const key = legacyFileKey(empty, o, p, id0, r, Math.max(5, Math.min(16, Math.floor(lengthBits / 8))), encryptMetadata);
    if (legacyUserKeyMatches(key, u, id0, r)) fileKey = key;
  }
  if (!fileKey) throw new EncryptionError('password', 'the PDF needs a password to open');

  const stringMethod = cryptFilterMethod(encrypt, nameOf(encrypt.get('StrF')), v);
  const streamMethod = cryptFilterMethod(encrypt, nameOf(encrypt.get('StmF')), v);
  const key = fileKey;
  const objectKey = (method: CipherMethod, objNum: number, gen: number): Uint8Array => {
    if (method === 'aes256') return key;
    const salt = method === 'aes128' ? Buffer.from('sAlT', 'latin1') : Buffer.alloc(0);
    const id = Buffer.from([objNum & 0xff, (objNum >> 8) & 0xff, (objNum >> 16) & 0xff, gen & 0xff, (gen >> 8) & 0xff]);
    return md5(key, id, salt).subarray(0, Math.min(key.length + 5, 16));
  };
  const decrypt = (method: CipherMethod, bytes: Uint8Array, objNum: number, gen: number): Uint8Array => {
    if (method === 'none') return bytes;
    const k = objectKey(method, objNum, gen);
    return method === 'rc4' ? rc4(k, bytes) : aesCbcDecrypt(k, bytes);
  };
  return {
    encryptMetadata,
    decryptString: (bytes, objNum, gen) => decrypt(stringMethod, bytes, objNum, gen),
    decryptStream: (bytes, objNum, gen) => decrypt(streamMethod, bytes, objNum, gen),
  };
}

/** The first /ID string of a trailer (empty when absent), which the legacy key derivation needs. */
export function firstId(trailer: PdfDict, resolve: (v: PdfValue | undefined) => PdfValue | undefined): Uint8Array {
  const ids = asArray(resolve(trailer.get('ID')));
  return bytesOf(resolve(ids?.[0])) ?? new Uint8Array();
}

/** Streams the handler never encrypts (§7.6.1): cross-reference streams, and XMP when /EncryptMetadata is false. */
export const streamIsInTheClear = (dict: PdfDict, encryptMetadata: boolean): boolean =>
  isName(dict.get('Type'), 'XRef') || (!encryptMetadata && isName(dict.get('Type'), 'Metadata'));
