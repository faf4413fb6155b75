import { createDecipheriv, createHmac, pbkdf2Sync, timingSafeEqual } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { bmpPassword, KDF_PURPOSE, PKCS12_HASHES, pkcs12Kdf, pkcs12KdfRounds } from './kdf.js';
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

export type Pkcs12Problem = 'format' | 'password' | 'unsupported' | 'budget';

export class Pkcs12Error extends Error {
  /** For 'budget': the rounds the file asked for (at least), and the budget. */
  constructor(readonly problem: Pkcs12Problem, message: string, readonly work?: { rounds: number; max: number }) {
    super(message);
  }
}

/**
 * The key-derivation work one file may cost, iteration counts coming from the caller's file: one
 * round is one hash call of the PKCS#12 KDF (RFC 7292 B.2, run from JavaScript, ~1-2 µs) or one
 * PBKDF2 iteration per output block (native, cheaper), summed over every derivation the file needs
 * — MAC, every shrouded key, every encrypted safe, and each password encoding tried. 1 000 000
 * rounds is about 1-2 s of CPU at the most; OpenSSL's defaults (2048 iterations) need under 20 000.
 */
export const PKCS12_BUDGET = { maxKdfRounds: 1_000_000 } as const;
const MAX_NESTING = 4;

const tooMuchWork = (rounds: number, max: number) =>
  new Pkcs12Error('budget', `the PKCS#12 asks for at least ${rounds.toLocaleString('en')} key-derivation rounds (iterations × derivations, MAC included); at most ${max.toLocaleString('en')} are spent on one file`, { rounds, max });

/** Key-derivation rounds spent on one file, charged before each derivation runs. */
class KdfMeter {
  spent = 0;
  constructor(readonly max: number) {}

  charge(rounds: number): void {
    if (this.spent + rounds > this.max) throw tooMuchWork(this.spent + rounds, this.max);
    this.spent += rounds;
  }
}

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

/** The password encodings to try: PKCS#12 KDFs want BMPString, PBKDF2 wants the bytes (UTF-8). */
interface Password {
  bmp: Buffer[];
  utf8: Buffer;
}

function passwordForms(passphrase: string): Password {
  // An empty password is written either as a bare terminator (OpenSSL, "") or as nothing at all
  // (a NULL password); both must open, whether the caller sent "" or no passphrase. They are tried
  // in this order and the first that works is kept (the MAC, when there is one, tells which).
  return { bmp: passphrase === '' ? [bmpPassword(''), Buffer.alloc(0)] : [bmpPassword(passphrase)], utf8: Buffer.from(passphrase, 'utf8') };
}

const SHA1 = PKCS12_HASHES['1.3.14.3.2.26'];

/** A legacy PBE's salt and iterations, and the rounds its key and IV derivations cost. */
function legacyParams(scheme: { keyBytes: number }, params: asn1js.AsnType): { salt: Buffer; iterations: number; rounds: number } {
  if (!(params instanceof asn1js.Sequence)) throw formatError('PBE parameters');
  const [saltBlock, iterationsBlock] = params.valueBlock.value;
  const iterations = integerOf(iterationsBlock, 'PBE iteration count');
  return { salt: octets(saltBlock), iterations, rounds: pkcs12KdfRounds(SHA1, iterations, scheme.keyBytes) + pkcs12KdfRounds(SHA1, iterations, 8) };
}

function decryptLegacy(scheme: { keyBytes: number; cipher: 'des-ede3-cbc' | 'rc2' }, params: asn1js.AsnType, password: Buffer, data: Buffer, meter: KdfMeter): Buffer {
  const { salt, iterations, rounds } = legacyParams(scheme, params);
  meter.charge(rounds);
  let key = pkcs12Kdf(SHA1, password, salt, KDF_PURPOSE.key, iterations, scheme.keyBytes);
  const iv = pkcs12Kdf(SHA1, password, salt, KDF_PURPOSE.iv, iterations, 8);
  if (scheme.cipher === 'rc2') return rc2CbcDecrypt(key, iv, data);
  if (key.length === 16) key = Buffer.concat([key, key.subarray(0, 8)]);
  const decipher = createDecipheriv('des-ede3-cbc', key, iv);
  return Buffer.concat([decipher.update(data), decipher.final()]);
}

interface Pbes2 {
  cipher: { name: string; keyBytes: number };
  kdf: pkijs.PBKDF2Params;
  iv: Buffer;
}

function pbes2Params(params: asn1js.AsnType): Pbes2 {
  const pbes2 = parse(pkijs.PBES2Params, params.toBER(), 'PBES2 parameters');
  if (pbes2.keyDerivationFunc.algorithmId !== OID.pbkdf2) throw unsupported(`the PKCS#12 uses an unsupported key derivation (${pbes2.keyDerivationFunc.algorithmId})`);
  const cipher = PBES2_CIPHERS[pbes2.encryptionScheme.algorithmId];
  if (!cipher) throw unsupported(`the PKCS#12 uses an unsupported cipher (${pbes2.encryptionScheme.algorithmId})`);
  const kdf = parse(pkijs.PBKDF2Params, pbes2.keyDerivationFunc.algorithmParams.toBER(), 'PBKDF2 parameters');
  return { cipher, kdf, iv: octets(pbes2.encryptionScheme.algorithmParams) };
}

function decryptPbes2(params: asn1js.AsnType, password: Buffer, data: Buffer, meter: KdfMeter): Buffer {
  const { cipher, kdf, iv } = pbes2Params(params);
  const key = pbkdf2Key(kdf, password, kdf.keyLength ?? cipher.keyBytes, meter);
  if (key.length !== cipher.keyBytes) throw formatError('PBKDF2 key length');
  const decipher = createDecipheriv(cipher.name, key, iv);
  return Buffer.concat([decipher.update(data), decipher.final()]);
}

const HMAC_BYTES: Record<string, number> = { sha1: 20, sha224: 28, sha256: 32, sha384: 48, sha512: 64 };

/** PBKDF2's PRF and its cost: one round per iteration per output block. */
function pbkdf2Plan(kdf: pkijs.PBKDF2Params, keyLength: number): { prf: string; rounds: number } {
  if (!(kdf.salt instanceof asn1js.OctetString)) throw unsupported('the PKCS#12 uses a PBKDF2 salt source other than a specified salt');
  if (!Number.isSafeInteger(kdf.iterationCount) || kdf.iterationCount < 1 || keyLength < 1 || keyLength > 64) throw formatError('PBKDF2 parameters');
  const prf = kdf.prf ? HMAC_PRFS[kdf.prf.algorithmId] : 'sha1';
  if (!prf) throw unsupported(`the PKCS#12 uses an unsupported PBKDF2 function (${kdf.prf?.algorithmId})`);
  return { prf, rounds: kdf.iterationCount * Math.ceil(keyLength / HMAC_BYTES[prf]!) };
}

function pbkdf2Key(kdf: pkijs.PBKDF2Params, password: Buffer, keyLength: number, meter: KdfMeter): Buffer {
  const { prf, rounds } = pbkdf2Plan(kdf, keyLength);
  meter.charge(rounds);
  return pbkdf2Sync(password, octets(kdf.salt as asn1js.OctetString), kdf.iterationCount, keyLength, prf);
}

/** Rounds one decryption with `algorithm` costs per password form, and how many forms it may try. */
function decryptionRounds(algorithm: pkijs.AlgorithmIdentifier, password: Password): number {
  const legacy = LEGACY_PBE[algorithm.algorithmId];
  if (legacy) return legacyParams(legacy, algorithm.algorithmParams).rounds * password.bmp.length;
  if (algorithm.algorithmId === OID.pbes2) {
    const { cipher, kdf } = pbes2Params(algorithm.algorithmParams);
    return pbkdf2Plan(kdf, kdf.keyLength ?? cipher.keyBytes).rounds;
  }
  throw unsupported(`the PKCS#12 is encrypted with an unsupported scheme (${algorithm.algorithmId})`);
}

/**
 * Decrypts with each password form in turn and returns what `read` makes of the first plaintext it
 * accepts; later forms are not tried. A padding failure, or a plaintext that does not parse (a wrong
 * password without a MAC), moves on to the next form.
 */
function decryptAndRead<T>(algorithm: pkijs.AlgorithmIdentifier, data: Buffer, password: Password, meter: KdfMeter, read: (plain: Buffer) => T): T {
  const legacy = LEGACY_PBE[algorithm.algorithmId];
  const attempts: (() => Buffer)[] = legacy
    ? password.bmp.map((bmp) => () => decryptLegacy(legacy, algorithm.algorithmParams, bmp, data, meter))
    : algorithm.algorithmId === OID.pbes2
      ? [() => decryptPbes2(algorithm.algorithmParams, password.utf8, data, meter)]
      : [];
  if (attempts.length === 0) throw unsupported(`the PKCS#12 is encrypted with an unsupported scheme (${algorithm.algorithmId})`);
  for (const attempt of attempts) {
    let plain: Buffer;
    try {
      plain = attempt();
    } catch (err) {
      if (err instanceof Pkcs12Error) throw err;
      continue;
    }
    try {
      return read(plain);
    } catch (err) {
      if (err instanceof Pkcs12Error && (err.problem === 'unsupported' || err.problem === 'budget')) throw err;
    }
  }
  throw new Pkcs12Error('password', 'the PKCS#12 could not be decrypted with this password');
}

/** How the MAC key is derived: PBMAC1 (PBKDF2 over UTF-8) or the PKCS#12 KDF (per BMP form). */
type MacPlan =
  | { kind: 'pbmac1'; hash: string; kdf: pkijs.PBKDF2Params; keyLength: number; rounds: number }
  | { kind: 'pkcs12'; hash: (typeof PKCS12_HASHES)[string]; iterations: number; salt: Buffer; roundsPerForm: number };

function macPlan(macData: pkijs.MacData): MacPlan {
  const algorithm = macData.mac.digestAlgorithm;
  if (algorithm.algorithmId === OID.pbmac1) {
    const { hash, kdf } = pbmac1Params(algorithm.algorithmParams);
    return { kind: 'pbmac1', hash, kdf, keyLength: kdf.keyLength!, rounds: pbkdf2Plan(kdf, kdf.keyLength!).rounds };
  }
  const hash = PKCS12_HASHES[algorithm.algorithmId];
  if (!hash) throw unsupported(`the PKCS#12 integrity uses an unsupported hash (${algorithm.algorithmId})`);
  const iterations = macData.iterations ?? 1;
  if (!Number.isSafeInteger(iterations) || iterations < 1) throw formatError('MAC iteration count');
  return { kind: 'pkcs12', hash, iterations, salt: octets(macData.macSalt), roundsPerForm: pkcs12KdfRounds(hash, iterations, hash.digestBytes) };
}

/**
 * Checks the password-integrity MAC, deriving the key with one password form after the other and
 * stopping at the first that matches; returns the BMP form that matched (PKCS#12 KDF), which then
 * decrypts the bags, or undefined for PBMAC1 (UTF-8).
 */
function verifyMac(macData: pkijs.MacData, content: Buffer, password: Password, meter: KdfMeter): Buffer | undefined {
  const plan = macPlan(macData);
  const expected = octets(macData.mac.digest);
  const matches = (hash: string, key: Buffer) => {
    const actual = createHmac(hash, key).update(content).digest();
    return actual.length === expected.length && timingSafeEqual(actual, expected);
  };
  if (plan.kind === 'pbmac1') {
    if (matches(plan.hash, pbkdf2Key(plan.kdf, password.utf8, plan.keyLength, meter))) return undefined;
  } else {
    for (const bmp of password.bmp) {
      meter.charge(plan.roundsPerForm);
      if (matches(plan.hash.name, pkcs12Kdf(plan.hash, bmp, plan.salt, KDF_PURPOSE.mac, plan.iterations, plan.hash.digestBytes))) return bmp;
    }
  }
  throw new Pkcs12Error('password', 'the PKCS#12 integrity check failed: wrong password or a damaged file');
}

/** PBMAC1 (RFC 9579): PBKDF2 over the UTF-8 password, then the named HMAC. */
function pbmac1Params(params: asn1js.AsnType): { hash: string; kdf: pkijs.PBKDF2Params } {
  if (!(params instanceof asn1js.Sequence)) throw formatError('PBMAC1 parameters');
  const [kdfBlock, schemeBlock] = params.valueBlock.value;
  if (!kdfBlock || !schemeBlock) throw formatError('PBMAC1 parameters');
  const kdfAlgorithm = parse(pkijs.AlgorithmIdentifier, kdfBlock.toBER(), 'PBMAC1 key derivation');
  const scheme = parse(pkijs.AlgorithmIdentifier, schemeBlock.toBER(), 'PBMAC1 MAC scheme');
  const hash = HMAC_PRFS[scheme.algorithmId];
  if (kdfAlgorithm.algorithmId !== OID.pbkdf2 || !hash) throw unsupported('the PKCS#12 integrity uses an unsupported PBMAC1 scheme');
  const kdf = parse(pkijs.PBKDF2Params, kdfAlgorithm.algorithmParams.toBER(), 'PBKDF2 parameters');
  if (kdf.keyLength === undefined) throw formatError('PBMAC1 key length');
  return { hash, kdf };
}

/**
 * The key-derivation rounds of everything readable without a key: the MAC (each password form it
 * may try), the encrypted safes and the shrouded keys of the unencrypted safes. Shrouded keys inside
 * encrypted safes are charged when their safe has been decrypted, before their own derivation.
 */
function visibleRounds(pfx: pkijs.PFX, authenticatedSafe: pkijs.AuthenticatedSafe, password: Password): number {
  let rounds = 0;
  if (pfx.macData) {
    const plan = macPlan(pfx.macData);
    rounds += plan.kind === 'pbmac1' ? plan.rounds : plan.roundsPerForm * password.bmp.length;
  }
  // With a PKCS#12 MAC the matching password form is known before any bag is decrypted.
  const bagPassword = pfx.macData && macPlan(pfx.macData).kind === 'pkcs12' ? { ...password, bmp: password.bmp.slice(0, 1) } : password;
  const safeRounds = (der: Buffer, depth: number): number => {
    if (depth > MAX_NESTING) throw formatError('safe contents nested too deeply');
    let sum = 0;
    for (const bag of safeBags(der)) {
      if (bag.bagId === OID.shroudedKeyBag) sum += decryptionRounds((bag.bagValue as pkijs.PKCS8ShroudedKeyBag).encryptionAlgorithm, bagPassword);
      else if (bag.bagId === OID.safeContentsBag) sum += safeRounds(Buffer.from((bag.bagValue as pkijs.SafeContents).toSchema().toBER()), depth + 1);
    }
    return sum;
  };
  for (const info of authenticatedSafe.safeContents) {
    if (info.contentType === OID.data) rounds += safeRounds(octets(info.content), 0);
    else if (info.contentType === OID.encryptedData) {
      const encrypted = parse(pkijs.EncryptedData, info.content.toBER(), 'encrypted safe');
      rounds += decryptionRounds(encrypted.encryptedContentInfo.contentEncryptionAlgorithm, bagPassword);
    }
  }
  return rounds;
}

/** The bags of a SafeContents; bag types we have no use for (CRL, secret, unknown) are skipped, like other readers do. */
function safeBags(der: Buffer): pkijs.SafeBag[] {
  const asn1 = decodeBer(der);
  if (asn1.offset === -1 || !(asn1.result instanceof asn1js.Sequence)) throw formatError('safe contents');
  const bags: pkijs.SafeBag[] = [];
  for (const element of asn1.result.valueBlock.value) {
    try {
      bags.push(new pkijs.SafeBag({ schema: element }));
    } catch {
      continue;
    }
  }
  return bags;
}

function readSafeContents(der: Buffer, password: Password, meter: KdfMeter, out: Pkcs12Contents, depth: number): void {
  if (depth > MAX_NESTING) throw formatError('safe contents nested too deeply');
  for (const bag of safeBags(der)) readBag(bag, password, meter, out, depth);
}

function readBag(bag: pkijs.SafeBag, password: Password, meter: KdfMeter, out: Pkcs12Contents, depth: number): void {
  switch (bag.bagId) {
    case OID.keyBag:
      out.keys.push(Buffer.from((bag.bagValue as pkijs.PrivateKeyInfo).toSchema().toBER()));
      break;
    case OID.shroudedKeyBag: {
      const shrouded = bag.bagValue as pkijs.PKCS8ShroudedKeyBag;
      out.keys.push(decryptAndRead(shrouded.encryptionAlgorithm, octets(shrouded.encryptedData), password, meter, (plain) => {
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
      readSafeContents(Buffer.from((bag.bagValue as pkijs.SafeContents).toSchema().toBER()), password, meter, out, depth + 1);
      break;
    default:
      break;
  }
}

export interface Pkcs12ReadOptions {
  /** Key-derivation rounds this file may cost (PKCS12_BUDGET by default). */
  maxKdfRounds?: number;
  /** Told the rounds spent (tests measure them against the real hash calls). */
  onWork?: (spent: number) => void;
}

/**
 * Reads the archive. The key-derivation work is counted before it runs: everything visible without a
 * key first (refused at once past the budget), then each derivation is charged before it runs, so
 * no file costs more than the budget; past it: Pkcs12Error 'budget'.
 */
export function readPkcs12(file: Uint8Array, passphrase: string, options: Pkcs12ReadOptions = {}): Pkcs12Contents {
  const meter = new KdfMeter(options.maxKdfRounds ?? PKCS12_BUDGET.maxKdfRounds);
  try {
    return readWithin(file, passphrase, meter);
  } finally {
    options.onWork?.(meter.spent);
  }
}

function readWithin(file: Uint8Array, passphrase: string, meter: KdfMeter): Pkcs12Contents {
  const pfx = parse(pkijs.PFX, file, 'PFX');
  if (pfx.authSafe.contentType !== OID.data) throw unsupported('the PKCS#12 uses public-key integrity, which is not supported; export it with a password');
  const content = octets(pfx.authSafe.content);
  let password = passwordForms(passphrase);
  const authenticatedSafe = parse(pkijs.AuthenticatedSafe, content, 'authenticated safe');
  const visible = visibleRounds(pfx, authenticatedSafe, password);
  if (visible > meter.max) throw tooMuchWork(visible, meter.max);
  if (pfx.macData) {
    const matched = verifyMac(pfx.macData, content, password, meter);
    if (matched) password = { ...password, bmp: [matched] };
  }
  const out: Pkcs12Contents = { keys: [], certificates: [] };
  for (const info of authenticatedSafe.safeContents) {
    if (info.contentType === OID.data) {
      readSafeContents(octets(info.content), password, meter, out, 0);
    } else if (info.contentType === OID.encryptedData) {
      const encrypted = parse(pkijs.EncryptedData, info.content.toBER(), 'encrypted safe');
      const eci = encrypted.encryptedContentInfo;
      if (!eci.encryptedContent) throw formatError('an encrypted safe has no content');
      decryptAndRead(eci.contentEncryptionAlgorithm, octets(eci.encryptedContent), password, meter, (plain) => {
        const partial: Pkcs12Contents = { keys: [], certificates: [] };
        readSafeContents(plain, password, meter, partial, 0);
        out.keys.push(...partial.keys);
        out.certificates.push(...partial.certificates);
      });
    } else {
      throw unsupported('the PKCS#12 holds a public-key-encrypted safe (envelopedData), which is not supported; export it with a password');
    }
  }
  return out;
}
