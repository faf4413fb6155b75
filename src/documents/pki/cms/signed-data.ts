import { createHash, timingSafeEqual } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { decodeBer, derEncoding, derEncodingAsSet } from '../asn1.js';
import {
  OID_NAMES,
  WEAK_HASHES,
  describeScheme,
  hashBytes,
  hashFromOid,
  recoverRsaDigestInfo,
  schemeHash,
  signatureScheme,
  verifySignature,
  type HashName,
  type SignatureScheme,
} from '../algorithms.js';
import { parseCert, type Cert } from '../certificates.js';

const OID_SIGNED_DATA = '1.2.840.113549.1.7.2';
const OID_CONTENT_TYPE = '1.2.840.113549.1.9.3';
const OID_MESSAGE_DIGEST = '1.2.840.113549.1.9.4';
const OID_SIGNING_TIME = '1.2.840.113549.1.9.5';
export const OID_SIGNATURE_TIMESTAMP = '1.2.840.113549.1.9.16.2.14';
const OID_SUBJECT_KEY_ID = '2.5.29.14';

export interface CmsCheck {
  /** Why the CMS could not be used at all (undefined when it decoded). */
  formatError?: string;
  /** The CMS decoded but something required by CMS/PAdES is missing (e.g. the message-digest attribute). */
  structureError?: string;
  certificates: Cert[];
  signerCert?: Cert;
  digest?: HashName;
  scheme?: SignatureScheme;
  algorithmDescription?: string;
  /** Names an algorithm we cannot verify (unknown or broken beyond use). */
  unsupportedAlgorithm?: string;
  /** Names an algorithm that verified but is too weak to pass (SHA-1, short RSA keys). */
  weakAlgorithm?: string;
  intact: boolean;
  /**
   * Set when the signature verifies only over a non-DER transmission of the signed attributes
   * (`cryptoValid` is false: RFC 5652 §5.4 signs their DER encoding). OpenSSL, NSS and pyHanko
   * accept such signatures, EU DSS (BouncyCastle) reports HASH_FAILURE.
   */
  nonDerAttributes?: string;
  /** True when the message-digest attribute was compared with the content's digest (`intact` is meaningful). */
  digestCompared?: boolean;
  cryptoValid: boolean;
  signingTime?: Date;
  signatureValue?: Uint8Array;
  eContent?: Uint8Array;
  eContentType?: string;
  timestampToken?: Uint8Array;
  /** Revocation data the signer archived with the signature (adbe-revocationInfoArchival, SignedData crls), DER. */
  archivedRevocation?: { ocsps: Uint8Array[]; crls: Uint8Array[] };
  signerCount: number;
}

/** How to hash the signed content: detached (PDF byte ranges) or the encapsulated content. */
export type ContentDigester = (hash: HashName) => Buffer;

const emptyCheck = (formatError: string): CmsCheck => ({ formatError, certificates: [], intact: false, cryptoValid: false, signerCount: 0 });

const bytesOf = (view: ArrayBuffer | Uint8Array) => (view instanceof Uint8Array ? view : new Uint8Array(view));

const sameBytes = (a: Uint8Array, b: Uint8Array) => a.length === b.length && timingSafeEqual(a, b);

/** The [0] IMPLICIT certificates of a SignedData, each as its original DER (re-encoding could break signatures). */
function rawCertificates(signedDataAsn1: asn1js.AsnType): Uint8Array[] {
  if (!(signedDataAsn1 instanceof asn1js.Sequence)) return [];
  const certSet = signedDataAsn1.valueBlock.value.find((el) => el.idBlock.tagClass === 3 && el.idBlock.tagNumber === 0);
  if (!certSet || !(certSet instanceof asn1js.Constructed)) return [];
  return certSet.valueBlock.value
    .filter((el) => el.idBlock.tagClass === 1 && el.idBlock.tagNumber === 16)
    .map((el) => bytesOf(el.valueBeforeDecodeView));
}

/** What the checks need of a SignedData. */
interface SignedDataParts {
  signerInfos: pkijs.SignerInfo[];
  /** The decoded tree of each SignerInfo, when read from SignedData's shape. */
  signerInfoTrees?: asn1js.AsnType[];
  encapContentInfo: pkijs.EncapsulatedContentInfo;
  certificates: Cert[];
}

/**
 * A SignedData read from its decoded tree when it has RFC 5652's shape (version, digestAlgorithms,
 * encapContentInfo, [0] certificates, [1] crls, signerInfos), its parts by pkijs; anything else by
 * pkijs's whole-schema matching, as before. Matching SignedData's and CertificateSet's schemas was
 * most of the time verify spent on a 1 MB PDF (bench/verify.ts); the parts read are the same.
 */
function readSignedData(asn1: asn1js.AsnType): SignedDataParts {
  const shaped = readSignedDataShape(asn1);
  if (shaped) return shaped;
  const signedData = new pkijs.SignedData({ schema: asn1 });
  const parsed = signedData.certificates ?? [];
  const certificates = rawCertificates(asn1).flatMap((der, i) => {
    const cert = parsed[i];
    return parseCert(der, cert instanceof pkijs.Certificate ? cert : undefined) ?? [];
  });
  return { signerInfos: signedData.signerInfos, encapContentInfo: signedData.encapContentInfo, certificates };
}

const isContextTag = (el: asn1js.AsnType | undefined, tag: number): el is asn1js.Constructed =>
  el instanceof asn1js.Constructed && el.idBlock.tagClass === 3 && el.idBlock.tagNumber === tag;
const isSequence = (el: asn1js.AsnType) => el.idBlock.tagClass === 1 && el.idBlock.tagNumber === 16;

function readSignedDataShape(asn1: asn1js.AsnType): SignedDataParts | undefined {
  if (!(asn1 instanceof asn1js.Sequence)) return undefined;
  const items = asn1.valueBlock.value;
  if (items.length < 4 || items.length > 6) return undefined;
  const [version, digestAlgorithms, encap] = items;
  const signerSet = items[items.length - 1];
  if (!(version instanceof asn1js.Integer) || !(digestAlgorithms instanceof asn1js.Set) || !(encap instanceof asn1js.Sequence) || !(signerSet instanceof asn1js.Set)) return undefined;
  const optional = items.slice(3, -1);
  const certSet = isContextTag(optional[0], 0) ? optional[0] : undefined;
  const rest = certSet ? optional.slice(1) : optional;
  if (rest.length > 1 || (rest.length === 1 && !isContextTag(rest[0], 1))) return undefined;
  if (!digestAlgorithms.valueBlock.value.every(isSequence)) return undefined;
  if (certSet?.valueBlock.value.some((el) => !isSequence(el))) return undefined; // other certificate choices: pkijs reads them
  try {
    const signerInfos = signerSet.valueBlock.value.map((schema) => new pkijs.SignerInfo({ schema }));
    const encapContentInfo = new pkijs.EncapsulatedContentInfo({ schema: encap });
    const certificates = (certSet?.valueBlock.value ?? []).flatMap((el) => parseCert(bytesOf(el.valueBeforeDecodeView), new pkijs.Certificate({ schema: el })) ?? []);
    return { signerInfos, signerInfoTrees: signerSet.valueBlock.value, encapContentInfo, certificates };
  } catch {
    return undefined;
  }
}

function findSigner(signerInfo: pkijs.SignerInfo, certs: Cert[]): Cert | undefined {
  const sid = signerInfo.sid;
  if (sid instanceof pkijs.IssuerAndSerialNumber) {
    return certs.find((c) => c.parsed.serialNumber.isEqual(sid.serialNumber) && c.parsed.issuer.isEqual(sid.issuer));
  }
  // subjectKeyIdentifier [0] IMPLICIT OCTET STRING: a context-tagged primitive (or, from lax
  // encoders, a constructed [0] around an OCTET STRING).
  const keyId = sid instanceof asn1js.Constructed ? sid.valueBlock.value[0] : sid;
  const wanted =
    keyId instanceof asn1js.OctetString || keyId instanceof asn1js.Primitive ? bytesOf((keyId as asn1js.Primitive).valueBlock.valueHexView) : undefined;
  if (!wanted) return undefined;
  const byExtension = certs.find((c) => {
    const ext = c.parsed.extensions?.find((e) => e.extnID === OID_SUBJECT_KEY_ID);
    const value = ext?.parsedValue;
    return value instanceof asn1js.OctetString && sameBytes(bytesOf(value.valueBlock.valueHexView), wanted);
  });
  // A certificate without the extension is named by the key identifier RFC 5280 §4.2.1.2 (1)
  // defines: the SHA-1 of its subjectPublicKey bits (what EU DSS and pyHanko also compute).
  return byExtension ?? certs.find((c) => {
    if (c.parsed.extensions?.some((e) => e.extnID === OID_SUBJECT_KEY_ID)) return false;
    const keyBits = bytesOf(c.parsed.subjectPublicKeyInfo.subjectPublicKey.valueBlock.valueHexView);
    return sameBytes(createHash('sha1').update(keyBits).digest(), wanted);
  });
}

function attribute(attrs: pkijs.SignedAndUnsignedAttributes | undefined, oid: string): asn1js.AsnType | undefined {
  return attrs?.attributes.find((a) => a.type === oid)?.values[0];
}

const OID_SIGNING_CERTIFICATE = '1.2.840.113549.1.9.16.2.12';
const OID_SIGNING_CERTIFICATE_V2 = '1.2.840.113549.1.9.16.2.47';

/**
 * The ESS signing-certificate(-v2) attribute (RFC 2634 §5.4, RFC 5035), which binds the signer's
 * certificate into what is signed: true when its first certificate hash is `signer`'s, false when it
 * names another certificate, undefined when there is none (or it cannot be read: other checks decide).
 */
function signingCertificateBinding(attrs: pkijs.SignedAndUnsignedAttributes, signer: Cert): boolean | undefined {
  const v2 = attribute(attrs, OID_SIGNING_CERTIFICATE_V2);
  const value = v2 ?? attribute(attrs, OID_SIGNING_CERTIFICATE);
  const certs = value instanceof asn1js.Sequence ? value.valueBlock.value[0] : undefined;
  const first = certs instanceof asn1js.Sequence ? certs.valueBlock.value[0] : undefined;
  if (!(first instanceof asn1js.Sequence)) return undefined;
  const [head, next] = first.valueBlock.value;
  let hash: HashName | undefined = v2 ? 'sha256' : 'sha1';
  let certHash = head;
  if (v2 && head instanceof asn1js.Sequence) {
    const oid = head.valueBlock.value[0];
    hash = oid instanceof asn1js.ObjectIdentifier ? hashFromOid(oid.valueBlock.toString()) : undefined;
    certHash = next;
  }
  if (!hash || !(certHash instanceof asn1js.OctetString)) return undefined;
  return sameBytes(hashBytes(hash, signer.der), bytesOf(certHash.valueBlock.valueHexView));
}

const OID_ADBE_REVOCATION_ARCHIVAL = '1.2.840.113583.1.1.8';

/** The DER elements of an [n] EXPLICIT SEQUENCE OF inside `parent`, if present. */
function taggedSequenceItems(parent: asn1js.AsnType | undefined, tag: number): Uint8Array[] {
  if (!(parent instanceof asn1js.Constructed)) return [];
  const tagged = parent.valueBlock.value.find((el) => el.idBlock.tagClass === 3 && el.idBlock.tagNumber === tag);
  const sequence = tagged instanceof asn1js.Constructed ? tagged.valueBlock.value[0] : undefined;
  return sequence instanceof asn1js.Constructed ? sequence.valueBlock.value.map((el) => bytesOf(el.valueBeforeDecodeView)) : [];
}

/**
 * Revocation data carried in the CMS: Adobe's signed revocationInfoArchival attribute (crl [0],
 * ocsp [1]) and CRLs in the SignedData's own [1] crls field.
 */
function archivedRevocation(signerInfo: pkijs.SignerInfo, signedDataAsn1: asn1js.AsnType): { ocsps: Uint8Array[]; crls: Uint8Array[] } {
  const archival = attribute(signerInfo.signedAttrs, OID_ADBE_REVOCATION_ARCHIVAL);
  const crls = taggedSequenceItems(archival, 0);
  const ocsps = taggedSequenceItems(archival, 1);
  if (signedDataAsn1 instanceof asn1js.Sequence) {
    const crlSet = signedDataAsn1.valueBlock.value.find((el) => el.idBlock.tagClass === 3 && el.idBlock.tagNumber === 1);
    if (crlSet instanceof asn1js.Constructed) {
      for (const el of crlSet.valueBlock.value) if (el.idBlock.tagClass === 1 && el.idBlock.tagNumber === 16) crls.push(bytesOf(el.valueBeforeDecodeView));
    }
  }
  return { ocsps, crls };
}

/**
 * The DER encoding of the signed attributes from the SignerInfo's decoded tree (its [0] after
 * digestAlgorithm), when that element is byte for byte what pkijs read as the signed attributes
 * (`transmitted`, re-tagged SET OF); undefined otherwise (the caller decodes `transmitted` again).
 */
function signedAttributesDer(signerInfoTree: asn1js.AsnType | undefined, transmitted: Uint8Array): Uint8Array | undefined {
  const attrs = signerInfoTree instanceof asn1js.Sequence ? signerInfoTree.valueBlock.value[3] : undefined;
  if (!isContextTag(attrs, 0)) return undefined;
  const original = attrs.valueBeforeDecodeView;
  if (original.length !== transmitted.length || transmitted[0] !== 0x31 || !sameBytes(original.subarray(1), transmitted.subarray(1))) return undefined;
  return derEncodingAsSet(attrs);
}

function rsaKeyBits(cert: Cert): number | undefined {
  const details = cert.x509.publicKey.asymmetricKeyDetails;
  return cert.x509.publicKey.asymmetricKeyType === 'rsa' ? details?.modulusLength : undefined;
}

/**
 * Checks one CMS SignedData: the content digest against the message-digest attribute (intact)
 * and the signer's signature over the DER signed attributes (cryptoValid). Never throws.
 */
export function checkSignedData(cms: Uint8Array, digestContent: ContentDigester): CmsCheck {
  let signedData: SignedDataParts;
  let signedDataAsn1: asn1js.AsnType;
  try {
    const asn1 = decodeBer(cms);
    if (asn1.offset === -1) return emptyCheck('the signature value is not DER-encoded CMS');
    const contentInfo = new pkijs.ContentInfo({ schema: asn1.result });
    if (contentInfo.contentType !== OID_SIGNED_DATA) return emptyCheck('the CMS object is not SignedData');
    signedDataAsn1 = contentInfo.content;
    signedData = readSignedData(signedDataAsn1);
  } catch {
    return emptyCheck('the signature value is not a well-formed CMS SignedData');
  }
  const certificates = signedData.certificates;
  const check: CmsCheck = { certificates, intact: false, cryptoValid: false, signerCount: signedData.signerInfos.length };
  const signerInfo = signedData.signerInfos[0];
  if (!signerInfo) return { ...check, structureError: 'the CMS SignedData has no signer' };

  const eContent = signedData.encapContentInfo.eContent;
  if (eContent) check.eContent = bytesOf(eContent.getValue());
  check.eContentType = signedData.encapContentInfo.eContentType;
  check.signatureValue = bytesOf(signerInfo.signature.valueBlock.valueHexView);
  const tst = attribute(signerInfo.unsignedAttrs, OID_SIGNATURE_TIMESTAMP);
  if (tst) check.timestampToken = bytesOf(tst.valueBeforeDecodeView);
  check.archivedRevocation = archivedRevocation(signerInfo, signedDataAsn1);
  const signingTime = attribute(signerInfo.signedAttrs, OID_SIGNING_TIME);
  if (signingTime instanceof asn1js.UTCTime || signingTime instanceof asn1js.GeneralizedTime) check.signingTime = signingTime.toDate();

  check.signerCert = findSigner(signerInfo, certificates);
  if (check.signerCert && signerInfo.signedAttrs) {
    const binding = signingCertificateBinding(signerInfo.signedAttrs, check.signerCert);
    if (binding === false) check.structureError = 'the signing-certificate attribute names another certificate than the one that signed (a substituted certificate)';
  }
  const digestOid = signerInfo.digestAlgorithm.algorithmId;
  const digest = hashFromOid(digestOid);
  if (!digest) return { ...check, unsupportedAlgorithm: OID_NAMES[digestOid] ?? `digest algorithm ${digestOid}` };
  check.digest = digest;
  const contentDigest = check.eContent ? hashBytes(digest, check.eContent) : digestContent(digest);
  // The message-digest comparison does not depend on the signature algorithm: report it even when
  // the algorithm cannot be checked.
  const messageDigest = signerInfo.signedAttrs ? attribute(signerInfo.signedAttrs, OID_MESSAGE_DIGEST) : undefined;
  if (messageDigest instanceof asn1js.OctetString) {
    check.intact = sameBytes(bytesOf(messageDigest.valueBlock.valueHexView), contentDigest);
    check.digestCompared = true;
  }
  const scheme = signatureScheme(signerInfo.signatureAlgorithm, digest);
  if (!scheme) {
    const oid = signerInfo.signatureAlgorithm.algorithmId;
    return { ...check, unsupportedAlgorithm: OID_NAMES[oid] ?? `signature algorithm ${oid}` };
  }
  check.scheme = scheme;
  // In CMS, r‖s instead of DER marks the BSI TR-03111 ecdsa-plain-* algorithms.
  const plain = scheme.kind === 'ecdsa' && scheme.encoding === 'ieee-p1363' ? ' (plain r‖s, BSI TR-03111)' : '';
  check.algorithmDescription = describeScheme(scheme) + plain;
  const weakHash = [digest, schemeHash(scheme)].find((h) => h && WEAK_HASHES.has(h));
  if (weakHash) check.weakAlgorithm = weakHash.toUpperCase().replace('SHA', 'SHA-');

  if (signerInfo.signedAttrs) {
    if (!(messageDigest instanceof asn1js.OctetString)) {
      check.structureError = 'the signed attributes have no message-digest: the signature does not bind the document';
    }
    if (!attribute(signerInfo.signedAttrs, OID_CONTENT_TYPE)) check.structureError ??= 'the signed attributes have no content-type';
    if (check.signerCert) {
      // RFC 5652 §5.4: the signature covers the DER encoding of the signed attributes, whatever was transmitted.
      const key = check.signerCert.x509.publicKey;
      const transmitted = bytesOf(signerInfo.signedAttrs.encodedValue);
      const der = signedAttributesDer(signedData.signerInfoTrees?.[0], transmitted) ?? derEncoding(decodeBer(transmitted).result);
      check.cryptoValid = !!der && verifySignature(scheme, key, der, check.signatureValue);
      if (!check.cryptoValid && !(der && sameBytes(der, transmitted)) && verifySignature(scheme, key, transmitted, check.signatureValue)) {
        check.nonDerAttributes = 'the signature covers signed attributes that are not DER-encoded (their SET is not in DER order or not in its shortest form): RFC 5652 requires the DER encoding';
      }
    }
  } else if (check.signerCert) {
    // No signed attributes: the signature is directly over the content; for RSA the digest can be read back.
    const key = check.signerCert.x509.publicKey;
    const recovered = scheme.kind === 'rsa-pkcs1' ? recoverRsaDigestInfo(key, check.signatureValue) : undefined;
    const cmsContent = check.eContent;
    if (cmsContent) {
      check.cryptoValid = verifySignature(scheme, key, cmsContent, check.signatureValue);
    } else if (recovered) {
      check.intact = sameBytes(recovered.digest, contentDigest);
      check.cryptoValid = check.intact;
    } else {
      check.structureError = 'a detached signature without signed attributes can only be checked for RSA PKCS#1 v1.5';
    }
    if (cmsContent) check.intact = check.cryptoValid;
  }
  const bits = check.signerCert ? rsaKeyBits(check.signerCert) : undefined;
  if (bits !== undefined && bits < 1024) check.weakAlgorithm ??= `RSA-${bits}`;
  return check;
}
