import type { PdfView } from './document.js';
import { PdfDict, PdfRef, asArray, asText, isName, nameOf, type PdfValue } from './objects.js';

const MAX_NODES = 100_000;
const MAX_TREE_DEPTH = 64;

export interface PageNode {
  num?: number;
  dict: PdfDict;
}

/** Pages and intermediate /Pages nodes, walked from the catalog with cycle and size guards. */
export function walkPageTree(view: PdfView): { pages: PageNode[]; nodes: Set<number> } {
  const pages: PageNode[] = [];
  const nodes = new Set<number>();
  const visit = (value: PdfValue | undefined, depth: number) => {
    if (depth > MAX_TREE_DEPTH || pages.length + nodes.size > MAX_NODES) return;
    const num = value instanceof PdfRef ? value.num : undefined;
    if (num !== undefined) {
      if (nodes.has(num)) return;
      nodes.add(num);
    }
    const dict = view.dict(value);
    if (!dict) return;
    const kids = view.array(dict.get('Kids'));
    if (isName(dict.get('Type'), 'Pages') || (kids && !isName(dict.get('Type'), 'Page'))) {
      for (const kid of kids ?? []) visit(kid, depth + 1);
    } else pages.push({ num, dict });
  };
  visit(view.catalog?.get('Pages'), 0);
  return { pages, nodes };
}

export interface FieldNode {
  num?: number;
  dict: PdfDict;
  /** Fully qualified name (partial names joined by "."). */
  name: string;
  /** Field type, inherited from ancestors. */
  type?: string;
  isTerminal: boolean;
}

/** Every field node reachable from /AcroForm /Fields (terminal fields and their ancestors). */
export function walkFields(view: PdfView): FieldNode[] {
  const out: FieldNode[] = [];
  const seen = new Set<number>();
  const visit = (value: PdfValue | undefined, parentName: string, parentType: string | undefined, depth: number) => {
    if (depth > MAX_TREE_DEPTH || out.length > MAX_NODES) return;
    const num = value instanceof PdfRef ? value.num : undefined;
    if (num !== undefined) {
      if (seen.has(num)) return;
      seen.add(num);
    }
    const dict = view.dict(value);
    if (!dict) return;
    const partial = asText(dict.get('T'));
    const name = partial === undefined ? parentName : parentName ? `${parentName}.${partial}` : partial;
    const type = nameOf(dict.get('FT')) ?? parentType;
    const kids = (view.array(dict.get('Kids')) ?? []).filter((kid) => {
      const kidDict = view.dict(kid);
      return kidDict?.has('T') || kidDict?.has('FT') || kidDict?.has('Kids');
    });
    out.push({ num, dict, name, type, isTerminal: kids.length === 0 });
    for (const kid of kids) visit(kid, name, type, depth + 1);
  };
  const acroForm = view.dict(view.catalog?.get('AcroForm'));
  for (const field of view.array(acroForm?.get('Fields')) ?? []) visit(field, '', undefined, 0);
  return out;
}

export interface SignatureFieldRef {
  name: string;
  fieldNum?: number;
  field: PdfDict;
  /** The /V value as written (a reference or a direct dictionary). */
  value?: PdfValue;
}

/** Signature fields from the AcroForm, plus signature widgets only reachable from page annotations. */
export function findSignatureFields(view: PdfView): SignatureFieldRef[] {
  const fields: SignatureFieldRef[] = walkFields(view)
    .filter((f) => f.type === 'Sig' && f.isTerminal)
    .map((f) => ({ name: f.name || '(unnamed)', fieldNum: f.num, field: f.dict, value: f.dict.get('V') }));
  const known = new Set(fields.map((f) => f.fieldNum).filter((n) => n !== undefined));
  for (const page of walkPageTree(view).pages) {
    for (const annot of view.array(page.dict.get('Annots')) ?? []) {
      const dict = view.dict(annot);
      if (!dict || !isName(dict.get('Subtype'), 'Widget') || !(annot instanceof PdfRef) || known.has(annot.num)) continue;
      if (nameOf(dict.get('FT')) !== 'Sig' || !dict.has('V')) continue;
      known.add(annot.num);
      fields.push({ name: asText(dict.get('T')) ?? '(unnamed)', fieldNum: annot.num, field: dict, value: dict.get('V') });
    }
  }
  return fields;
}

/** Numbers of the streams an /AP dictionary points to (normal/rollover/down, with appearance states). */
export function appearanceStreamNums(view: PdfView, dict: PdfDict): number[] {
  const ap = view.dict(dict.get('AP'));
  const nums: number[] = [];
  for (const key of ['N', 'R', 'D']) {
    const entry = ap?.get(key);
    if (entry instanceof PdfRef) nums.push(entry.num);
    const resolved = view.resolve(entry);
    if (resolved instanceof PdfDict) {
      for (const state of resolved.entries.values()) if (state instanceof PdfRef) nums.push(state.num);
    }
  }
  return nums;
}

export const refNum = (value: PdfValue | undefined): number | undefined => (value instanceof PdfRef ? value.num : undefined);

export const inheritedFieldType = (view: PdfView, dict: PdfDict): string | undefined => {
  let current: PdfDict | undefined = dict;
  for (let depth = 0; current && depth < MAX_TREE_DEPTH; depth++) {
    const type = nameOf(current.get('FT'));
    if (type) return type;
    current = view.dict(current.get('Parent'));
  }
  return undefined;
};

export const arrayRefs = (values: PdfValue[] | undefined): number[] =>
  (values ?? []).flatMap((v) => (v instanceof PdfRef ? [v.num] : []));

export const asArrayOrEmpty = (v: PdfValue | undefined) => asArray(v) ?? [];
