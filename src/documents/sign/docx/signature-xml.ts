import { createHash, sign as signBytes, type KeyObject, type X509Certificate } from 'node:crypto';
import { canonicalize, el, type XmlElement } from './xml-node.js';
import { NS, RELATIONSHIP_TRANSFORM } from '../../ooxml/constants.js';

/**
 * The XML-DSig <Signature> of an OOXML package signature, laid out as Word and LibreOffice
 * write it: an idPackageObject (Manifest of part digests + SignatureTime), an idOfficeObject
 * (SignatureInfoV1) and XAdES SignedProperties, each referenced from SignedInfo.
 */
export const ALGORITHMS = {
  c14n: 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315',
  sha256: 'http://www.w3.org/2001/04/xmlenc#sha256',
  rsaSha256: 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256',
  ecdsaSha256: 'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256',
  objectType: 'http://www.w3.org/2000/09/xmldsig#Object',
  signedPropertiesType: 'http://uri.etsi.org/01903#SignedProperties',
} as const;

/** One entry of the package Manifest: a part digested as raw bytes, or a .rels part through the Relationship Transform. */
export interface ManifestEntry {
  uri: string;
  /** SHA-256 of the bytes that were hashed (raw part, or the canonical transform output). */
  digest: Buffer;
  /** Selected relationship Ids, for .rels parts. */
  relationshipIds?: string[];
}

export interface SignatureInput {
  manifest: ManifestEntry[];
  signingTime: Date;
  privateKey: KeyObject;
  certificate: X509Certificate;
  chain: X509Certificate[];
  /** SignatureInfoV1/SignatureComments: the purpose Word shows for the signature. */
  comments: string;
}

const SIGNATURE_ID = 'idPackageSignature';
const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest();
const base64 = (data: Uint8Array) => Buffer.from(data).toString('base64');
const digestMethod = () => el('DigestMethod', { Algorithm: ALGORITHMS.sha256 });
const text = (name: string, value: string, attributes: XmlElement['attributes'] = {}) => el(name, attributes, value ? [value] : []);
/** OOXML writes times as UTC to the second. */
const xmlTime = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

function manifestReference(entry: ManifestEntry): XmlElement {
  const children: XmlElement[] = [];
  if (entry.relationshipIds) {
    children.push(el('Transforms', {}, [
      el('Transform', { Algorithm: RELATIONSHIP_TRANSFORM }, entry.relationshipIds.map((id) => el('mdssi:RelationshipReference', { SourceId: id }))),
      el('Transform', { Algorithm: ALGORITHMS.c14n }),
    ]));
  }
  children.push(digestMethod(), text('DigestValue', base64(entry.digest)));
  return el('Reference', { URI: entry.uri }, children);
}

function packageObject(input: SignatureInput): XmlElement {
  return el('Object', { Id: 'idPackageObject' }, [
    el('Manifest', {}, input.manifest.map(manifestReference)),
    el('SignatureProperties', {}, [
      el('SignatureProperty', { Id: 'idSignatureTime', Target: `#${SIGNATURE_ID}` }, [
        el('mdssi:SignatureTime', {}, [text('mdssi:Format', 'YYYY-MM-DDThh:mm:ssTZD'), text('mdssi:Value', xmlTime(input.signingTime))]),
      ]),
    ]),
  ], { mdssi: NS.mdssi });
}

/**
 * SignatureInfoV1 in the element order of the Office digsig schema. Word expects the
 * machine-description elements to be present; we state neutral values, as LibreOffice does.
 */
function officeObject(input: SignatureInput): XmlElement {
  const info = el('SignatureInfoV1', {}, [
    text('SetupID', ''), text('SignatureText', ''), text('SignatureImage', ''), text('SignatureComments', input.comments),
    text('WindowsVersion', '6.1'), text('OfficeVersion', '16.0'), text('ApplicationVersion', '16.0'), text('Monitors', '1'),
    text('HorizontalResolution', '1280'), text('VerticalResolution', '800'), text('ColorDepth', '32'),
    text('SignatureProviderId', '{00000000-0000-0000-0000-000000000000}'), text('SignatureProviderUrl', ''),
    text('SignatureProviderDetails', '9'), text('ManifestHashAlgorithm', ALGORITHMS.sha256), text('SignatureType', '1'),
  ], { '': NS.officeDigsig });
  return el('Object', { Id: 'idOfficeObject' }, [
    el('SignatureProperties', {}, [el('SignatureProperty', { Id: 'idOfficeV1Details', Target: `#${SIGNATURE_ID}` }, [info])]),
  ]);
}

/** Node lists a DN's attributes in encoded order, one per line; RFC 4514 writes them in reverse, comma-separated. */
const rfc4514Name = (multiline: string) => multiline.split('\n').filter(Boolean).reverse().join(', ');

function signedProperties(input: SignatureInput): XmlElement {
  return el('xd:SignedProperties', { Id: 'idSignedProperties' }, [
    el('xd:SignedSignatureProperties', {}, [
      text('xd:SigningTime', xmlTime(input.signingTime)),
      el('xd:SigningCertificate', {}, [
        el('xd:Cert', {}, [
          el('xd:CertDigest', {}, [digestMethod(), text('DigestValue', base64(sha256(input.certificate.raw)))]),
          el('xd:IssuerSerial', {}, [
            text('X509IssuerName', rfc4514Name(input.certificate.issuer)),
            text('X509SerialNumber', BigInt(`0x${input.certificate.serialNumber}`).toString(10)),
          ]),
        ]),
      ]),
      el('xd:SignaturePolicyIdentifier', {}, [el('xd:SignaturePolicyImplied')]),
    ]),
  ]);
}

function signatureAlgorithm(key: KeyObject): { uri: string; sign: (data: string) => Buffer } {
  if (key.asymmetricKeyType === 'ec') {
    // XML-DSig ECDSA values are r||s (RFC 4050), not DER.
    return { uri: ALGORITHMS.ecdsaSha256, sign: (data) => signBytes('sha256', Buffer.from(data), { key, dsaEncoding: 'ieee-p1363' }) };
  }
  return { uri: ALGORITHMS.rsaSha256, sign: (data) => signBytes('sha256', Buffer.from(data), key) };
}

/** Builds and signs the <Signature>; returns the signature part (UTF-8 XML). */
export function buildSignatureXml(input: SignatureInput): string {
  const dsig = { '': NS.dsig };
  const packageObj = packageObject(input);
  const officeObj = officeObject(input);
  const signedProps = signedProperties(input);
  const qualifying = el('xd:QualifyingProperties', { Target: `#${SIGNATURE_ID}` }, [signedProps], { xd: NS.xades132 });
  // Each referenced element is hashed in its canonical form as a subset of the final document.
  const reference = (uri: string, type: string, node: XmlElement, inherited: Record<string, string>, transforms: boolean) =>
    el('Reference', { URI: uri, Type: type }, [
      ...(transforms ? [el('Transforms', {}, [el('Transform', { Algorithm: ALGORITHMS.c14n })])] : []),
      digestMethod(),
      text('DigestValue', base64(sha256(canonicalize(node, inherited)))),
    ]);
  const algorithm = signatureAlgorithm(input.privateKey);
  const signedInfo = el('SignedInfo', {}, [
    el('CanonicalizationMethod', { Algorithm: ALGORITHMS.c14n }),
    el('SignatureMethod', { Algorithm: algorithm.uri }),
    reference('#idPackageObject', ALGORITHMS.objectType, packageObj, dsig, false),
    reference('#idOfficeObject', ALGORITHMS.objectType, officeObj, dsig, false),
    reference('#idSignedProperties', ALGORITHMS.signedPropertiesType, signedProps, { ...dsig, xd: NS.xades132 }, true),
  ]);
  const signatureValue = algorithm.sign(canonicalize(signedInfo, dsig));
  const keyInfo = el('KeyInfo', {}, [
    el('X509Data', {}, [input.certificate, ...input.chain].map((c) => text('X509Certificate', base64(c.raw)))),
  ]);
  const signature = el('Signature', { Id: SIGNATURE_ID }, [
    signedInfo,
    text('SignatureValue', base64(signatureValue)),
    keyInfo,
    packageObj,
    officeObj,
    el('Object', {}, [qualifying]),
  ], dsig);
  return `<?xml version="1.0" encoding="UTF-8"?>${canonicalize(signature)}`;
}
