import { constants, createHash, publicDecrypt, verify as cryptoVerify, type KeyObject } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

export type HashName = 'sha1' | 'sha224' | 'sha256' | 'sha384' | 'sha512';

const HASH_BY_OID: Record<string, HashName> = {
  '1.3.14.3.2.26': 'sha1',
  '2.16.840.1.101.3.4.2.4': 'sha224',
  '2.16.840.1.101.3.4.2.1': 'sha256',
  '2.16.840.1.101.3.4.2.2': 'sha384',
  '2.16.840.1.101.3.4.2.3': 'sha512',
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
  | { kind: 'ecdsa'; hash: HashName }
  | { kind: 'eddsa' };

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
};

/**
 * Maps a CMS signatureAlgorithm to a scheme Node can verify. CMS often names only the key
 * algorithm (rsaEncryption, id-ecPublicKey); then the signer's digest algorithm is the hash.
 */
export function signatureScheme(algorithm: pkijs.AlgorithmIdentifier, digest: HashName): SignatureScheme | undefined {
  const oid = algorithm.algorithmId;
  if (oid === '1.2.840.113549.1.1.1') return { kind: 'rsa-pkcs1', hash: digest };
  if (RSA_PKCS1_WITH[oid]) return { kind: 'rsa-pkcs1', hash: RSA_PKCS1_WITH[oid] };
  if (oid === '1.2.840.10045.2.1') return { kind: 'ecdsa', hash: digest };
  if (ECDSA_WITH[oid]) return { kind: 'ecdsa', hash: ECDSA_WITH[oid] };
  if (oid === '1.3.101.112') return { kind: 'eddsa' };
  if (oid === '1.2.840.113549.1.1.10') {
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
  if (scheme.kind === 'eddsa') return 'Ed25519';
  const hash = scheme.hash.toUpperCase().replace('SHA', 'SHA-');
  return { 'rsa-pkcs1': `RSA PKCS#1 v1.5 with ${hash}`, 'rsa-pss': `RSA-PSS with ${hash}`, ecdsa: `ECDSA with ${hash}` }[scheme.kind];
}

/** Verifies a signature over `data`; any key/scheme mismatch counts as a failed verification. */
export function verifySignature(scheme: SignatureScheme, key: KeyObject, data: Uint8Array, signature: Uint8Array): boolean {
  try {
    if (scheme.kind === 'eddsa') return cryptoVerify(null, data, key, signature);
    if (scheme.kind === 'rsa-pss') {
      return cryptoVerify(scheme.hash, data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: scheme.saltLength }, signature);
    }
    if (scheme.kind === 'rsa-pkcs1' && key.asymmetricKeyType !== 'rsa') return false;
    if (scheme.kind === 'ecdsa' && key.asymmetricKeyType !== 'ec') return false;
    return cryptoVerify(scheme.hash, data, key, signature);
  } catch {
    return false;
  }
}

export function hashRanges(hash: HashName, data: Uint8Array, ranges: Array<[number, number]>): Buffer {
  const h = createHash(hash);
  for (const [start, end] of ranges) h.update(data.subarray(start, end));
  return h.digest();
}

export const hashBytes = (hash: HashName, data: Uint8Array): Buffer => createHash(hash).update(data).digest();

/** The DigestInfo inside an RSA PKCS#1 v1.5 signature, recovered with the public key (undefined when it does not decode). */
export function recoverRsaDigestInfo(key: KeyObject, signature: Uint8Array): { hash?: HashName; digest: Uint8Array } | undefined {
  if (key.asymmetricKeyType !== 'rsa') return undefined;
  try {
    const decrypted = publicDecryptPkcs1(key, signature);
    const asn1 = asn1js.fromBER(decrypted);
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
