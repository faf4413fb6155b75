import { createDecipheriv, createHmac, pbkdf2Sync, timingSafeEqual } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { bmpPassword, KDF_PURPOSE, PKCS12_HASHES, pkcs12Kdf } from './kdf.js';
import { rc2CbcDecrypt } from './rc2.js';
import { decodeBer } from '../asn1.js';

/**
 * Reads a PKCS#12 (RFC 7292) archive with pkijs/asn1js for the structures and node:crypto (plus
 * RC2 from ./rc2) for the cryptography: password integrity (the PKCS#12 HMAC or PBMAC1),
 * shrouded keys and encrypted safes in the legacy PKCS#12 PBE schemes (3DES, RC2) and PBES2
 * (PBKDF2 with AES or 3DES). Returns the PKCS#8 private keys and X.509 certificates it holds.
 */
export interface Pkcs12Contents {
  /** DER PrivateKeyInfo (PKCS#8), in archive order. */
  keys: Buffer[];
  /** DER certificates, in archive order. */
  certificates: Buffer[];
}

export type Pkcs12Problem = 'format' | 'password' | 'unsupported';

export class Pkcs12Error extends Error {
  constructor(readonly problem: Pkcs12Problem, message: string) {
    super(message);
  }
}

/** A work factor above this is refused: the iteration count comes from the caller's file. */
export const MAX_ITERATIONS = 1_000_000;
const MAX_NESTING = 4;

const OID = {
  data: '1.2.840.113549.1.7.1',
  encryptedData: '1.2.840.113549.1.7.6',
  keyBag: '1.2.840.113549.1.12.10.1.1',
  shroudedKeyBag: '1.2.840.113549.1.12.10.1.2',
  certBag: '1.2.840.113549.1.12.10.1.3',
  safeContentsBag: '1.2.840.113549.1.12.10.1.6',
  x509Certificate: '1.2.840.113549.1.9.22.1',
  pbes2: '1.2.840.113549.1.5.13',
  pbkdf2: '1.2.840.113549.1.5.12',
  pbmac1: '1.2.840.113549.1.5.14',
} as const;

/** Legacy PKCS#12 PBE schemes (RFC 7292 Appendix C): key bytes, and how to decrypt. */
const LEGACY_PBE: Record<string, { keyBytes: number; cipher: 'des-ede3-cbc' | 'rc2' }> = {
  '1.2.840.113549.1.12.1.3': { keyBytes: 24, cipher: 'des-ede3-cbc' },
  '1.2.840.113549.1.12.1.4': { keyBytes: 16, cipher: 'des-ede3-cbc' }, // two-key 3DES: K1 K2 K1
  '1.2.840.113549.1.12.1.5': { keyBytes: 16, cipher: 'rc2' },
  '1.2.840.113549.1.12.1.6': { keyBytes: 5, cipher: 'rc2' },
};

const PBES2_CIPHERS: Record<string, { name: string; keyBytes: number }> = {
  '2.16.840.1.101.3.4.1.2': { name: 'aes-128-cbc', keyBytes: 16 },
  '2.16.840.1.101.3.4.1.22': { name: 'aes-192-cbc', keyBytes: 24 },
  '2.16.840.1.101.3.4.1.42': { name: 'aes-256-cbc', keyBytes: 32 },
  '1.2.840.113549.3.7': { name: 'des-ede3-cbc', keyBytes: 24 },
};

const HMAC_PRFS: Record<string, string> = {
  '1.2.840.113549.2.7': 'sha1',
  '1.2.840.113549.2.8': 'sha224',
  '1.2.840.113549.2.9': 'sha256',
  '1.2.840.113549.2.10': 'sha384',
  '1.2.840.113549.2.11': 'sha512',
};

const formatError = (what: string) => new Pkcs12Error('format', `not a readable PKCS#12 archive (${what})`);
const unsupported = (what: string) => new Pkcs12Error('unsupported', what);

/** The bytes of an OCTET STRING or of an implicitly tagged one, primitive or constructed (BER). */
function octets(block: asn1js.AsnType | undefined): Buffer {
  if (!block || !(block instanceof asn1js.BaseBlock)) throw formatError('an OCTET STRING is missing');
  if (block.idBlock.isConstructed) {
    const parts = ((block as asn1js.Constructed).valueBlock.value ?? []).map((child) => octets(child));
    return Buffer.concat(parts);
  }
  const view = (block.valueBlock as unknown as { valueHexView?: Uint8Array }).valueHexView;
  if (!view) throw formatError('an OCTET STRING is missing');
  return Buffer.from(view);
}

function parse<T extends pkijs.PkiObject>(type: { new (params: { schema: asn1js.AsnType }): T }, der: Uint8Array | ArrayBuffer, what: string): T {
  const asn1 = decodeBer(der);
  if (asn1.offset === -1) throw formatError(what);
  try {
    return new type({ schema: asn1.result });
  } catch {
    throw formatError(what);
  }
}

function integerOf(block: asn1js.AsnType | undefined, what: string): number {
  if (!(block instanceof asn1js.Integer)) throw formatError(what);
  const value = block.valueBlock.valueDec;
  if (!Number.isSafeInteger(value) || value < 1) throw formatError(what);
  return value;
}

function checkIterations(iterations: number): void {
  if (iterations > MAX_ITERATIONS) {
    throw unsupported(`the PKCS#12 asks for ${iterations} key-derivation iterations; at most ${MAX_ITERATIONS} are accepted`);
  }
}

/** The password encodings to try: PKCS#12 KDFs want BMPString, PBKDF2 wants the bytes (UTF-8). */
interface Password {
  bmp: Buffer[];
  utf8: Buffer;
}

function passwordForms(passphrase: string): Password {
  // An empty password is written either as a bare terminator (OpenSSL, "") or as nothing at all
  // (a NULL password); both must open, whether the caller sent "" or no passphrase.
  return { bmp: passphrase === '' ? [bmpPassword(''), Buffer.alloc(0)] : [bmpPassword(passphrase)], utf8: Buffer.from(passphrase, 'utf8') };
}

function decryptLegacy(scheme: { keyBytes: number; cipher: 'des-ede3-cbc' | 'rc2' }, params: asn1js.AsnType, password: Buffer, data: Buffer): Buffer {
  if (!(params instanceof asn1js.Sequence)) throw formatError('PBE parameters');
  const [saltBlock, iterationsBlock] = params.valueBlock.value;
  const salt = octets(saltBlock);
  const iterations = integerOf(iterationsBlock, 'PBE iteration count');
  checkIterations(iterations);
  const sha1 = PKCS12_HASHES['1.3.14.3.2.26'];
  let key = pkcs12Kdf(sha1, password, salt, KDF_PURPOSE.key, iterations, scheme.keyBytes);
  const iv = pkcs12Kdf(sha1, password, salt, KDF_PURPOSE.iv, iterations, 8);
  if (scheme.cipher === 'rc2') return rc2CbcDecrypt(key, iv, data);
  if (key.length === 16) key = Buffer.concat([key, key.subarray(0, 8)]);
  const decipher = createDecipheriv('des-ede3-cbc', key, iv);
  return Buffer.concat([decipher.update(data), decipher.final()]);
}

function decryptPbes2(params: asn1js.AsnType, password: Buffer, data: Buffer): Buffer {
  const pbes2 = parse(pkijs.PBES2Params, params.toBER(), 'PBES2 parameters');
  if (pbes2.keyDerivationFunc.algorithmId !== OID.pbkdf2) throw unsupported(`the PKCS#12 uses an unsupported key derivation (${pbes2.keyDerivationFunc.algorithmId})`);
  const cipher = PBES2_CIPHERS[pbes2.encryptionScheme.algorithmId];
  if (!cipher) throw unsupported(`the PKCS#12 uses an unsupported cipher (${pbes2.encryptionScheme.algorithmId})`);
  const kdf = parse(pkijs.PBKDF2Params, pbes2.keyDerivationFunc.algorithmParams.toBER(), 'PBKDF2 parameters');
  const key = pbkdf2Key(kdf, password, kdf.keyLength ?? cipher.keyBytes);
  if (key.length !== cipher.keyBytes) throw formatError('PBKDF2 key length');
  const iv = octets(pbes2.encryptionScheme.algorithmParams);
  const decipher = createDecipheriv(cipher.name, key, iv);
  return Buffer.concat([decipher.update(data), decipher.final()]);
}

function pbkdf2Key(kdf: pkijs.PBKDF2Params, password: Buffer, keyLength: number): Buffer {
  if (!(kdf.salt instanceof asn1js.OctetString)) throw unsupported('the PKCS#12 uses a PBKDF2 salt source other than a specified salt');
  checkIterations(kdf.iterationCount);
  if (kdf.iterationCount < 1 || keyLength < 1 || keyLength > 64) throw formatError('PBKDF2 parameters');
  const prf = kdf.prf ? HMAC_PRFS[kdf.prf.algorithmId] : 'sha1';
  if (!prf) throw unsupported(`the PKCS#12 uses an unsupported PBKDF2 function (${kdf.prf?.algorithmId})`);
  return pbkdf2Sync(password, octets(kdf.salt), kdf.iterationCount, keyLength, prf);
}

/** Decrypts with the first password form that yields plaintext; a padding failure means a wrong password. */
function decrypt(algorithm: pkijs.AlgorithmIdentifier, data: Buffer, password: Password): Buffer[] {
  const legacy = LEGACY_PBE[algorithm.algorithmId];
  const attempts: (() => Buffer)[] = legacy
    ? password.bmp.map((bmp) => () => decryptLegacy(legacy, algorithm.algorithmParams, bmp, data))
    : algorithm.algorithmId === OID.pbes2
      ? [() => decryptPbes2(algorithm.algorithmParams, password.utf8, data)]
      : [];
  if (attempts.length === 0) throw unsupported(`the PKCS#12 is encrypted with an unsupported scheme (${algorithm.algorithmId})`);
  const plaintexts: Buffer[] = [];
  for (const attempt of attempts) {
    try {
      plaintexts.push(attempt());
    } catch (err) {
      if (err instanceof Pkcs12Error) throw err;
    }
  }
  if (plaintexts.length === 0) throw new Pkcs12Error('password', 'the PKCS#12 could not be decrypted with this password');
  return plaintexts;
}

/** Tries each plaintext candidate until one parses; a garbage decryption (wrong password without a MAC) fails here. */
function firstParsing<T>(candidates: Buffer[], read: (plain: Buffer) => T): T {
  let last: unknown;
  for (const plain of candidates) {
    try {
      return read(plain);
    } catch (err) {
      last = err;
    }
  }
  if (last instanceof Pkcs12Error && last.problem === 'unsupported') throw last;
  throw new Pkcs12Error('password', 'the PKCS#12 could not be decrypted with this password');
}

function verifyMac(macData: pkijs.MacData, content: Buffer, password: Password): void {
  const algorithm = macData.mac.digestAlgorithm;
  const expected = octets(macData.mac.digest);
  let keys: { hash: string; key: Buffer }[];
  if (algorithm.algorithmId === OID.pbmac1) {
    keys = [pbmac1Key(algorithm.algorithmParams, password.utf8)];
  } else {
    const hash = PKCS12_HASHES[algorithm.algorithmId];
    if (!hash) throw unsupported(`the PKCS#12 integrity uses an unsupported hash (${algorithm.algorithmId})`);
    const iterations = macData.iterations ?? 1;
    checkIterations(iterations);
    const salt = octets(macData.macSalt);
    const length = createHmac(hash.name, '').digest().length;
    keys = password.bmp.map((bmp) => ({ hash: hash.name, key: pkcs12Kdf(hash, bmp, salt, KDF_PURPOSE.mac, iterations, length) }));
  }
  const matches = keys.some(({ hash, key }) => {
    const actual = createHmac(hash, key).update(content).digest();
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  });
  if (!matches) throw new Pkcs12Error('password', 'the PKCS#12 integrity check failed: wrong password or a damaged file');
}

/** PBMAC1 (RFC 9579): PBKDF2 over the UTF-8 password, then the named HMAC. */
function pbmac1Key(params: asn1js.AsnType, password: Buffer): { hash: string; key: Buffer } {
  if (!(params instanceof asn1js.Sequence)) throw formatError('PBMAC1 parameters');
  const [kdfBlock, schemeBlock] = params.valueBlock.value;
  const kdfAlgorithm = parse(pkijs.AlgorithmIdentifier, kdfBlock.toBER(), 'PBMAC1 key derivation');
  const scheme = parse(pkijs.AlgorithmIdentifier, schemeBlock.toBER(), 'PBMAC1 MAC scheme');
  const hash = HMAC_PRFS[scheme.algorithmId];
  if (kdfAlgorithm.algorithmId !== OID.pbkdf2 || !hash) throw unsupported('the PKCS#12 integrity uses an unsupported PBMAC1 scheme');
  const kdf = parse(pkijs.PBKDF2Params, kdfAlgorithm.algorithmParams.toBER(), 'PBKDF2 parameters');
  if (kdf.keyLength === undefined) throw formatError('PBMAC1 key length');
  return { hash, key: pbkdf2Key(kdf, password, kdf.keyLength) };
}

function readSafeContents(der: Buffer, password: Password, out: Pkcs12Contents, depth: number): void {
  if (depth > MAX_NESTING) throw formatError('safe contents nested too deeply');
  const asn1 = decodeBer(der);
  if (asn1.offset === -1 || !(asn1.result instanceof asn1js.Sequence)) throw formatError('safe contents');
  for (const element of asn1.result.valueBlock.value) {
    let bag: pkijs.SafeBag;
    try {
      bag = new pkijs.SafeBag({ schema: element });
    } catch {
      continue; // a bag type we have no use for (CRL, secret, unknown): skipped, like other readers do
    }
    readBag(bag, password, out, depth);
  }
}

function readBag(bag: pkijs.SafeBag, password: Password, out: Pkcs12Contents, depth: number): void {
  switch (bag.bagId) {
    case OID.keyBag:
      out.keys.push(Buffer.from((bag.bagValue as pkijs.PrivateKeyInfo).toSchema().toBER()));
      break;
    case OID.shroudedKeyBag: {
      const shrouded = bag.bagValue as pkijs.PKCS8ShroudedKeyBag;
      const candidates = decrypt(shrouded.encryptionAlgorithm, octets(shrouded.encryptedData), password);
      out.keys.push(firstParsing(candidates, (plain) => {
        parse(pkijs.PrivateKeyInfo, plain, 'private key');
        return plain;
      }));
      break;
    }
    case OID.certBag: {
      const certBag = bag.bagValue as pkijs.CertBag;
      if (certBag.certId === OID.x509Certificate) out.certificates.push(octets(certBag.certValue as asn1js.AsnType));
      break;
    }
    case OID.safeContentsBag:
      readSafeContents(Buffer.from((bag.bagValue as pkijs.SafeContents).toSchema().toBER()), password, out, depth + 1);
      break;
    default:
      break;
  }
}

export function readPkcs12(file: Uint8Array, passphrase: string): Pkcs12Contents {
  const pfx = parse(pkijs.PFX, file, 'PFX');
  if (pfx.authSafe.contentType !== OID.data) throw unsupported('the PKCS#12 uses public-key integrity, which is not supported; export it with a password');
  const content = octets(pfx.authSafe.content);
  const password = passwordForms(passphrase);
  if (pfx.macData) verifyMac(pfx.macData, content, password);
  const authenticatedSafe = parse(pkijs.AuthenticatedSafe, content, 'authenticated safe');
  const out: Pkcs12Contents = { keys: [], certificates: [] };
  for (const info of authenticatedSafe.safeContents) {
    if (info.contentType === OID.data) {
      readSafeContents(octets(info.content), password, out, 0);
    } else if (info.contentType === OID.encryptedData) {
      const encrypted = parse(pkijs.EncryptedData, info.content.toBER(), 'encrypted safe');
      const eci = encrypted.encryptedContentInfo;
      if (!eci.encryptedContent) throw formatError('an encrypted safe has no content');
      const candidates = decrypt(eci.contentEncryptionAlgorithm, octets(eci.encryptedContent), password);
      firstParsing(candidates, (plain) => {
        const partial: Pkcs12Contents = { keys: [], certificates: [] };
        readSafeContents(plain, password, partial, 0);
        out.keys.push(...partial.keys);
        out.certificates.push(...partial.certificates);
      });
    } else {
      throw unsupported('the PKCS#12 holds a public-key-encrypted safe (envelopedData), which is not supported; export it with a password');
    }
  }
  return out;
}
