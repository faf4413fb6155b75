import { createHash, sign as cryptoSign, constants } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import type { TestIdentity } from './pki.js';

export interface CmsOptions {
  signer: TestIdentity;
  /** Certificates to embed (default: the signer's). */
  certificates?: TestIdentity[];
  digest?: 'sha1' | 'sha256' | 'sha384' | 'sha512';
  scheme?: 'pkcs1' | 'pss' | 'ecdsa';
  withoutMessageDigest?: boolean;
  /** Override the digest algorithm OID written into the SignerInfo (e.g. md5 to test unsupported algorithms). */
  digestOidOverride?: string;
  signingTime?: Date;
  unsignedAttributes?: pkijs.Attribute[];
}

const DIGEST_OID = { sha1: '1.3.14.3.2.26', sha256: '2.16.840.1.101.3.4.2.1', sha384: '2.16.840.1.101.3.4.2.2', sha512: '2.16.840.1.101.3.4.2.3' } as const;

function certOf(identity: TestIdentity): pkijs.Certificate {
  return pkijs.Certificate.fromBER(identity.der);
}

function signatureAlgorithm(options: CmsOptions, digest: keyof typeof DIGEST_OID): pkijs.AlgorithmIdentifier {
  if (options.scheme === 'ecdsa') return new pkijs.AlgorithmIdentifier({ algorithmId: { sha1: '1.2.840.10045.4.1', sha256: '1.2.840.10045.4.3.2', sha384: '1.2.840.10045.4.3.3', sha512: '1.2.840.10045.4.3.4' }[digest] });
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
  const digest = options.digest ?? 'sha256';
  const messageDigest = createHash(digest).update(content).digest();
  const attributes = [
    new pkijs.Attribute({ type: '1.2.840.113549.1.9.3', values: [new asn1js.ObjectIdentifier({ value: '1.2.840.113549.1.7.1' })] }),
    new pkijs.Attribute({ type: '1.2.840.113549.1.9.5', values: [new asn1js.UTCTime({ valueDate: options.signingTime ?? new Date() })] }),
  ];
  if (!options.withoutMessageDigest) {
    attributes.push(new pkijs.Attribute({ type: '1.2.840.113549.1.9.4', values: [new asn1js.OctetString({ valueHex: messageDigest })] }));
  }
  const signedAttrsDer = new asn1js.Set({ value: attributes.map((a) => a.toSchema()) }).toBER();
  const key = options.signer.key;
  const signature =
    options.scheme === 'pss'
      ? cryptoSign(digest, Buffer.from(signedAttrsDer), { key, padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: 32 })
      : cryptoSign(digest, Buffer.from(signedAttrsDer), key);
  const signerCert = certOf(options.signer);
  const digestAlgorithm = new pkijs.AlgorithmIdentifier({ algorithmId: options.digestOidOverride ?? DIGEST_OID[digest], algorithmParams: new asn1js.Null() });
  const signerInfo = new pkijs.SignerInfo({
    version: 1,
    sid: new pkijs.IssuerAndSerialNumber({ issuer: signerCert.issuer, serialNumber: signerCert.serialNumber }),
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
