import type { Element } from '@xmldom/xmldom';
import { verifySignature, type SignatureScheme } from '../pki/algorithms.js';
import type { Cert } from '../pki/certificates.js';
import { C14N_ALGORITHMS, canonicalize, type C14nOptions } from '../ooxml/c14n.js';
import { NS } from '../ooxml/constants.js';
import { firstChild, textOf } from '../ooxml/xml.js';
import { decodeBase64, xmlSignatureScheme } from './algorithms.js';

const EXC_C14N_NS = 'http://www.w3.org/2001/10/xml-exc-c14n#';

/** The methods a ds:SignedInfo names; `c14n`/`scheme` are undefined when this reader does not implement them. */
export interface SignedInfoMethods {
  c14nUri: string;
  methodUri: string;
  c14n: C14nOptions | undefined;
  scheme: SignatureScheme | undefined;
}

export function signedInfoMethods(signedInfo: Element): SignedInfoMethods {
  const c14nUri = firstChild(signedInfo, NS.dsig, 'CanonicalizationMethod')?.getAttribute('Algorithm') ?? '';
  const methodUri = firstChild(signedInfo, NS.dsig, 'SignatureMethod')?.getAttribute('Algorithm') ?? '';
  return { c14nUri, methodUri, c14n: C14N_ALGORITHMS[c14nUri], scheme: xmlSignatureScheme(methodUri) };
}

/** The octets the SignatureValue signs: SignedInfo canonicalised by its own CanonicalizationMethod (XML-DSig §3.2.2). */
function canonicalSignedInfo(signedInfo: Element, c14n: C14nOptions): Buffer {
  const method = firstChild(signedInfo, NS.dsig, 'CanonicalizationMethod');
  const prefixes = method && firstChild(method, EXC_C14N_NS, 'InclusiveNamespaces')?.getAttribute('PrefixList')?.split(/\s+/).filter(Boolean);
  return Buffer.from(canonicalize(signedInfo, { ...c14n, inclusivePrefixes: prefixes ?? undefined }), 'utf8');
}

/**
 * The certificate among `candidates` whose key made the SignatureValue over SignedInfo, or undefined
 * when none did or SignedInfo names a method this reader does not implement (see signedInfoMethods).
 */
export function signatureValueSigner(signedInfo: Element, signatureValue: Element, candidates: Cert[]): Cert | undefined {
  const { c14n, scheme } = signedInfoMethods(signedInfo);
  if (!c14n || !scheme) return undefined;
  const canonical = canonicalSignedInfo(signedInfo, c14n);
  const value = decodeBase64(textOf(signatureValue));
  return candidates.find((cert) => verifySignature(scheme, cert.x509.publicKey, canonical, value));
}
