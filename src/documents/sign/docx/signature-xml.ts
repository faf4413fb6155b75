import { createHash, sign as signBytes, type KeyObject, type X509Certificate } from 'node:crypto';
import { DOMImplementation, type Document, type Element } from '@xmldom/xmldom';
import { canonicalize } from '../../ooxml/c14n.js';
import { NS, RELATIONSHIP_TRANSFORM } from '../../ooxml/constants.js';
import { elementBuilder } from '../../ooxml/xml.js';

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
/** Canonical XML 1.0 without comments: how every element we sign is digested, and how the part is written. */
const C14N = { exclusive: false, withComments: false } as const;
const sha256 = (data: string | Uint8Array) => createHash('sha256').update(data).digest();
const base64 = (data: Uint8Array) => Buffer.from(data).toString('base64');
/** OOXML writes times as UTC to the second. */
const xmlTime = (date: Date) => date.toISOString().replace(/\.\d{3}Z$/, 'Z');

type Attributes = Record<string, string | undefined>;
type Children = Array<Element | string>;

/** Element makers for the namespaces of a package signature, over one document. */
function makers(doc: Document) {
  const make = elementBuilder(doc);
  const text = (ns: string, name: string, value: string, attributes: Attributes = {}) => make(ns, name, attributes, value ? [value] : []);
  return {
    ds: (name: string, attributes?: Attributes, children?: Children, declarations?: Record<string, string>) => make(NS.dsig, name, attributes, children, declarations),
    dsText: (name: string, value: string, attributes?: Attributes) => text(NS.dsig, name, value, attributes),
    mdssi: (name: string, attributes?: Attributes, children?: Children) => make(NS.mdssi, `mdssi:${name}`, attributes, children),
    mdssiText: (name: string, value: string) => text(NS.mdssi, `mdssi:${name}`, value),
    office: (name: string, value: string) => text(NS.officeDigsig, name, value),
    officeElement: (name: string, children: Children, declarations?: Record<string, string>) => make(NS.officeDigsig, name, {}, children, declarations),
    xd: (name: string, children: Children = [], attributes?: Attributes, declarations?: Record<string, string>) => make(NS.xades132, `xd:${name}`, attributes, children, declarations),
    xdText: (name: string, value: string) => text(NS.xades132, `xd:${name}`, value),
  };
}
type Makers = ReturnType<typeof makers>;

const digestMethod = (m: Makers) => m.ds('DigestMethod', { Algorithm: ALGORITHMS.sha256 });

function manifestReference(m: Makers, entry: ManifestEntry): Element {
  const children: Element[] = [];
  if (entry.relationshipIds) {
    children.push(m.ds('Transforms', {}, [
      m.ds('Transform', { Algorithm: RELATIONSHIP_TRANSFORM }, entry.relationshipIds.map((id) => m.mdssi('RelationshipReference', { SourceId: id }))),
      m.ds('Transform', { Algorithm: ALGORITHMS.c14n }),
    ]));
  }
  children.push(digestMethod(m), m.dsText('DigestValue', base64(entry.digest)));
  return m.ds('Reference', { URI: entry.uri }, children);
}

function packageObject(m: Makers, input: SignatureInput): Element {
  return m.ds('Object', { Id: 'idPackageObject' }, [
    m.ds('Manifest', {}, input.manifest.map((entry) => manifestReference(m, entry))),
    m.ds('SignatureProperties', {}, [
      m.ds('SignatureProperty', { Id: 'idSignatureTime', Target: `#${SIGNATURE_ID}` }, [
        m.mdssi('SignatureTime', {}, [m.mdssiText('Format', 'YYYY-MM-DDThh:mm:ssTZD'), m.mdssiText('Value', xmlTime(input.signingTime))]),
      ]),
    ]),
  ], { mdssi: NS.mdssi });
}

/**
 * SignatureInfoV1 in the element order of the Office digsig schema. Word expects the
 * machine-description elements to be present; we state neutral values, as LibreOffice does.
 */
function officeObject(m: Makers, input: SignatureInput): Element {
  const info = m.officeElement('SignatureInfoV1', [
    m.office('SetupID', ''), m.office('SignatureText', ''), m.office('SignatureImage', ''), m.office('SignatureComments', input.comments),
    m.office('WindowsVersion', '6.1'), m.office('OfficeVersion', '16.0'), m.office('ApplicationVersion', '16.0'), m.office('Monitors', '1'),
    m.office('HorizontalResolution', '1280'), m.office('VerticalResolution', '800'), m.office('ColorDepth', '32'),
    m.office('SignatureProviderId', '{00000000-0000-0000-0000-000000000000}'), m.office('SignatureProviderUrl', ''),
    m.office('SignatureProviderDetails', '9'), m.office('ManifestHashAlgorithm', ALGORITHMS.sha256), m.office('SignatureType', '1'),
  ], { '': NS.officeDigsig });
  return m.ds('Object', { Id: 'idOfficeObject' }, [
    m.ds('SignatureProperties', {}, [m.ds('SignatureProperty', { Id: 'idOfficeV1Details', Target: `#${SIGNATURE_ID}` }, [info])]),
  ]);
}

/** Node lists a DN's attributes in encoded order, one per line; RFC 4514 writes them in reverse, comma-separated. */
const rfc4514Name = (multiline: string) => multiline.split('\n').filter(Boolean).reverse().join(', ');

function signedProperties(m: Makers, input: SignatureInput): Element {
  return m.xd('SignedProperties', [
    m.xd('SignedSignatureProperties', [
      m.xdText('SigningTime', xmlTime(input.signingTime)),
      m.xd('SigningCertificate', [
        m.xd('Cert', [
          m.xd('CertDigest', [digestMethod(m), m.dsText('DigestValue', base64(sha256(input.certificate.raw)))]),
          m.xd('IssuerSerial', [
            m.dsText('X509IssuerName', rfc4514Name(input.certificate.issuer)),
            m.dsText('X509SerialNumber', BigInt(`0x${input.certificate.serialNumber}`).toString(10)),
          ]),
        ]),
      ]),
      m.xd('SignaturePolicyIdentifier', [m.xd('SignaturePolicyImplied')]),
    ]),
  ], { Id: 'idSignedProperties' });
}

function signatureAlgorithm(key: KeyObject): { uri: string; sign: (data: string) => Buffer } {
  if (key.asymmetricKeyType === 'ec') {
    // XML-DSig ECDSA values are r||s (RFC 4050), not DER.
    return { uri: ALGORITHMS.ecdsaSha256, sign: (data) => signBytes('sha256', Buffer.from(data), { key, dsaEncoding: 'ieee-p1363' }) };
  }
  return { uri: ALGORITHMS.rsaSha256, sign: (data) => signBytes('sha256', Buffer.from(data), key) };
}

/**
 * Builds and signs the <Signature>; returns the signature part (UTF-8 XML). The tree is built
 * whole first; each referenced element is then digested in place, in its canonical form as a
 * subset of the final document (the one C14N, ooxml/c14n.ts, that verification uses), and the
 * part is written in canonical form.
 */
export function buildSignatureXml(input: SignatureInput): string {
  const doc = new DOMImplementation().createDocument(null, '');
  const m = makers(doc);
  const packageObj = packageObject(m, input);
  const officeObj = officeObject(m, input);
  const signedProps = signedProperties(m, input);
  const signature = m.ds('Signature', { Id: SIGNATURE_ID }, [
    packageObj,
    officeObj,
    m.ds('Object', {}, [m.xd('QualifyingProperties', [signedProps], { Target: `#${SIGNATURE_ID}` }, { xd: NS.xades132 })]),
  ], { '': NS.dsig });
  doc.appendChild(signature);

  const reference = (uri: string, type: string, node: Element, transforms: boolean) =>
    m.ds('Reference', { URI: uri, Type: type }, [
      ...(transforms ? [m.ds('Transforms', {}, [m.ds('Transform', { Algorithm: ALGORITHMS.c14n })])] : []),
      digestMethod(m),
      m.dsText('DigestValue', base64(sha256(canonicalize(node, C14N)))),
    ]);
  const algorithm = signatureAlgorithm(input.privateKey);
  const signedInfo = m.ds('SignedInfo', {}, [
    m.ds('CanonicalizationMethod', { Algorithm: ALGORITHMS.c14n }),
    m.ds('SignatureMethod', { Algorithm: algorithm.uri }),
    reference('#idPackageObject', ALGORITHMS.objectType, packageObj, false),
    reference('#idOfficeObject', ALGORITHMS.objectType, officeObj, false),
    reference('#idSignedProperties', ALGORITHMS.signedPropertiesType, signedProps, true),
  ]);
  signature.insertBefore(signedInfo, packageObj);
  const signatureValue = algorithm.sign(canonicalize(signedInfo, C14N));
  signature.insertBefore(m.dsText('SignatureValue', base64(signatureValue)), packageObj);
  signature.insertBefore(m.ds('KeyInfo', {}, [
    m.ds('X509Data', {}, [input.certificate, ...input.chain].map((c) => m.dsText('X509Certificate', base64(c.raw)))),
  ]), packageObj);
  return `<?xml version="1.0" encoding="UTF-8"?>${canonicalize(signature, C14N)}`;
}
