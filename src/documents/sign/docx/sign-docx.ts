import { createHash } from 'node:crypto';
import { assertDocx } from '../../../inputs/zip.js';
import { assertSignableRequest, buildAuditRecord } from '../audit.js';
import type { SigningIdentity } from '../identity.js';
import type { SignOptions, SignRequest, SignResult } from '../types.js';
import { OpcPackage, partUri, relsPartOf, resolveTarget, sourceOfRels, RELS_CONTENT_TYPE, type Relationship } from './package.js';
import { transformedRelationships } from './relationship-transform.js';
import { buildSignatureXml, type ManifestEntry } from './signature-xml.js';

/**
 * OOXML package signature (ECMA-376 Part 2 digital signatures, XAdES as Office 2010+ writes
 * them) over a DOCX that otherwise stays as it is. The audit record goes in as a package part
 * covered by the signature. Earlier signatures are kept: they sign their .rels parts through
 * the Relationship Transform, so the relationships added here do not break them.
 */
export const DOCX_AUDIT_CONTENT_TYPE = 'application/json';
export const DOCX_AUDIT_RELATIONSHIP = 'urn:docproc:relationships:audit-trail';

const REL = {
  origin: 'http://schemas.openxmlformats.org/package/2006/relationships/digital-signature/origin',
  signature: 'http://schemas.openxmlformats.org/package/2006/relationships/digital-signature/signature',
  coreProperties: 'http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties',
  extendedProperties: 'http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties',
} as const;
const CONTENT_TYPE = {
  origin: 'application/vnd.openxmlformats-package.digital-signature-origin',
  signature: 'application/vnd.openxmlformats-package.digital-signature-xmlsignature+xml',
} as const;
/** Relationship types Word and LibreOffice leave out of a signature (metadata they may rewrite, and the signatures themselves). */
const UNSIGNED_RELATIONSHIP_TYPES: ReadonlySet<string> = new Set([REL.origin, REL.coreProperties, REL.extendedProperties]);

interface SignatureLayout {
  /** ZIP name of the origin part, e.g. _xmlsignatures/origin.sigs. */
  origin: string;
  /** Existing signature parts. */
  existing: string[];
}

function signatureLayout(pkg: OpcPackage): SignatureLayout {
  const originRel = pkg.relationships('_rels/.rels').find((r) => r.type === REL.origin);
  if (!originRel) return { origin: '_xmlsignatures/origin.sigs', existing: [] };
  const origin = resolveTarget('', originRel.target);
  const existing = pkg.relationships(relsPartOf(origin))
    .filter((r) => r.type === REL.signature)
    .map((r) => resolveTarget(origin, r.target))
    .filter((name) => pkg.has(name));
  return { origin, existing };
}

function freeName(pkg: OpcPackage, make: (n: number) => string, first = 1): string {
  for (let n = first; ; n++) if (!pkg.has(make(n))) return make(n);
}

function freeRelationshipId(relationships: Relationship[], prefix: string): string {
  const ids = new Set(relationships.map((r) => r.id));
  for (let n = 1; ; n++) if (!ids.has(`${prefix}${n}`)) return `${prefix}${n}`;
}

/** Parts left unsigned: package metadata Word rewrites freely, content types, and the signature parts. */
function unsignedParts(pkg: OpcPackage, layout: SignatureLayout): Set<string> {
  const skip = new Set(['[Content_Types].xml', 'docProps/core.xml', 'docProps/app.xml', layout.origin, relsPartOf(layout.origin), ...layout.existing]);
  for (const r of pkg.relationships('_rels/.rels')) {
    if (UNSIGNED_RELATIONSHIP_TYPES.has(r.type) && r.targetMode !== 'External') skip.add(resolveTarget('', r.target));
  }
  return skip;
}

function buildManifest(pkg: OpcPackage, layout: SignatureLayout): ManifestEntry[] {
  const skip = unsignedParts(pkg, layout);
  const signatureDir = layout.origin.includes('/') ? layout.origin.slice(0, layout.origin.lastIndexOf('/') + 1) : undefined;
  const entries: ManifestEntry[] = [];
  for (const [name, bytes] of pkg.parts) {
    if (skip.has(name) || (signatureDir && name.startsWith(signatureDir))) continue;
    const source = sourceOfRels(name);
    if (source !== undefined) {
      if (source !== '' && skip.has(source)) continue;
      const relationships = pkg.relationships(name);
      const ids = relationships.filter((r) => !UNSIGNED_RELATIONSHIP_TYPES.has(r.type)).map((r) => r.id);
      if (ids.length === 0) continue;
      const canonical = transformedRelationships(relationships, new Set(ids));
      entries.push({
        uri: `${partUri(name)}?ContentType=${pkg.contentType(name) ?? RELS_CONTENT_TYPE}`,
        digest: createHash('sha256').update(canonical).digest(),
        relationshipIds: ids,
      });
      continue;
    }
    const contentType = pkg.contentType(name);
    // A part without a content type is not an OPC part (e.g. stray ZIP entries); verifiers ignore it too.
    if (!contentType) continue;
    entries.push({ uri: `${partUri(name)}?ContentType=${contentType}`, digest: createHash('sha256').update(bytes).digest() });
  }
  return entries;
}

function documentTitle(pkg: OpcPackage): string | undefined {
  if (!pkg.has('docProps/core.xml')) return undefined;
  const titles = pkg.xml('docProps/core.xml').getElementsByTagNameNS('http://purl.org/dc/elements/1.1/', 'title');
  return titles.length > 0 ? titles.item(0)?.textContent?.trim() || undefined : undefined;
}

export async function signDocx(input: Buffer, request: SignRequest, identity: SigningIdentity, options: SignOptions = {}): Promise<SignResult> {
  assertSignableRequest(request);
  assertDocx(input);
  const pkg = OpcPackage.read(input);
  const now = new Date(Math.floor((options.now ?? new Date()).getTime() / 1000) * 1000);
  const warnings: string[] = [];
  const title = documentTitle(pkg) ?? request.documentName ?? 'Untitled document';
  const audit = buildAuditRecord(request, input, identity, now, title, options);
  const layout = signatureLayout(pkg);

  if (request.certificate?.enabled !== false) {
    warnings.push('DOCX signatures carry the audit trail as the signed package part docproc/audit-trail*.json; no audit page is added to a DOCX (sign with to=pdf for one).');
  }
  if (layout.existing.length > 0) {
    warnings.push(`The DOCX already carries ${layout.existing.length} signature(s); they were kept and a new one was added. Earlier signatures do not cover this signer's audit part.`);
  }
  if (options.tsa) {
    warnings.push('DOCX signatures are not time-stamped (XAdES-T is only applied to PDF signatures); the signing time is the service clock.');
  }

  const auditPart = freeName(pkg, (n) => (n === 1 ? 'docproc/audit-trail.json' : `docproc/audit-trail-${n}.json`));
  pkg.parts.set(auditPart, new Uint8Array(Buffer.from(JSON.stringify(audit, null, 2), 'utf8')));
  const packageRels = pkg.relationships('_rels/.rels');
  pkg.addRelationship('_rels/.rels', { id: freeRelationshipId(packageRels, 'rIdDocprocAudit'), type: DOCX_AUDIT_RELATIONSHIP, target: auditPart });
  if (!packageRels.some((r) => r.type === REL.origin)) {
    pkg.addRelationship('_rels/.rels', { id: freeRelationshipId(packageRels, 'rIdDocprocSignatures'), type: REL.origin, target: layout.origin });
  }
  if (!pkg.has(layout.origin)) pkg.parts.set(layout.origin, new Uint8Array(0));
  const signatureDir = layout.origin.includes('/') ? layout.origin.slice(0, layout.origin.lastIndexOf('/') + 1) : '';
  const signaturePart = freeName(pkg, (n) => `${signatureDir}sig${n}.xml`);
  pkg.declareContentTypes(
    { sigs: CONTENT_TYPE.origin },
    { [auditPart]: DOCX_AUDIT_CONTENT_TYPE, [signaturePart]: CONTENT_TYPE.signature },
  );

  const manifest = buildManifest(pkg, layout);
  const signatureXml = buildSignatureXml({
    manifest,
    signingTime: now,
    privateKey: identity.privateKey,
    certificate: identity.certificate,
    chain: identity.chain,
    comments: request.reason ?? `Signed by ${request.signer.name} <${request.signer.email}>`,
  });
  pkg.setText(signaturePart, signatureXml);
  const originRels = relsPartOf(layout.origin);
  pkg.addRelationship(originRels, {
    id: freeRelationshipId(pkg.relationships(originRels), 'rId'),
    type: REL.signature,
    target: signaturePart.slice(signatureDir.length),
  });
  return { document: pkg.write(), warnings, audit };
}
