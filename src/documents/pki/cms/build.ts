import { createHash, sign as cryptoSign, type KeyObject, type X509Certificate } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { decodeBer } from '../asn1.js';

/**
 * CMS SignedData for PAdES baseline B-B/B-T (ETSI EN 319 142-1): detached over the PDF
 * ByteRange, SHA-256, signed attributes content-type, message-digest and ESS
 * signing-certificate-v2 (no signing-time: PAdES puts the time in the signature dictionary).
 * The structures are pkijs/asn1js types (the ones verify reads); node:crypto makes the
 * signature value. SET OF elements are put in DER order here, since asn1js keeps the given order.
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

const der = (value: { toBER(): ArrayBuffer }): Buffer => Buffer.from(value.toBER());

function parseBer(bytes: Uint8Array, what: string): asn1js.AsnType {
  const asn1 = decodeBer(bytes);
  if (asn1.offset === -1) throw new Error(`${what} is not valid BER`);
  return asn1.result;
}

/**
 * A value that is already encoded, placed in an asn1js tree and written back as is. asn1js would
 * otherwise re-encode the identity's certificates field by field on every signature (about
 * 0.2 ms each), though their bytes never change; a time-stamp token must keep the TSA's bytes.
 */
class Encoded extends asn1js.BaseBlock {
  private readonly bytes: ArrayBuffer;

  constructor(bytes: Uint8Array) {
    super();
    this.bytes = new Uint8Array(bytes).buffer; // a copy: a Buffer may be a view into a shared pool
  }

  override toBER(sizeOnly?: boolean, writer?: asn1js.ViewWriter): ArrayBuffer {
    const buffer = sizeOnly ? new ArrayBuffer(this.bytes.byteLength) : this.bytes.slice(0);
    if (!writer) return buffer;
    writer.write(buffer);
    return new ArrayBuffer(0);
  }
}

/** A pkijs Certificate (fields readable) whose schema is its own encoding, byte for byte. */
class EncodedCertificate extends pkijs.Certificate {
  constructor(private readonly encoded: Buffer, schema: asn1js.AsnType) {
    super({ schema });
  }

  override toSchema(): asn1js.Sequence {
    return new Encoded(this.encoded) as unknown as asn1js.Sequence;
  }
}

interface ParsedCertificate {
  certificate: EncodedCertificate;
  der: Buffer;
  /** The ESS signing-certificate-v2 attribute naming this certificate (the same for every signature). */
  signingCertificate?: pkijs.Attribute;
  /** That attribute's DER. */
  signingCertificateDer?: Buffer;
  /** Its IssuerAndSerialNumber, DER (the signer identifier of every SignerInfo it signs). */
  issuerAndSerialDer?: Buffer;
}

/**
 * Parsing with pkijs costs about a millisecond per certificate: an identity's few are parsed once.
 * Keyed by the certificate object, not its contents: the service's own identity keeps its objects
 * for the worker's life (a cache hit on every signature), while a caller's certificates are new
 * objects each request, so what is derived from them is dropped with them — nothing a caller sent
 * outlives its request.
 */
const parsedCertificates = new WeakMap<X509Certificate, ParsedCertificate>();

function parsed(certificate: X509Certificate): ParsedCertificate {
  let entry = parsedCertificates.get(certificate);
  if (!entry) {
    const raw = Buffer.from(certificate.raw);
    entry = { certificate: new EncodedCertificate(raw, parseBer(raw, 'a signing certificate')), der: raw };
    parsedCertificates.set(certificate, entry);
  }
  return entry;
}

/** IssuerAndSerialNumber taken from the certificate itself (issuer Name bytes kept as they are). */
export function issuerAndSerial(certificate: X509Certificate): pkijs.IssuerAndSerialNumber {
  const { certificate: cert } = parsed(certificate);
  return new pkijs.IssuerAndSerialNumber({ issuer: cert.issuer, serialNumber: cert.serialNumber });
}

const sha256Algorithm = () => new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256 });

/** SET OF in DER: elements sorted by their encodings (X.690 §11.6). */
function derSorted<T extends { toSchema(): { toBER(): ArrayBuffer } }>(items: T[]): T[] {
  return items.map((item) => ({ item, bytes: der(item.toSchema()) }))
    .sort((a, b) => Buffer.compare(a.bytes, b.bytes))
    .map(({ item }) => item);
}

function signingCertificateV2(certificate: X509Certificate): pkijs.Attribute {
  const entry = parsed(certificate);
  entry.signingCertificate ??= buildSigningCertificateV2(certificate);
  return entry.signingCertificate;
}

function buildSigningCertificateV2(certificate: X509Certificate): pkijs.Attribute {
  const ids = issuerAndSerial(certificate);
  const certHash = createHash('sha256').update(certificate.raw).digest();
  // ESSCertIDv2 without hashAlgorithm: SHA-256 is its DEFAULT, and DER forbids encoding a default.
  // issuerSerial: GeneralNames { directoryName [4] EXPLICIT Name }, serialNumber.
  const issuerSerial = new asn1js.Sequence({
    value: [
      new asn1js.Sequence({ value: [new pkijs.GeneralName({ type: 4, value: ids.issuer }).toSchema()] }),
      ids.serialNumber,
    ],
  });
  const essCertIdV2 = new asn1js.Sequence({ value: [new asn1js.OctetString({ valueHex: certHash }), issuerSerial] });
  const signingCertificate = new asn1js.Sequence({ value: [new asn1js.Sequence({ value: [essCertIdV2] })] });
  return new pkijs.Attribute({ type: OID.signingCertificateV2, values: [new Encoded(der(signingCertificate))] });
}

export function signatureAlgorithmOf(key: KeyObject): pkijs.AlgorithmIdentifier {
  if (key.asymmetricKeyType === 'rsa') return new pkijs.AlgorithmIdentifier({ algorithmId: OID.rsaEncryption, algorithmParams: new asn1js.Null() });
  if (key.asymmetricKeyType === 'ec') return new pkijs.AlgorithmIdentifier({ algorithmId: OID.ecdsaWithSha256 });
  throw new Error(`unsupported signing key type ${key.asymmetricKeyType}`);
}

/** The signed attributes: their DER SET (what the signature covers) and, for readers, the pkijs form of the same. */
export interface SignedAttributes {
  /** The explicit SET OF Attribute (tag 0x31, RFC 5652 §5.4), elements in DER order. */
  der: Buffer;
  /** The same attributes as pkijs objects, in DER order (built on first use; signing does not need them). */
  readonly attributes: pkijs.Attribute[];
}

/** One Attribute: SEQUENCE { type OID, SET { value } }. */
const attributeDer = (type: string, valueDer: Buffer) => tlv(TAG.sequence, oidDer(type), tlv(TAG.set, valueDer));

function signingCertificateV2Der(certificate: X509Certificate): Buffer {
  const entry = parsed(certificate);
  entry.signingCertificateDer ??= der(signingCertificateV2(certificate).toSchema());
  return entry.signingCertificateDer;
}

/**
 * Content-type, message-digest and ESS signing-certificate-v2, written as DER from parts: the
 * first and the last are the same for every signature of a signer (encoded once by asn1js/pkijs),
 * the digest is this signature's. Building and encoding the pkijs objects for each signature
 * cost ~0.3 ms (twice: once to sort, once to encode); test/unit/pki/cms-assembly.test.ts checks
 * the bytes against pkijs's encoding of the same attributes.
 */
export function buildSignedAttributes(contentDigest: Buffer, certificate: X509Certificate): SignedAttributes {
  const parts = [
    once('contentType attribute', () => new pkijs.Attribute({ type: OID.contentType, values: [new asn1js.ObjectIdentifier({ value: OID.data })] }).toSchema()),
    attributeDer(OID.messageDigest, tlv(TAG.octetString, contentDigest)),
    signingCertificateV2Der(certificate),
  ].sort(Buffer.compare); // SET OF in DER order (X.690 §11.6)
  let attributes: pkijs.Attribute[] | undefined;
  return {
    der: tlv(TAG.set, ...parts),
    get attributes() {
      attributes ??= derSorted([
        new pkijs.Attribute({ type: OID.contentType, values: [new asn1js.ObjectIdentifier({ value: OID.data })] }),
        new pkijs.Attribute({ type: OID.messageDigest, values: [new asn1js.OctetString({ valueHex: contentDigest })] }),
        signingCertificateV2(certificate),
      ]);
      return attributes;
    },
  };
}

/** The DER the signature covers: the attributes as an explicit SET OF (tag 0x31, RFC 5652 §5.4). */
export function signedAttributesDer(attributes: SignedAttributes): Buffer {
  return attributes.der;
}

/** The same DER encoded by asn1js from the pkijs objects (for tests comparing the two). */
export function signedAttributesDerByPkijs(attributes: SignedAttributes): Buffer {
  return der(new asn1js.Set({ value: attributes.attributes.map((a) => a.toSchema()) }));
}

export function signAttributes(attributes: SignedAttributes, privateKey: KeyObject): Buffer {
  return cryptoSign('sha256', attributes.der, privateKey);
}

export interface AssembleOptions {
  signer: CmsSigner;
  attributes: SignedAttributes;
  signatureValue: Buffer;
  /** DER ContentInfo of an RFC 3161 TimeStampToken over signatureValue (PAdES B-T). */
  timeStampToken?: Buffer;
}

/** DER length octets (X.690 §8.1.3, definite form). */
function derLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const octets: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) octets.unshift(rest % 256);
  return Buffer.from([0x80 | octets.length, ...octets]);
}

/** One DER element: tag, length, the contents given as encoded parts. */
function tlv(tag: number, ...contents: Buffer[]): Buffer {
  const body = Buffer.concat(contents);
  return Buffer.concat([Buffer.from([tag]), derLength(body.length), body]);
}

const TAG = { integer: 0x02, octetString: 0x04, sequence: 0x30, set: 0x31, context0: 0xa0, context1: 0xa1 } as const;

/** Encodings that never change, made once by asn1js/pkijs (so they are theirs byte for byte). */
const constantDer = new Map<string, Buffer>();
function once(key: string, make: () => { toBER(): ArrayBuffer }): Buffer {
  let bytes = constantDer.get(key);
  if (!bytes) {
    bytes = der(make());
    constantDer.set(key, bytes);
  }
  return bytes;
}

const oidDer = (oid: string) => once(`oid ${oid}`, () => new asn1js.ObjectIdentifier({ value: oid }));
const sha256AlgorithmDer = () => once('sha256', () => sha256Algorithm().toSchema());
const signatureAlgorithmDer = (key: KeyObject) => once(`signature ${key.asymmetricKeyType}`, () => signatureAlgorithmOf(key).toSchema());

function issuerAndSerialDer(certificate: X509Certificate): Buffer {
  const entry = parsed(certificate);
  entry.issuerAndSerialDer ??= der(issuerAndSerial(certificate).toSchema());
  return entry.issuerAndSerialDer;
}

/**
 * The SignedData ContentInfo, written as DER from parts that are either constant per signer
 * (certificates, issuer and serial number, algorithm identifiers: encoded once by asn1js/pkijs)
 * or this signature's own (signed attributes, signature value, time-stamp token). Building the
 * pkijs object tree for each signature cost ~0.4 ms for the same bytes; the unit test
 * test/unit/pki/cms-assembly.test.ts checks that pkijs reads it back and re-encodes it unchanged.
 */
export function assembleSignedData({ signer, attributes, signatureValue, timeStampToken }: AssembleOptions): Buffer {
  const signedAttributes = signedAttributesDer(attributes);
  const unsignedAttributes = timeStampToken
    // The token exactly as the TSA encoded it (its signature covers those bytes' content).
    ? [tlv(TAG.context1, tlv(TAG.sequence, oidDer(OID.signatureTimeStampToken), tlv(TAG.set, timeStampToken)))]
    : [];
  const signerInfo = tlv(TAG.sequence,
    tlv(TAG.integer, Buffer.from([1])),
    issuerAndSerialDer(signer.certificate),
    sha256AlgorithmDer(),
    // [0] IMPLICIT SET OF Attribute: the signed SET with its tag replaced (RFC 5652 §5.3, §5.4).
    Buffer.concat([Buffer.from([TAG.context0]), signedAttributes.subarray(1)]),
    signatureAlgorithmDer(signer.privateKey),
    tlv(TAG.octetString, signatureValue),
    ...unsignedAttributes);
  const certificates = dedupe([signer.certificate, ...signer.chain]).map((c) => parsed(c).der)
    .sort(Buffer.compare); // SET OF in DER order
  const signedData = tlv(TAG.sequence,
    tlv(TAG.integer, Buffer.from([1])),
    tlv(TAG.set, sha256AlgorithmDer()),
    tlv(TAG.sequence, oidDer(OID.data)),
    tlv(TAG.context0, ...certificates),
    tlv(TAG.set, signerInfo));
  return tlv(TAG.sequence, oidDer(OID.signedData), tlv(TAG.context0, signedData));
}

function dedupe(certificates: X509Certificate[]): X509Certificate[] {
  const seen = new Set<string>();
  return certificates.filter((c) => {
    if (seen.has(c.fingerprint256)) return false;
    seen.add(c.fingerprint256);
    return true;
  });
}

/** Signs a content digest end to end (no timestamp); used for the trial size measurement too. */
export function signDigest(contentDigest: Buffer, signer: CmsSigner): { cms: Buffer; signatureValue: Buffer; attributes: SignedAttributes } {
  const attributes = buildSignedAttributes(contentDigest, signer.certificate);
  const signatureValue = signAttributes(attributes, signer.privateKey);
  return { cms: assembleSignedData({ signer, attributes, signatureValue }), signatureValue, attributes };
}
