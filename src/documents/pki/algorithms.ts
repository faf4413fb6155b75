import { constants, createHash, publicDecrypt, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { decodeBer } from './asn1.js';

export type HashName = 'sha1' | 'sha224' | 'sha256' | 'sha384' | 'sha512' | 'sha3-224' | 'sha3-256' | 'sha3-384' | 'sha3-512' | 'shake256';

const HASH_BY_OID: Record<string, HashName> = {
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.4': 'sha224',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
  '2.16.840.1.101.3.4.2.7': 'sha3-224',
  '2.16.840.1.101.3.4.2.8': 'sha3-256',
  '2.16.840.1.101.3.4.2.9': 'sha3-384',
  '2.16.840.1.101.3.4.2.10': 'sha3-512',
  // RFC 8419: the message digest of an Ed448 signer is SHAKE256 with a 512-bit output.
  '2.16.840.1.101.3.4.2.12': 'shake256',
};

/** A hash object for `name` (SHAKE256 with the 64-byte output CMS uses). */
const newHash = (name: HashName) => (name === 'shake256' ? createHash('shake256', { outputLength: 64 }) : createHash(name));

const hashLabel = (name: HashName): string => {
  if (name === 'shake256') return 'SHAKE256';
  return name.startsWith('sha3-') ? name.toUpperCase() : name.toUpperCase().replace('SHA', 'SHA-');
};

/** Hash algorithms that are broken for signatures; accepted only for reporting, never for a pass. */
export const WEAK_HASHES: ReadonlySet<HashName> = new Set(['sha1']);

export const hashFromOid = (oid: string): HashName | undefined => HASH_BY_OID[oid];

export const OID_NAMES: Record<string, string> = {
  '1.2.840.113549.2.5': 'md5',
  '1.2.840.113549.2.2': 'md2',
  '1.2.840.113549.1.1.4': 'md5WithRSAEncryption',
  '1.2.840.113549.1.1.2': 'md2WithRSAEncryption',
};

export type SignatureScheme =
  | { kind: 'rsa-pkcs1'; hash: HashName }
  | { kind: 'rsa-pss'; hash: HashName; saltLength: number }
  /** `ieee-p1363`: the plain r‖s encoding of BSI TR-03111 (`ecdsa-plain-*`), else DER. */
  | { kind: 'ecdsa'; hash: HashName; encoding: 'der' | 'ieee-p1363' }
  | { kind: 'eddsa'; curve: 'Ed25519' | 'Ed448' };

const RSA_PKCS1_WITH: Record<string, HashName> = {
  '1.2.840.113549.1.1.5': 'sha1',
  '1.2.840.113549.1.1.14': 'sha224',
  '1.2.840.113549.1.1.11': 'sha256',
  '1.2.840.113549.1.1.12': 'sha384',
  '1.2.840.113549.1.1.13': 'sha512',
};

const ECDSA_WITH: Record<string, HashName> = {
  '1.2.840.10045.4.1': 'sha1',
  '1.2.840.10045.4.3.1': 'sha224',
  '1.2.840.10045.4.3.2': 'sha256',
  '1.2.840.10045.4.3.3': 'sha384',
  '1.2.840.10045.4.3.4': 'sha512',
  '2.16.840.1.101.3.4.3.9': 'sha3-224',
  '2.16.840.1.101.3.4.3.10': 'sha3-256',
  '2.16.840.1.101.3.4.3.11': 'sha3-384',
  '2.16.840.1.101.3.4.3.12': 'sha3-512',
};

/** BSI TR-03111 ecdsa-plain-signatures (0.4.0.127.0.7.1.1.4.1.*): r‖s instead of a DER sequence. */
const ECDSA_PLAIN_WITH: Record<string, HashName> = {
  '0.4.0.127.0.7.1.1.4.1.1': 'sha1',
  '0.4.0.127.0.7.1.1.4.1.2': 'sha224',
  '0.4.0.127.0.7.1.1.4.1.3': 'sha256',
  '0.4.0.127.0.7.1.1.4.1.4': 'sha384',
  '0.4.0.127.0.7.1.1.4.1.5': 'sha512',
  '0.4.0.127.0.7.1.1.4.1.8': 'sha3-224',
  '0.4.0.127.0.7.1.1.4.1.9': 'sha3-256',
  '0.4.0.127.0.7.1.1.4.1.10': 'sha3-384',
  '0.4.0.127.0.7.1.1.4.1.11': 'sha3-512',
};

/**
 * Maps a CMS signatureAlgorithm to a scheme Node can verify. CMS often names only the key
 * algorithm (rsaEncryption, id-ecPublicKey); then the signer's digest algorithm is the hash.
 */
export function signatureScheme(algorithm: pkijs.AlgorithmIdentifier, digest: HashName): SignatureScheme | undefined {
  const oid = algorithm.algorithmId;
  if (oid === '1.2.840.113549.1.1.1') return { kind: 'rsa-pkcs1', hash: digest };
  if (RSA_PKCS1_WITH[oid]) return { kind: 'rsa-pkcs1', hash: RSA_PKCS1_WITH[oid] };
  if (oid === '1.2.840.10045.2.1') return { kind: 'ecdsa', hash: digest, encoding: 'der' };
  if (ECDSA_WITH[oid]) return { kind: 'ecdsa', hash: ECDSA_WITH[oid], encoding: 'der' };
  if (ECDSA_PLAIN_WITH[oid]) return { kind: 'ecdsa', hash: ECDSA_PLAIN_WITH[oid], encoding: 'ieee-p1363' };
  if (oid === '1.3.101.112') return { kind: 'eddsa', curve: 'Ed25519' };
  if (oid === '1.3.101.113') return { kind: 'eddsa', curve: 'Ed448' };
  if (oid === '1.2.840.113549.1.1.10') {
    // RFC 4055 §3.1: absent parameters mean SHA-1, MGF1 with SHA-1, a 20-byte salt.
    if (algorithm.algorithmParams === undefined || algorithm.algorithmParams instanceof asn1js.Null) return { kind: 'rsa-pss', hash: 'sha1', saltLength: 20 };
    try {
      const params = new pkijs.RSASSAPSSParams({ schema: algorithm.algorithmParams });
      const hash = hashFromOid(params.hashAlgorithm.algorithmId);
      return hash ? { kind: 'rsa-pss', hash, saltLength: params.saltLength } : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

export const schemeHash = (scheme: SignatureScheme): HashName | undefined => (scheme.kind === 'eddsa' ? undefined : scheme.hash);

export function describeScheme(scheme: SignatureScheme): string {
  if (scheme.kind === 'eddsa') return scheme.curve;
  const hash = hashLabel(scheme.hash);
  if (scheme.kind === 'ecdsa') return `ECDSA with ${hash}`;
  return scheme.kind === 'rsa-pss' ? `RSA-PSS with ${hash}` : `RSA PKCS#1 v1.5 with ${hash}`;
}

/** Verifies a signature over `data`; any key/scheme mismatch counts as a failed verification. */
export function verifySignature(scheme: SignatureScheme, key: KeyObject, data: Uint8Array, signature: Uint8Array): boolean {
  try {
    if (scheme.kind === 'eddsa') return key.asymmetricKeyType === scheme.curve.toLowerCase() && cryptoVerify(null, data, key, signature);
    if (scheme.kind === 'rsa-pss') {
      return cryptoVerify(scheme.hash, data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: scheme.saltLength }, signature);
    }
    if (scheme.kind === 'rsa-pkcs1' && key.asymmetricKeyType !== 'rsa') return false;
    if (scheme.kind === 'ecdsa') {
      return key.asymmetricKeyType === 'ec' && cryptoVerify(scheme.hash, data, { key, dsaEncoding: scheme.encoding }, signature);
    }
    return cryptoVerify(scheme.hash, data, key, signature);
  } catch {
    return false;
  }
}

export function hashRanges(hash: HashName, data: Uint8Array, ranges: Array<[number, number]>): Buffer {
  const h = newHash(hash);
  for (const [start, end] of ranges) h.update(data.subarray(start, end));
  return h.digest();
}

export const hashBytes = (hash: HashName, data: Uint8Array): Buffer => newHash(hash).update(data).digest();

/** The DigestInfo inside an RSA PKCS#1 v1.5 signature, recovered with the public key (undefined when it does not decode). */
export function recoverRsaDigestInfo(key: KeyObject, signature: Uint8Array): { hash?: HashName; digest: Uint8Array } | undefined {
  if (key.asymmetricKeyType !== 'rsa') return undefined;
  try {
    const decrypted = publicDecryptPkcs1(key, signature);
    const asn1 = decodeBer(decrypted);
    if (asn1.offset === -1 || !(asn1.result instanceof asn1js.Sequence)) return { digest: decrypted };
    const [algorithm, digest] = asn1.result.valueBlock.value;
    const oid = algorithm instanceof asn1js.Sequence ? algorithm.valueBlock.value[0] : undefined;
    if (!(oid instanceof asn1js.ObjectIdentifier) || !(digest instanceof asn1js.OctetString)) return { digest: decrypted };
    return { hash: hashFromOid(oid.valueBlock.toString()), digest: new Uint8Array(digest.valueBlock.valueHexView) };
  } catch {
    return undefined;
  }
}


function publicDecryptPkcs1(key: KeyObject, signature: Uint8Array): Buffer {
  return publicDecrypt({ key, padding: constants.RSA_PKCS1_PADDING }, signature);
}
