import { PACKAGE_SOURCE, REL, UNSIGNED_ALLOWED } from '../../ooxml/constants.js';
import type { OpcPackage } from '../../ooxml/package.js';
import { relationshipsPartOf } from '../../ooxml/part-names.js';
import type { DocxSignatureReport } from './types.js';

/**
 * Does a signature sign what an office application shows? Word and LibreOffice reach every part
 * of the document through relationships, from the package's own relationships part down; so,
 * starting there, every relationships part reached must be signed, every relationship in it
 * covered (selected by Id or by type in the RelationshipTransform, or the whole part digested), and
 * every part a covered relationship points to signed as well — except the relationships a signature
 * may leave out (ooxml/constants.ts UNSIGNED_ALLOWED: document properties, the signature origin,
 * docproc's audit record), whose targets are not followed.
 *
 * Returns what the signature leaves open (empty when it covers the document). Honest signatures by
 * Word, LibreOffice and docproc leave nothing open; an uncovered relationship in a signed
 * relationships part is how unsigned content (an extra officeDocument or footnotes part) gets shown.
 */
export function unsignedScope(pkg: OpcPackage, signature: DocxSignatureReport): string[] {
  const signed = new Map(signature.parts.filter((p) => p.intact).map((p) => [p.part, p]));
  const problems: string[] = [];
  const visited = new Set<string>();
  const queue = [PACKAGE_SOURCE];
  while (queue.length) {
    const source = queue.shift()!;
    if (visited.has(source)) continue;
    visited.add(source);
    const relsPart = relationshipsPartOf(source);
    if (!pkg.has(relsPart)) continue;
    const signedRels = signed.get(relsPart);
    if (!signedRels) {
      problems.push(`the relationships part ${relsPart} is not signed, so what ${source === PACKAGE_SOURCE ? 'the package' : source} links to can be replaced`);
      continue;
    }
    // Selected through the RelationshipTransform, or (no transform) the whole part as bytes.
    const covered = signedRels.relationships === null ? undefined : new Set(signedRels.relationships);
    for (const rel of pkg.relationships(source)) {
      if (UNSIGNED_ALLOWED.has(rel.type)) continue;
      if (covered && !covered.has(rel.id)) {
        problems.push(`the relationship ${rel.id} (${shortType(rel.type)}) in ${relsPart} is not signed: it can add content an office application shows`);
        continue;
      }
      if (rel.external || !rel.partName || !pkg.has(rel.partName)) continue;
      if (!signed.has(rel.partName)) {
        problems.push(`${rel.partName}, which the signed relationship ${rel.id} in ${relsPart} points to, is not signed`);
        continue;
      }
      queue.push(rel.partName);
    }
  }
  return problems;
}

const shortType = (type: string) => type.slice(type.lastIndexOf('/') + 1) || type;

/** A package with two signature origins lists two sets of signatures; readers would take either. */
export function signatureOriginCount(pkg: OpcPackage): number {
  return pkg.relationships(PACKAGE_SOURCE).filter((r) => r.type === REL.signatureOrigin).length;
}
