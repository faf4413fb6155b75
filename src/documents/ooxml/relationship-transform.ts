import type { Document, Element } from '@xmldom/xmldom';
import { NS } from './constants.js';
import { canonicalize } from './c14n.js';
import { childElements } from './xml.js';

/** ECMA-376 Part 2 §13.2.4.24, the one implementation: signing computes with it what verification checks with it. */

export interface RelationshipSelection {
  sourceIds: string[];
  sourceTypes: string[];
}

/** The RelationshipReference / RelationshipsGroupReference parameters of a RelationshipTransform element. */
export function relationshipSelection(transform: Element): RelationshipSelection {
  return {
    sourceIds: childElements(transform, NS.mdssi, 'RelationshipReference').map((r) => r.getAttribute('SourceId') ?? ''),
    sourceTypes: childElements(transform, NS.mdssi, 'RelationshipsGroupReference').map((r) => r.getAttribute('SourceType') ?? ''),
  };
}

/**
 * ECMA-376 Part 2 §13.2.4.24: keep only the selected Relationship elements, drop everything else
 * inside Relationships, sort them by Id (ordinal), empty them and make TargetMode explicit. The
 * result is canonicalised by the next transform. Works on a copy; `doc` is left untouched.
 */
export function applyRelationshipTransform(doc: Document, selection: RelationshipSelection): { doc: Document; selectedIds: string[] } {
  const copy = doc.cloneNode(true) as Document;
  const root = copy.documentElement;
  if (!root || root.namespaceURI !== NS.relationships || root.localName !== 'Relationships') {
    throw new Error('the RelationshipTransform input is not a Relationships part');
  }
  const ids = new Set(selection.sourceIds);
  const types = new Set(selection.sourceTypes);
  const kept = childElements(root, NS.relationships, 'Relationship').filter(
    (rel) => ids.has(rel.getAttribute('Id') ?? '') || types.has(rel.getAttribute('Type') ?? ''),
  );
  kept.sort((a, b) => {
    const x = a.getAttribute('Id') ?? '';
    const y = b.getAttribute('Id') ?? '';
    return x < y ? -1 : x > y ? 1 : 0;
  });
  while (root.firstChild) root.removeChild(root.firstChild);
  for (const rel of kept) {
    while (rel.firstChild) rel.removeChild(rel.firstChild);
    if (!rel.hasAttribute('TargetMode')) rel.setAttribute('TargetMode', 'Internal');
    root.appendChild(rel);
  }
  return { doc: copy, selectedIds: kept.map((rel) => rel.getAttribute('Id') ?? '') };
}

/** What a signature digests for a relationships part: the transform's output in Canonical XML 1.0 (as the Transform chain OOXML signatures use). */
export function transformedRelationships(doc: Document, selection: RelationshipSelection): string {
  return canonicalize(applyRelationshipTransform(doc, selection).doc, { exclusive: false, withComments: false });
}
