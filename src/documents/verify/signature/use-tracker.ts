import type { PdfView } from '../../pdf/document.js';
import { PdfDict, PdfRef, PdfStream, type PdfValue } from '../../pdf/objects.js';
import { walkPageTree } from '../../pdf/structure.js';
import { childRole, refineRoles, roleKey, trailerRole, type Role } from './object-roles.js';

/** Roles that reach the catalog and page-tree objects as what they are; any other reference to them is a link. */
const TREE_ROLES = new Set(['catalog', 'pageTree', 'page']);
const LINK: Role = { kind: 'link' };

/** One place a revision references an object from: the referrer and the key path inside its value. */
export interface Use {
  /** Object number of the referrer, or 'trailer'. */
  from: number | 'trailer';
  /** Keys and array indices from the referrer's value down to the reference. */
  path: ReadonlyArray<string | number>;
  /** The role the object takes through this reference. */
  role: Role;
}

/** Bounds of one walk: objects × roles visited, references recorded. */
export const MAX_TRACKED_VISITS = 1_000_000;
export const MAX_TRACKED_USES = 4_000_000;
const MAX_VALUE_DEPTH = 64;

/**
 * Every reference of one revision reachable from its trailer, with the role each gives its target:
 * the reference tracker of the modification analysis. Walks every key (/Parent and /P included: a
 * back-reference still lets a reader reach the object), visiting each object once per role. References
 * to objects that do not exist are recorded too: defining such an object later changes what the
 * referrer shows.
 */
export class UseIndex {
  private readonly uses = new Map<number, Use[]>();
  private readonly roles = new Map<number, Map<string, Role>>();
  /** Set when the walk hit its bounds: the index is incomplete and must not be trusted. */
  truncated = false;
  private visits = 0;
  private useCount = 0;

  private constructor(private readonly view: PdfView) {}

  static of(view: PdfView): UseIndex {
    const index = new UseIndex(view);
    index.walk();
    return index;
  }

  /** The places that reference `num` in this revision (empty for an object nothing reaches). */
  usesOf(num: number): readonly Use[] {
    return this.uses.get(num) ?? [];
  }

  /** The distinct roles of `num` in this revision. */
  rolesOf(num: number): Role[] {
    return [...(this.roles.get(num)?.values() ?? [])];
  }

  isUsed(num: number): boolean {
    return this.uses.has(num);
  }

  private walk(): void {
    const queue: Array<{ num: number; role: Role }> = [];
    // The catalog and the page tree are what they are only through the trailer's /Root and the
    // tree itself; a destination, a structure element or an annotation's /P merely names them.
    const { pages, nodes } = walkPageTree(this.view);
    const tree = new Set([...nodes, ...pages.flatMap((p) => (p.num === undefined ? [] : [p.num]))]);
    const root = this.view.trailer.get('Root');
    if (root instanceof PdfRef) tree.add(root.num);
    const record = (num: number, given: Use) => {
      if (this.useCount >= MAX_TRACKED_USES) {
        this.truncated = true;
        return;
      }
      this.useCount++;
      const use = tree.has(num) && !TREE_ROLES.has(given.role.kind) ? { ...given, role: LINK } : given;
      let list = this.uses.get(num);
      if (!list) this.uses.set(num, (list = []));
      list.push(use);
      if (use.role.kind !== 'link') queue.push({ num, role: use.role });
    };
    for (const [key, value] of this.view.trailer.entries) {
      visitValue(value, trailerRole(key), 'trailer', [key], record);
    }
    while (queue.length > 0) {
      const { num, role: given } = queue.pop()!;
      const value = this.view.getObject(num);
      for (const role of refineRoles(given, value, num)) {
        let known = this.roles.get(num);
        if (!known) this.roles.set(num, (known = new Map()));
        const key = roleKey(role);
        if (known.has(key)) continue;
        if (++this.visits > MAX_TRACKED_VISITS) {
          this.truncated = true;
          return;
        }
        known.set(key, role);
        if (value !== undefined) visitChildren(value, role, num, [], record);
      }
    }
  }
}

type Record = (num: number, use: Use) => void;

/** A value reached under `role`: a reference is recorded, a direct value is descended into. */
export function visitValue(value: PdfValue | undefined, role: Role, from: number | 'trailer', path: Array<string | number>, record: Record): void {
  if (value instanceof PdfRef) record(value.num, { from, path, role });
  else visitChildren(value, role, from, path, record);
}

/** Descends into the direct children of a value that holds `role`, giving each its own role. */
export function visitChildren(value: PdfValue | undefined, role: Role, from: number | 'trailer', path: Array<string | number>, record: Record, depth = 0): void {
  if (depth > MAX_VALUE_DEPTH || value === undefined || value === null) return;
  const dict = value instanceof PdfStream ? value.dict : value instanceof PdfDict ? value : undefined;
  if (dict) {
    for (const [key, item] of dict.entries) {
      const child = childRole(role, key, value);
      if (!child) continue;
      if (item instanceof PdfRef) record(item.num, { from, path: [...path, key], role: child });
      else for (const r of refineRoles(child, item)) visitChildren(item, r, from, [...path, key], record, depth + 1);
    }
  } else if (Array.isArray(value)) {
    value.forEach((item, i) => {
      const child = childRole(role, i, value);
      if (!child) return;
      if (item instanceof PdfRef) record(item.num, { from, path: [...path, i], role: child });
      else for (const r of refineRoles(child, item)) visitChildren(item, r, from, [...path, i], record, depth + 1);
    });
  }
}

/** "/AP/N", "/Kids[2]": a key path as PDF syntax. */
export const formatPath = (path: ReadonlyArray<string | number>): string => path.map((p) => (typeof p === 'number' ? `[${p}]` : `/${p}`)).join('') || '(itself)';
