import { createHash, sign as cryptoSign, type KeyObject, type X509Certificate } from 'node:crypto';
import {
  children, contextTag, integer, nullValue, objectIdentifier, octetString, readNode, sequence, set, sortedSetContent, tlv,
  type Der,
} from './der.js';

/**
 * CMS SignedData for PAdES baseline B-B/B-T (ETSI EN 319 142-1): detached over the PDF
 * ByteRange, SHA-256, signed attributes content-type, message-digest and ESS
 * signing-certificate-v2 (no signing-time: PAdES puts the time in the signature dictionary).
 */
export const OID = {
  data: '1.2.840.113549.1.7.1',
  signedData: '1.2.840.113549.1.7.2',
  sha256: '2.16.840.1.101.3.4.2.1',
  rsaEncryption: '1.2.840.113549.1.1.1',
  ecdsaWithSha256: '1.2.840.10045.4.3.2',
  contentType: '1.2.840.113549.1.9.3',
  messageDigest: '1.2.840.113549.1.9.4',
  signingCertificateV2: '1.2.840.113549.1.9.16.2.47',
  signatureTimeStampToken: '1.2.840.113549.1.9.16.2.14',
} as const;

export interface CmsSigner {
  privateKey: KeyObject;
  certificate: X509Certificate;
  /** Further certificates to embed (intermediates, root), leaf excluded. */
  chain: X509Certificate[];
}

interface IssuerAndSerial {
  issuer: Der;
  serial: Der;
}

/** Issuer Name and serialNumber INTEGER, as raw DER, from a certificate's TBSCertificate. */
export function issuerAndSerial(certificate: X509Certificate): IssuerAndSerial {
  const tbs = children(readNode(certificate.raw))[0];
  const fields = children(tbs);
  const start = fields[0].tag === 0xa0 ? 1 : 0; // skip the explicit [0] version
  return { serial: fields[start].raw, issuer: fields[start + 2].raw };
}

const algorithm = (oid: string, withNull: boolean) =>
  withNull ? sequence(objectIdentifier(oid), nullValue()) : sequence(objectIdentifier(oid));

const attribute = (oid: string, ...values: Der[]) => sequence(objectIdentifier(oid), set(...values));

function signingCertificateV2(certificate: X509Certificate, ids: IssuerAndSerial): Der {
  const certHash = createHash('sha256').update(certificate.raw).digest();
  // GeneralNames { directoryName [4] EXPLICIT Name }
  const issuerSerial = sequence(sequence(contextTag(4, ids.issuer)), ids.serial);
  // hashAlgorithm is omitted: SHA-256 is its DEFAULT, and DER forbids encoding a default.
  const essCertIdV2 = sequence(octetString(certHash), issuerSerial);
  return attribute(OID.signingCertificateV2, sequence(sequence(essCertIdV2)));
}

export function signatureAlgorithmOf(key: KeyObject): { oid: string; withNull: boolean } {
  if (key.asymmetricKeyType === 'rsa') return { oid: OID.rsaEncryption, withNull: true };
  if (key.asymmetricKeyType === 'ec') return { oid: OID.ecdsaWithSha256, withNull: false };
  throw new Error(`unsupported signing key type ${key.asymmetricKeyType}`);
}

export interface SignedAttributes {
  /** Elements of the SET OF Attribute, DER-sorted. */
  content: Buffer;
}

export function buildSignedAttributes(contentDigest: Buffer, certificate: X509Certificate): SignedAttributes {
  const ids = issuerAndSerial(certificate);
  const attributes = [
    attribute(OID.contentType, objectIdentifier(OID.data)),
    attribute(OID.messageDigest, octetString(contentDigest)),
    signingCertificateV2(certificate, ids),
  ];
  return { content: sortedSetContent(attributes) };
}

/** The signature value over the DER SET OF signed attributes (tag 0x31, per RFC 5652 §5.4). */
export function signAttributes(attributes: SignedAttributes, privateKey: KeyObject): Buffer {
  return cryptoSign('sha256', tlv(0x31, attributes.content), privateKey);
}

export interface AssembleOptions {
  signer: CmsSigner;
  attributes: SignedAttributes;
  signatureValue: Buffer;
  /** DER ContentInfo of an RFC 3161 TimeStampToken over signatureValue (PAdES B-T). */
  timeStampToken?: Buffer;
}

export function assembleSignedData({ signer, attributes, signatureValue, timeStampToken }: AssembleOptions): Buffer {
  const ids = issuerAndSerial(signer.certificate);
  const sigAlg = signatureAlgorithmOf(signer.privateKey);
  const unsigned = timeStampToken
    ? [contextTag(1, sortedSetContent([attribute(OID.signatureTimeStampToken, timeStampToken)]))]
    : [];
  const signerInfo = sequence(
    integer(1),
    sequence(ids.issuer, ids.serial),
    algorithm(OID.sha256, false),
    contextTag(0, attributes.content),
    algorithm(sigAlg.oid, sigAlg.withNull),
    octetString(signatureValue),
    ...unsigned,
  );
  const certificates = [signer.certificate, ...signer.chain].map((c) => Buffer.from(c.raw));
  const signedData = sequence(
    integer(1),
    set(algorithm(OID.sha256, false)),
    sequence(objectIdentifier(OID.data)),
    contextTag(0, sortedSetContent(dedupe(certificates))),
    set(signerInfo),
  );
  return sequence(objectIdentifier(OID.signedData), contextTag(0, signedData));
}

function dedupe(items: Buffer[]): Buffer[] {
  const seen = new Set<string>();
  return items.filter((b) => {
    const key = createHash('sha256').update(b).digest('hex');
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Signs a content digest end to end (no timestamp); used for the trial size measurement too. */
export function signDigest(contentDigest: Buffer, signer: CmsSigner): { cms: Buffer; signatureValue: Buffer; attributes: SignedAttributes } {
  const attributes = buildSignedAttributes(contentDigest, signer.certificate);
  const signatureValue = signAttributes(attributes, signer.privateKey);
  return { cms: assembleSignedData({ signer, attributes, signatureValue }), signatureValue, attributes };
}
