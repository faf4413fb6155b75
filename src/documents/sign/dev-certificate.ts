import { createHash, randomBytes, sign as cryptoSign, type KeyObject } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';

/**
 * X.509 certificates for the development identity, written with pkijs/asn1js and signed with
 * node:crypto (sha256WithRSAEncryption): a CA and a signing certificate it issues.
 */
export interface CertificateSpec {
  subject: { commonName: string; organization: string };
  issuer: { commonName: string; organization: string };
  publicKey: KeyObject;
  /** The issuer's RSA key (the subject's own for a self-signed CA). */
  signingKey: KeyObject;
  years: number;
  ca: boolean;
  /** The issuer's subject key identifier, for authorityKeyIdentifier (omitted when self-signed). */
  issuerKeyId?: Buffer;
}

const OID = {
  commonName: '2.5.4.3',
  organization: '2.5.4.10',
  sha256WithRsa: '1.2.840.113549.1.1.11',
  basicConstraints: '2.5.29.19',
  keyUsage: '2.5.29.15',
  subjectKeyIdentifier: '2.5.29.14',
  authorityKeyIdentifier: '2.5.29.35',
} as const;

const der = (value: { toBER(): ArrayBuffer }): ArrayBuffer => value.toBER();

/** CN, O as two single-valued RDNs (pkijs would build one multi-valued RDN from a list). */
function distinguishedName(name: { commonName: string; organization: string }): pkijs.RelativeDistinguishedNames {
  const rdn = (type: string, value: string) =>
    new asn1js.Set({ value: [new pkijs.AttributeTypeAndValue({ type, value: new asn1js.Utf8String({ value }) }).toSchema()] });
  const encoded = new asn1js.Sequence({ value: [rdn(OID.commonName, name.commonName), rdn(OID.organization, name.organization)] }).toBER();
  return pkijs.RelativeDistinguishedNames.fromBER(encoded);
}

/** RFC 5280 §4.2.1.2 method (1): SHA-1 of the subjectPublicKey BIT STRING value. */
export function subjectKeyIdentifier(publicKey: KeyObject): Buffer {
  const info = pkijs.PublicKeyInfo.fromBER(publicKey.export({ type: 'spki', format: 'der' }));
  return createHash('sha1').update(info.subjectPublicKey.valueBlock.valueHexView).digest();
}

/** UTCTime through 2049, GeneralizedTime after (RFC 5280 §4.1.2.5). */
const time = (date: Date) => new pkijs.Time({ type: date.getUTCFullYear() < 2050 ? pkijs.TimeType.UTCTime : pkijs.TimeType.GeneralizedTime, value: date });

/** keyUsage bits (RFC 5280 §4.2.1.3) as a DER BIT STRING: trailing zero bits are not encoded. */
function keyUsage(bits: number[]): asn1js.BitString {
  const byte = bits.reduce((acc, bit) => acc | (0x80 >> bit), 0);
  let unused = 0;
  while (unused < 7 && !(byte & (1 << unused))) unused++;
  return new asn1js.BitString({ valueHex: new Uint8Array([byte]), unusedBits: unused });
}

const KEY_USAGE = { digitalSignature: 0, nonRepudiation: 1, keyCertSign: 5, cRLSign: 6 } as const;

function extensions(spec: CertificateSpec): pkijs.Extension[] {
  const list = [
    new pkijs.Extension({
      extnID: OID.basicConstraints, critical: true,
      extnValue: der(new pkijs.BasicConstraints(spec.ca ? { cA: true, pathLenConstraint: 0 } : {}).toSchema()),
    }),
    new pkijs.Extension({
      extnID: OID.keyUsage, critical: true,
      extnValue: der(keyUsage(spec.ca ? [KEY_USAGE.keyCertSign, KEY_USAGE.cRLSign] : [KEY_USAGE.digitalSignature, KEY_USAGE.nonRepudiation])),
    }),
    new pkijs.Extension({
      extnID: OID.subjectKeyIdentifier, critical: false,
      extnValue: der(new asn1js.OctetString({ valueHex: subjectKeyIdentifier(spec.publicKey) })),
    }),
  ];
  if (spec.issuerKeyId) {
    list.push(new pkijs.Extension({
      extnID: OID.authorityKeyIdentifier, critical: false,
      extnValue: der(new pkijs.AuthorityKeyIdentifier({ keyIdentifier: new asn1js.OctetString({ valueHex: spec.issuerKeyId }) }).toSchema()),
    }));
  }
  return list;
}

/** A DER certificate per `spec`, valid from a minute ago for `years` years. */
export function createCertificate(spec: CertificateSpec): Buffer {
  const serial = randomBytes(16);
  serial[0] = 0x01; // positive and never shortened
  const notBefore = new Date(Date.now() - 60_000);
  const notAfter = new Date(notBefore.getTime() + spec.years * 365 * 86_400_000);
  const algorithm = () => new pkijs.AlgorithmIdentifier({ algorithmId: OID.sha256WithRsa, algorithmParams: new asn1js.Null() });
  const certificate = new pkijs.Certificate({
    version: 2,
    serialNumber: new asn1js.Integer({ valueHex: serial }),
    signature: algorithm(),
    issuer: distinguishedName(spec.issuer),
    subject: distinguishedName(spec.subject),
    notBefore: time(notBefore),
    notAfter: time(notAfter),
    subjectPublicKeyInfo: pkijs.PublicKeyInfo.fromBER(spec.publicKey.export({ type: 'spki', format: 'der' })),
    extensions: extensions(spec),
  });
  const tbs = Buffer.from(der(certificate.encodeTBS()));
  certificate.tbsView = new Uint8Array(tbs);
  certificate.signatureAlgorithm = algorithm();
  certificate.signatureValue = new asn1js.BitString({ valueHex: cryptoSign('sha256', tbs, spec.signingKey) });
  return Buffer.from(der(certificate.toSchema()));
}
