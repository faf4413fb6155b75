import { warning, type Warning } from '../../warnings.js';
import { createHash } from 'node:crypto';
import { CONTENT_TYPE, CONTENT_TYPES_PART, NS, PACKAGE_SOURCE, REL, UNSIGNED_BY_SIGNERS } from '../../ooxml/constants.js';
import { OpcPackage, freeRelationshipId } from '../../ooxml/package.js';
import { partUri, relationshipsPartOf, relativeTarget, sourceOfRelationshipsPart } from '../../ooxml/part-names.js';
import { assertSignableRequest, buildAuditRecord } from '../audit.js';
import type { SigningIdentity } from '../identity.js';
import type { SignOptions, SignRequest, SignResult } from '../types.js';
import { transformedRelationships } from '../../ooxml/relationship-transform.js';
import { buildSignatureXml, type ManifestEntry } from './signature-xml.js';

/**
 * OOXML package signature (ECMA-376 Part 2 digital signatures, XAdES as Office 2010+ writes
 * them) over a DOCX that otherwise stays as it is. The audit record goes in as a package part
 * covered by the signature. Earlier signatures are kept: they sign their .rels parts through
 * the Relationship Transform, so the relationships added here do not break them.
 */
export const DOCX_AUDIT_CONTENT_TYPE = 'application/json';
export const DOCX_AUDIT_RELATIONSHIP = REL.docprocAuditTrail;

const CORE_PROPERTIES_PART = '/docProps/core.xml';

interface SignatureLayout {
  /** Part name of the signature origin, e.g. /_xmlsignatures/origin.sigs. */
  origin: string;
  /** The package already has a relationship to its origin. */
  linked: boolean;
  /** Existing signature parts. */
  existing: string[];
}

/** The folder signature parts go in, e.g. "/_xmlsignatures/" ("/" for an origin at the package root). */
const folderOf = (partName: string) => partName.slice(0, partName.lastIndexOf('/') + 1);

function signatureLayout(pkg: OpcPackage): SignatureLayout {
  const originRel = pkg.relationships(PACKAGE_SOURCE).find((r) => r.type === REL.signatureOrigin && !r.external);
  if (!originRel?.partName) return { origin: '/_xmlsignatures/origin.sigs', linked: false, existing: [] };
  const origin = originRel.partName;
  const existing = pkg.relationships(origin)
    .flatMap((r) => (r.type === REL.signature && r.partName && pkg.has(r.partName) ? [r.partName] : []));
  return { origin, linked: true, existing };
}

function freeName(pkg: OpcPackage, make: (n: number) => string, first = 1): string {
  for (let n = first; ; n++) if (!pkg.has(make(n))) return make(n);
}

/** The parts left unsigned: package metadata Word rewrites freely, content types, and the signature parts. */
function unsignedParts(pkg: OpcPackage, layout: SignatureLayout): Set<string> {
  const skip = new Set([CONTENT_TYPES_PART, CORE_PROPERTIES_PART, '/docProps/app.xml', layout.origin, relationshipsPartOf(layout.origin), ...layout.existing]);
  for (const r of pkg.relationships(PACKAGE_SOURCE)) {
    if (UNSIGNED_BY_SIGNERS.has(r.type) && r.partName) skip.add(r.partName);
  }
  return skip;
}

function buildManifest(pkg: OpcPackage, layout: SignatureLayout): ManifestEntry[] {
  const skip = unsignedParts(pkg, layout);
  const folder = folderOf(layout.origin);
  const signatureFolder = folder === '/' ? undefined : folder;
  const entries: ManifestEntry[] = [];
  for (const name of pkg.partNames()) {
    if (skip.has(name) || (signatureFolder && name.startsWith(signatureFolder))) continue;
    const source = sourceOfRelationshipsPart(name);
    if (source !== undefined) {
      if (source !== PACKAGE_SOURCE && skip.has(source)) continue;
      const relationships = pkg.relationships(source);
      const ids = relationships.filter((r) => !UNSIGNED_BY_SIGNERS.has(r.type)).map((r) => r.id);
      if (ids.length === 0) continue;
      const canonical = transformedRelationships(pkg.xml(name), { sourceIds: ids, sourceTypes: [] });
      entries.push({
        uri: `${partUri(name)}?ContentType=${pkg.contentType(name) ?? CONTENT_TYPE.relationships}`,
        digest: createHash('sha256').update(canonical).digest(),
        relationshipIds: ids,
      });
      continue;
    }
    const contentType = pkg.contentType(name);
    // A part without a content type is not an OPC part (e.g. stray ZIP entries); verifiers ignore it too.
    if (!contentType) continue;
    entries.push({ uri: `${partUri(name)}?ContentType=${contentType}`, digest: createHash('sha256').update(pkg.bytes(name)!).digest() });
  }
  return entries;
}

function documentTitle(pkg: OpcPackage): string | undefined {
  if (!pkg.has(CORE_PROPERTIES_PART)) return undefined;
  const titles = pkg.xml(CORE_PROPERTIES_PART).getElementsByTagNameNS(NS.dublinCore, 'title');
  return titles.length > 0 ? titles.item(0)?.textContent?.trim() || undefined : undefined;
}

export async function signDocx(input: Buffer, request: SignRequest, identity: SigningIdentity, options: SignOptions = {}): Promise<SignResult> {
  assertSignableRequest(request);
  const pkg = OpcPackage.open(input);
  const now = new Date(Math.floor((options.now ?? new Date()).getTime() / 1000) * 1000);
  const warnings: Warning[] = [];
  const title = documentTitle(pkg) ?? request.documentName ?? 'Untitled document';
  const audit = buildAuditRecord(request, input, identity, now, title, options);
  const layout = signatureLayout(pkg);

  if (request.certificate?.enabled !== false) {
    warnings.push(warning('AUDIT_RECORD_PLACEMENT', 'DOCX signatures carry the audit trail as the signed package part docproc/audit-trail*.json; no audit page is added to a DOCX (sign with to=pdf for one).'));
  }
  if (layout.existing.length > 0) {
    warnings.push(warning('EARLIER_SIGNATURES_KEPT', `The DOCX already carries ${layout.existing.length} signature(s); they were kept and a new one was added. Earlier signatures do not cover this signer's audit part.`));
  }
  if (options.tsa) {
    warnings.push(warning('NOT_TIMESTAMPED', 'DOCX signatures are not time-stamped (XAdES-T is only applied to PDF signatures); the signing time is the service clock.'));
  }

  const auditPart = freeName(pkg, (n) => (n === 1 ? '/docproc/audit-trail.json' : `/docproc/audit-trail-${n}.json`));
  pkg.setText(auditPart, JSON.stringify(audit, null, 2));
  const packageRels = pkg.relationships(PACKAGE_SOURCE);
  pkg.addRelationship(PACKAGE_SOURCE, {
    id: freeRelationshipId(packageRels, 'rIdDocprocAudit'),
    type: DOCX_AUDIT_RELATIONSHIP,
    target: relativeTarget(PACKAGE_SOURCE, auditPart),
  });
  if (!layout.linked) {
    pkg.addRelationship(PACKAGE_SOURCE, {
      id: freeRelationshipId(packageRels, 'rIdDocprocSignatures'),
      type: REL.signatureOrigin,
      target: relativeTarget(PACKAGE_SOURCE, layout.origin),
    });
  }
  if (!pkg.has(layout.origin)) pkg.setBytes(layout.origin, new Uint8Array(0));
  const signaturePart = freeName(pkg, (n) => `${folderOf(layout.origin)}sig${n}.xml`);
  pkg.declareContentTypes(
    { sigs: CONTENT_TYPE.signatureOrigin },
    { [auditPart]: DOCX_AUDIT_CONTENT_TYPE, [signaturePart]: CONTENT_TYPE.xmlSignature },
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
  pkg.addRelationship(layout.origin, {
    id: freeRelationshipId(pkg.relationships(layout.origin), 'rId'),
    type: REL.signature,
    target: relativeTarget(layout.origin, signaturePart),
  });
  return { document: pkg.write(), warnings, audit };
}
