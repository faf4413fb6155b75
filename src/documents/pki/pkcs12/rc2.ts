/**
 * RC2 (RFC 2268) in CBC mode, for the legacy PKCS#12 files OpenSSL and Windows still write
 * (pbeWithSHAAnd40BitRC2-CBC protects the certificates of every `openssl pkcs12 -legacy` file).
 * Node's OpenSSL 3 keeps RC2 in the legacy provider, which a service should not load, so the
 * block function is implemented here from the RFC; tests check it against the RFC's vectors
 * and against the openssl CLI.
 */

/** PITABLE from RFC 2268 §2: a permutation of 0..255 derived from the digits of pi. */
const PITABLE = Buffer.from(
  'd978f9c419ddb5ed28e9fd794aa0d89dc67e37832b76538e624c6488448bfba2' +
  '179a59f587b34f1361456d8d09817d32bd8f40eb86b77b0bf09521225c6b4e82' +
  '54d66593ce60b21c7356c014a78cf1dc1275ca1f3bbee4d1423dd430a33cb626' +
  '6fbf0eda4669075727f21d9bbc944303f811c7f690ef3ee706c3d52fc8661ed7' +
  '08e8eade8052eef784aa72ac354d6a2a961ad2715a1549744b9fd05e0418a4ec' +
  'c2e0416e0f51cbcc2491af50a1f47039997c3a8523b8b47afc02365b25559731' +
  '2d5dfa98e38a92ae05df2910676cbac9d300e6cfe19ea82c6316013f58e289a9' +
  '0d38341bab33ffb0bb480c5fb9b1cd2ec5f3db47e5a59c770aa62068fe7fc1ad',
  'hex',
);

/** The 64 16-bit words of the expanded key (§2), for `effectiveBits` of effective key length. */
export function expandKey(key: Uint8Array, effectiveBits = key.length * 8): Uint16Array {
  if (key.length < 1 || key.length > 128) throw new RangeError('RC2: key length must be 1..128 bytes');
  if (effectiveBits < 1 || effectiveBits > 1024) throw new RangeError('RC2: effective key length must be 1..1024 bits');
  const T = key.length;
  const T8 = Math.ceil(effectiveBits / 8);
  const TM = 0xff >> (8 * T8 - effectiveBits);
  const L = new Uint8Array(128);
  L.set(key);
  for (let i = T; i < 128; i++) L[i] = PITABLE[(L[i - 1] + L[i - T]) & 0xff];
  L[128 - T8] = PITABLE[L[128 - T8] & TM];
  for (let i = 127 - T8; i >= 0; i--) L[i] = PITABLE[L[i + 1] ^ L[i + T8]];
  const K = new Uint16Array(64);
  for (let i = 0; i < 64; i++) K[i] = L[2 * i] | (L[2 * i + 1] << 8);
  return K;
}

const SHIFTS = [1, 2, 3, 5];

function readWords(block: Uint8Array): number[] {
  return [0, 1, 2, 3].map((i) => block[2 * i] | (block[2 * i + 1] << 8));
}

function writeWords(R: number[], out: Uint8Array, offset: number): void {
  for (let i = 0; i < 4; i++) {
    out[offset + 2 * i] = R[i] & 0xff;
    out[offset + 2 * i + 1] = R[i] >> 8;
  }
}

/** Encrypts one 8-byte block (§3): 5 mixing rounds, mashing, 6 mixing, mashing, 5 mixing. */
export function encryptBlock(K: Uint16Array, block: Uint8Array): Uint8Array {
  const R = readWords(block);
  let j = 0;
  const mix = () => {
    for (let i = 0; i < 4; i++) {
      const v = (R[i] + K[j++] + (R[(i + 3) & 3] & R[(i + 2) & 3]) + (~R[(i + 3) & 3] & R[(i + 1) & 3])) & 0xffff;
      R[i] = ((v << SHIFTS[i]) | (v >> (16 - SHIFTS[i]))) & 0xffff;
    }
  };
  const mash = () => {
    for (let i = 0; i < 4; i++) R[i] = (R[i] + K[R[(i + 3) & 3] & 63]) & 0xffff;
  };
  for (const [rounds, thenMash] of [[5, true], [6, true], [5, false]] as const) {
    for (let r = 0; r < rounds; r++) mix();
    if (thenMash) mash();
  }
  const out = new Uint8Array(8);
  writeWords(R, out, 0);
  return out;
}

/** Decrypts one 8-byte block (§4): the rounds of encryptBlock inverted, in reverse order. */
export function decryptBlock(K: Uint16Array, block: Uint8Array): Uint8Array {
  const R = readWords(block);
  let j = 63;
  const unmix = () => {
    for (let i = 3; i >= 0; i--) {
      const v = R[i];
      R[i] = ((v >> SHIFTS[i]) | (v << (16 - SHIFTS[i]))) & 0xffff;
      R[i] = (R[i] - K[j--] - (R[(i + 3) & 3] & R[(i + 2) & 3]) - (~R[(i + 3) & 3] & R[(i + 1) & 3])) & 0xffff;
    }
  };
  const unmash = () => {
    for (let i = 3; i >= 0; i--) R[i] = (R[i] - K[R[(i + 3) & 3] & 63]) & 0xffff;
  };
  for (const [rounds, thenUnmash] of [[5, true], [6, true], [5, false]] as const) {
    for (let r = 0; r < rounds; r++) unmix();
    if (thenUnmash) unmash();
  }
  const out = new Uint8Array(8);
  writeWords(R, out, 0);
  return out;
}

/** RC2-CBC decryption with PKCS#7 padding removed; throws on a bad length or bad padding. */
export function rc2CbcDecrypt(key: Uint8Array, iv: Uint8Array, data: Uint8Array, effectiveBits = key.length * 8): Buffer {
  if (iv.length !== 8) throw new RangeError('RC2: the IV must be 8 bytes');
  if (data.length === 0 || data.length % 8 !== 0) throw new RangeError('RC2: the ciphertext is not a whole number of blocks');
  const K = expandKey(key, effectiveBits);
  const out = Buffer.alloc(data.length);
  let previous: Uint8Array = iv;
  for (let offset = 0; offset < data.length; offset += 8) {
    const block = data.subarray(offset, offset + 8);
    const plain = decryptBlock(K, block);
    for (let i = 0; i < 8; i++) out[offset + i] = plain[i] ^ previous[i];
    previous = block;
  }
  const pad = out[out.length - 1];
  if (pad < 1 || pad > 8 || out.subarray(out.length - pad).some((b) => b !== pad)) throw new Error('RC2: bad padding');
  return out.subarray(0, out.length - pad);
}

/** RC2-CBC encryption with PKCS#7 padding (tests and round trips only). */
export function rc2CbcEncrypt(key: Uint8Array, iv: Uint8Array, data: Uint8Array, effectiveBits = key.length * 8): Buffer {
  const K = expandKey(key, effectiveBits);
  const pad = 8 - (data.length % 8);
  const input = Buffer.concat([Buffer.from(data), Buffer.alloc(pad, pad)]);
  const out = Buffer.alloc(input.length);
  let previous: Uint8Array = iv;
  for (let offset = 0; offset < input.length; offset += 8) {
    const block = new Uint8Array(8);
    for (let i = 0; i < 8; i++) block[i] = input[offset + i] ^ previous[i];
    previous = encryptBlock(K, block);
    out.set(previous, offset);
  }
  return out;
}
