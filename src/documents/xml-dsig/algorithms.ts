import type { HashName, SignatureScheme } from '../pki/algorithms.js';

/** XML-DSig digest method URIs (RFC 6931 and the XML-DSig/XML-Enc recommendations). */
export const DIGEST_METHODS: Record<string, HashName> = {
  'http://www.w3.org/2000/09/xmldsig#sha1': 'sha1',
  'http://www.w3.org/2001/04/xmldsig-more#sha224': 'sha224',
  'http://www.w3.org/2001/04/xmlenc#sha256': 'sha256',
  'http://www.w3.org/2001/04/xmldsig-more#sha384': 'sha384',
  'http://www.w3.org/2001/04/xmlenc#sha512': 'sha512',
};

const HASH_LENGTH: Partial<Record<HashName, number>> = { sha1: 20, sha224: 28, sha256: 32, sha384: 48, sha512: 64 };

/** XML-DSig signature method URIs. ECDSA values are r||s (IEEE P1363), not DER; the scheme says so. */
export function xmlSignatureScheme(uri: string): SignatureScheme | undefined {
  const more = /^http:\/\/www\.w3\.org\/2001\/04\/xmldsig-more#(rsa|ecdsa)-(sha224|sha256|sha384|sha512|sha1)$/.exec(uri);
  if (more) return more[1] === 'rsa' ? { kind: 'rsa-pkcs1', hash: more[2] as HashName } : { kind: 'ecdsa', hash: more[2] as HashName, encoding: 'ieee-p1363' };
  if (uri === 'http://www.w3.org/2000/09/xmldsig#rsa-sha1') return { kind: 'rsa-pkcs1', hash: 'sha1' };
  const pss = /^http:\/\/www\.w3\.org\/2007\/05\/xmldsig-more#(sha224|sha256|sha384|sha512)-rsa-MGF1$/.exec(uri);
  if (pss) return { kind: 'rsa-pss', hash: pss[1] as HashName, saltLength: HASH_LENGTH[pss[1] as HashName]! };
  if (uri === 'http://www.w3.org/2021/04/xmldsig-more#eddsa-ed25519') return { kind: 'eddsa', curve: 'Ed25519' };
  if (uri === 'http://www.w3.org/2021/04/xmldsig-more#eddsa-ed448') return { kind: 'eddsa', curve: 'Ed448' };
  return undefined;
}

export const decodeBase64 = (text: string): Buffer => Buffer.from(text.replace(/\s+/g, ''), 'base64');
