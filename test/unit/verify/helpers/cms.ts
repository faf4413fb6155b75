import { createHash, sign as cryptoSign, constants } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import type { TestIdentity } from './pki.js';

export interface CmsOptions {
  signer: TestIdentity;
  /** Certificates to embed (default: the signer's). */
  certificates?: TestIdentity[];
  digest?: 'sha1' | 'sha256' | 'sha384' | 'sha512';
  /** ecdsa-plain: BSI TR-03111 r‖s with an ecdsa-plain-* OID; eddsa: Ed25519/Ed448 by the key. */
  scheme?: 'pkcs1' | 'pss' | 'ecdsa' | 'ecdsa-plain' | 'eddsa';
  /** RSA-PSS written without parameters (RFC 4055 defaults: SHA-1, MGF1-SHA-1, 20-byte salt). */
  pssDefaultParams?: boolean;
  /** Identify the signer by SubjectKeyIdentifier instead of issuer and serial number. */
  sidBySubjectKeyId?: boolean;
  /** Override the signature algorithm OID (e.g. one nobody implements). */
  signatureOidOverride?: string;
  withoutMessageDigest?: boolean;
  /** Override the digest algorithm OID written into the SignerInfo (e.g. md5 to test unsupported algorithms). */
  digestOidOverride?: string;
  signingTime?: Date;
  unsignedAttributes?: pkijs.Attribute[];
  /** Transmit the signed attributes out of DER order, signing those bytes or their DER encoding. */
  attributesOutOfOrder?: 'signed-as-sent' | 'signed-in-der';
}

const DIGEST_OID = { sha1: '1.3.14.3.2.26', sha256: '2.16.840.1.101.3.4.2.1', sha384: '2.16.840.1.101.3.4.2.2', sha512: '2.16.840.1.101.3.4.2.3' } as const;
const SHAKE256_OID = '2.16.840.1.101.3.4.2.12';
const ECDSA_PLAIN_OID = { sha1: '0.4.0.127.0.7.1.1.4.1.1', sha256: '0.4.0.127.0.7.1.1.4.1.3', sha384: '0.4.0.127.0.7.1.1.4.1.4', sha512: '0.4.0.127.0.7.1.1.4.1.5' } as const;

const isEd448 = (options: CmsOptions) => options.signer.key.asymmetricKeyType === 'ed448';

function certOf(identity: TestIdentity): pkijs.Certificate {
  return pkijs.Certificate.fromBER(identity.der);
}

function signatureAlgorithm(options: CmsOptions, digest: keyof typeof DIGEST_OID): pkijs.AlgorithmIdentifier {
  if (options.signatureOidOverride) return new pkijs.AlgorithmIdentifier({ algorithmId: options.signatureOidOverride });
  if (options.scheme === 'eddsa') return new pkijs.AlgorithmIdentifier({ algorithmId: isEd448(options) ? '1.3.101.113' : '1.3.101.112' });
  if (options.scheme === 'ecdsa-plain') return new pkijs.AlgorithmIdentifier({ algorithmId: ECDSA_PLAIN_OID[digest] });
  if (options.scheme === 'ecdsa') return new pkijs.AlgorithmIdentifier({ algorithmId: { sha1: '1.2.840.10045.4.1', sha256: '1.2.840.10045.4.3.2', sha384: '1.2.840.10045.4.3.3', sha512: '1.2.840.10045.4.3.4' }[digest] });
  if (options.scheme === 'pss' && options.pssDefaultParams) return new pkijs.AlgorithmIdentifier({ algorithmId: '1.2.840.113549.1.1.10' });
  if (options.scheme === 'pss') {
    const params = new pkijs.RSASSAPSSParams({
      hashAlgorithm: new pkijs.AlgorithmIdentifier({ algorithmId: DIGEST_OID[digest], algorithmParams: new asn1js.Null() }),
      maskGenAlgorithm: new pkijs.AlgorithmIdentifier({
        algorithmId: '1.2.840.113549.1.1.8',
        algorithmParams: new pkijs.AlgorithmIdentifier({ algorithmId: DIGEST_OID[digest], algorithmParams: new asn1js.Null() }).toSchema(),
      }),
      saltLength: 32,
    });
    return new pkijs.AlgorithmIdentifier({ algorithmId: '1.2.840.113549.1.1.10', algorithmParams: params.toSchema() });
  }
  return new pkijs.AlgorithmIdentifier({ algorithmId: '1.2.840.113549.1.1.1', algorithmParams: new asn1js.Null() });
}

/** A detached CMS SignedData over `content`, built by hand so tests can break any part of it. */
export function buildCms(content: Uint8Array, options: CmsOptions): Buffer {
  const digest = options.digest ?? (options.scheme === 'eddsa' ? 'sha512' : 'sha256');
  const shake = options.scheme === 'eddsa' && isEd448(options);
  const messageDigest = shake ? createHash('shake256', { outputLength: 64 }).update(content).digest() : createHash(digest).update(content).digest();
  const attributes = [
    new pkijs.Attribute({ type: '1.2.840.113549.1.9.3', values: [new asn1js.ObjectIdentifier({ value: '1.2.840.113549.1.7.1' })] }),
    new pkijs.Attribute({ type: '1.2.840.113549.1.9.5', values: [new asn1js.UTCTime({ valueDate: options.signingTime ?? new Date() })] }),
  ];
  if (!options.withoutMessageDigest) {
    attributes.push(new pkijs.Attribute({ type: '1.2.840.113549.1.9.4', values: [new asn1js.OctetString({ valueHex: messageDigest })] }));
  }
  const encodingOf = (list: pkijs.Attribute[]) => Buffer.from(new asn1js.Set({ value: list.map((a) => a.toSchema()) }).toBER());
  const derOrder = [...attributes].sort((a, b) => Buffer.compare(Buffer.from(a.toSchema().toBER()), Buffer.from(b.toSchema().toBER())));
  if (options.attributesOutOfOrder) attributes.splice(0, attributes.length, ...[...derOrder].reverse());
  const key = options.signer.key;
  const data = encodingOf(options.attributesOutOfOrder === 'signed-as-sent' ? attributes : derOrder);
  const signature =
    options.scheme === 'pss'
      ? cryptoSign(digest, data, { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: options.pssDefaultParams ? 20 : 32 })
      : options.scheme === 'eddsa'
        ? cryptoSign(null, data, key)
        : options.scheme === 'ecdsa-plain'
          ? cryptoSign(digest, data, { key, dsaEncoding: 'ieee-p1363' })
          : cryptoSign(digest, data, key);
  const signerCert = certOf(options.signer);
  const digestAlgorithm = new pkijs.AlgorithmIdentifier({ algorithmId: options.digestOidOverride ?? (shake ? SHAKE256_OID : DIGEST_OID[digest]), ...(shake ? {} : { algorithmParams: new asn1js.Null() }) });
  // Without the extension, the RFC 5280 §4.2.1.2 (1) key identifier: SHA-1 of the subjectPublicKey bits.
  const skiExtension = signerCert.extensions?.find((e) => e.extnID === '2.5.29.14')?.parsedValue as asn1js.OctetString | undefined;
  const keyId = skiExtension
    ? skiExtension.valueBlock.valueHexView
    : createHash('sha1').update(signerCert.subjectPublicKeyInfo.subjectPublicKey.valueBlock.valueHexView).digest();
  const signerInfo = new pkijs.SignerInfo({
    version: options.sidBySubjectKeyId ? 3 : 1,
    sid: options.sidBySubjectKeyId
      ? new asn1js.Primitive({ idBlock: { tagClass: 3, tagNumber: 0 }, valueHex: keyId })
      : new pkijs.IssuerAndSerialNumber({ issuer: signerCert.issuer, serialNumber: signerCert.serialNumber }),
    digestAlgorithm,
    signedAttrs: new pkijs.SignedAndUnsignedAttributes({ type: 0, attributes }),
    signatureAlgorithm: signatureAlgorithm(options, digest),
    signature: new asn1js.OctetString({ valueHex: signature }),
    ...(options.unsignedAttributes ? { unsignedAttrs: new pkijs.SignedAndUnsignedAttributes({ type: 1, attributes: options.unsignedAttributes }) } : {}),
  });
  const certificates = (options.certificates ?? [options.signer]).map(certOf);
  const signedData = new pkijs.SignedData({
    version: 1,
    digestAlgorithms: [digestAlgorithm],
    encapContentInfo: new pkijs.EncapsulatedContentInfo({ eContentType: '1.2.840.113549.1.7.1' }),
    ...(certificates.length ? { certificates } : {}),
    signerInfos: [signerInfo],
  });
  const contentInfo = new pkijs.ContentInfo({ contentType: '1.2.840.113549.1.7.2', content: signedData.toSchema(true) });
  return Buffer.from(contentInfo.toSchema().toBER());
}
