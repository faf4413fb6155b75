import { canonicalize, el } from './xml-node.js';
import { NS } from '../../ooxml/constants.js';
import type { Relationship } from '../../ooxml/package.js';

/**
 * The OPC Relationship Transform (ECMA-376 Part 2, §13.2.4.24) followed by C14N: keep the
 * relationships whose Id was selected, sort them by Id (ordinal), make TargetMode explicit
 * ("Internal" by default) and drop everything else. Signing only the selected Ids lets a
 * later signer add relationships (its own audit part, origin.sigs) without breaking us.
 */
export function transformedRelationships(relationships: Relationship[], selectedIds: ReadonlySet<string>): string {
  const selected = relationships
    .filter((r) => selectedIds.has(r.id))
    .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const root = el('Relationships', {}, selected.map((r) =>
    el('Relationship', { Id: r.id, Type: r.type, Target: r.target, TargetMode: r.targetMode ?? 'Internal' })), { '': NS.relationships });
  return canonicalize(root);
}
