import { createHash, sign as cryptoSign } from 'node:crypto';
import PizZip from 'pizzip';
import type { TestIdentity } from './pki.js';

/**
 * Builds OOXML package signatures for tests WITHOUT the verifier's canonicaliser: every signed
 * XML fragment is written directly in its canonical form (C14N 1.0), so a verifier bug in C14N
 * cannot cancel itself out. Kept simple: RSA/ECDSA with SHA-256, parts digested as raw bytes,
 * relationship parts through the RelationshipTransform.
 */
const DSIG = 'http://www.w3.org/2000/09/xmldsig#';
const MDSSI = 'http://schemas.openxmlformats.org/package/2006/digital-signature';
const C14N = 'http://www.w3.org/TR/2001/REC-xml-c14n-20010315';
const SHA256 = 'http://www.w3.org/2001/04/xmlenc#sha256';
const RELS_NS = 'http://schemas.openxmlformats.org/package/2006/relationships';

export interface TestSignOptions {
  signer: TestIdentity;
  /** Extra certificates for KeyInfo (intermediates). */
  chain?: TestIdentity[];
  /** Parts to sign (ZIP names); default: every part except docProps/* and [Content_Types].xml. */
  parts?: string[];
  signingTime?: string;
  comments?: string;
  /** Select relationships by type (RelationshipsGroupReference) instead of by Id. */
  relationshipTypes?: boolean;
}

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;');
const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64');
const digest = (data: string | Uint8Array) => createHash('sha256').update(data).digest('base64');

function contentTypeOf(zip: PizZip, name: string): string {
  const types = zip.file('[Content_Types].xml')!.asText();
  const override = new RegExp(`<Override[^>]*PartName="/${name.replace(/[.[\]]/g, '\\$&')}"[^>]*ContentType="([^"]+)"`).exec(types) ??
    new RegExp(`<Override[^>]*ContentType="([^"]+)"[^>]*PartName="/${name.replace(/[.[\]]/g, '\\$&')}"`).exec(types);
  if (override) return override[1]!;
  const ext = name.split('.').pop()!;
  const def = new RegExp(`<Default[^>]*Extension="${ext}"[^>]*ContentType="([^"]+)"`).exec(types);
  return def ? def[1]! : 'application/octet-stream';
}

/** The RelationshipTransform + C14N output for every relationship of a .rels part, written by hand. */
function transformedRels(xml: string): { canonical: string; ids: string[]; types: string[] } {
  const rels = [...xml.matchAll(/<Relationship\b([^>]*?)\/?>/g)].map((m) => {
    const attrs = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((a) => [a[1]!, a[2]!]));
    return { Id: attrs.Id!, Target: attrs.Target!, TargetMode: attrs.TargetMode ?? 'Internal', Type: attrs.Type! };
  });
  rels.sort((a, b) => (a.Id < b.Id ? -1 : a.Id > b.Id ? 1 : 0));
  const body = rels.map((r) => `<Relationship Id="${r.Id}" Target="${r.Target}" TargetMode="${r.TargetMode}" Type="${r.Type}"></Relationship>`).join('');
  return { canonical: `<Relationships xmlns="${RELS_NS}">${body}</Relationships>`, ids: rels.map((r) => r.Id), types: [...new Set(rels.map((r) => r.Type))] };
}

function manifestReference(zip: PizZip, name: string, byType: boolean): string {
  const uri = `/${name}?ContentType=${contentTypeOf(zip, name)}`;
  if (name.endsWith('.rels')) {
    const { canonical, ids, types } = transformedRels(zip.file(name)!.asText());
    const refs = byType
      ? types.map((type) => `<mdssi:RelationshipsGroupReference xmlns:mdssi="${MDSSI}" SourceType="${esc(type)}"></mdssi:RelationshipsGroupReference>`).join('')
      : ids.map((id) => `<mdssi:RelationshipReference xmlns:mdssi="${MDSSI}" SourceId="${id}"></mdssi:RelationshipReference>`).join('');
    return (
      `<Reference URI="${esc(uri)}"><Transforms><Transform Algorithm="http://schemas.openxmlformats.org/package/2006/RelationshipTransform">${refs}</Transform>` +
      `<Transform Algorithm="${C14N}"></Transform></Transforms><DigestMethod Algorithm="${SHA256}"></DigestMethod><DigestValue>${digest(canonical)}</DigestValue></Reference>`
    );
  }
  return `<Reference URI="${esc(uri)}"><DigestMethod Algorithm="${SHA256}"></DigestMethod><DigestValue>${digest(zip.file(name)!.asUint8Array())}</DigestValue></Reference>`;
}

/** Returns a copy of `docx` with one more signature part (origin created when missing). */
export function signDocxForTest(docx: Uint8Array, options: TestSignOptions): Buffer {
  const zip = new PizZip(docx);
  const parts =
    options.parts ??
    Object.values(zip.files)
      .filter((f) => !f.dir && !f.name.startsWith('docProps/') && f.name !== '[Content_Types].xml' && !f.name.startsWith('_xmlsignatures/'))
      .map((f) => f.name);
  // The package object: mdssi is declared where it is used, so this text is already canonical
  // except for the default namespace the Object inherits from Signature.
  const time = options.signingTime ?? new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const packageInner =
    `<Manifest>${parts.map((p) => manifestReference(zip, p, options.relationshipTypes ?? false)).join('')}</Manifest>` +
    `<SignatureProperties><SignatureProperty Id="idSignatureTime" Target="#idPackageSignature"><mdssi:SignatureTime xmlns:mdssi="${MDSSI}">` +
    `<mdssi:Format>YYYY-MM-DDThh:mm:ssTZD</mdssi:Format><mdssi:Value>${time}</mdssi:Value></mdssi:SignatureTime></SignatureProperty></SignatureProperties>`;
  const officeInner =
    `<SignatureProperties><SignatureProperty Id="idOfficeV1Details" Target="#idPackageSignature"><SignatureInfoV1 xmlns="http://schemas.microsoft.com/office/2006/digsig">` +
    `<SignatureComments>${esc(options.comments ?? 'Approved')}</SignatureComments></SignatureInfoV1></SignatureProperty></SignatureProperties>`;
  const packageObject = (ns: string) => `<Object${ns} Id="idPackageObject">${packageInner}</Object>`;
  const officeObject = (ns: string) => `<Object${ns} Id="idOfficeObject">${officeInner}</Object>`;
  const inherited = ` xmlns="${DSIG}"`;

  const ec = options.signer.key.asymmetricKeyType === 'ec';
  const method = ec ? 'http://www.w3.org/2001/04/xmldsig-more#ecdsa-sha256' : 'http://www.w3.org/2001/04/xmldsig-more#rsa-sha256';
  const signedInfoInner =
    `<CanonicalizationMethod Algorithm="${C14N}"></CanonicalizationMethod><SignatureMethod Algorithm="${method}"></SignatureMethod>` +
    `<Reference Type="http://www.w3.org/2000/09/xmldsig#Object" URI="#idPackageObject"><DigestMethod Algorithm="${SHA256}"></DigestMethod><DigestValue>${digest(packageObject(inherited))}</DigestValue></Reference>` +
    `<Reference Type="http://www.w3.org/2000/09/xmldsig#Object" URI="#idOfficeObject"><DigestMethod Algorithm="${SHA256}"></DigestMethod><DigestValue>${digest(officeObject(inherited))}</DigestValue></Reference>`;
  const canonicalSignedInfo = `<SignedInfo${inherited}>${signedInfoInner}</SignedInfo>`;
  const value = cryptoSign('sha256', Buffer.from(canonicalSignedInfo), ec ? { key: options.signer.key, dsaEncoding: 'ieee-p1363' } : options.signer.key);
  const certs = [options.signer, ...(options.chain ?? [])].map((c) => `<X509Certificate>${b64(c.der)}</X509Certificate>`).join('');
  const signatureXml =
    `<?xml version="1.0" encoding="UTF-8"?>\n<Signature xmlns="${DSIG}" Id="idPackageSignature"><SignedInfo>${signedInfoInner}</SignedInfo>` +
    `<SignatureValue>${b64(value)}</SignatureValue><KeyInfo><X509Data>${certs}</X509Data></KeyInfo>${packageObject('')}${officeObject('')}</Signature>`;

  const existing = Object.keys(zip.files).filter((n) => /^_xmlsignatures\/sig\d+\.xml$/.test(n)).length;
  const sigName = `_xmlsignatures/sig${existing + 1}.xml`;
  zip.file(sigName, signatureXml);
  if (!zip.file('_xmlsignatures/origin.sigs')) {
    zip.file('_xmlsignatures/origin.sigs', '');
    const rels = zip.file('_rels/.rels')!.asText();
    zip.file('_rels/.rels', rels.replace('</Relationships>', `<Relationship Id="rIdSigOrigin" Type="http://schemas.openxmlformats.org/package/2006/relationships/digital-signature/origin" Target="_xmlsignatures/origin.sigs"/></Relationships>`));
    const types = zip.file('[Content_Types].xml')!.asText();
    zip.file('[Content_Types].xml', types.replace('</Types>', '<Default Extension="sigs" ContentType="application/vnd.openxmlformats-package.digital-signature-origin"/></Types>'));
  }
  const originRels = zip.file('_xmlsignatures/_rels/origin.sigs.rels')?.asText() ?? `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="${RELS_NS}"></Relationships>`;
  zip.file('_xmlsignatures/_rels/origin.sigs.rels', originRels.replace('</Relationships>', `<Relationship Id="rIdSig${existing + 1}" Type="http://schemas.openxmlformats.org/package/2006/relationships/digital-signature/signature" Target="sig${existing + 1}.xml"/></Relationships>`));
  const types = zip.file('[Content_Types].xml')!.asText();
  zip.file('[Content_Types].xml', types.replace('</Types>', `<Override PartName="/${sigName}" ContentType="application/vnd.openxmlformats-package.digital-signature-xmlsignature+xml"/></Types>`));
  return zip.generate({ type: 'nodebuffer', compression: 'DEFLATE' });
}

/** Rewrites one ZIP entry (text or bytes) and returns the new package. */
export function replacePart(docx: Uint8Array, name: string, edit: (text: string) => string): Buffer {
  const zip = new PizZip(docx);
  zip.file(name, edit(zip.file(name)!.asText()));
  return zip.generate({ type: 'nodebuffer', compression: 'DEFLATE' });
}

export function removePart(docx: Uint8Array, name: string): Buffer {
  const zip = new PizZip(docx);
  zip.remove(name);
  return zip.generate({ type: 'nodebuffer', compression: 'DEFLATE' });
}

