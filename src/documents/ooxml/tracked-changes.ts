import type { Document, Element, Node } from '@xmldom/xmldom';
import { NS } from './constants.js';
import type { OpcPackage } from './package.js';
import { childElements, decodeXmlBytes, isElement, parseXmlPart, serializeXml } from './xml.js';

/**
 * Accept All / Reject All of tracked changes, done in the WordprocessingML itself as Word would,
 * so the renderer only ever sees a document without revisions (LibreOffice's own accept/reject
 * dispatch is not dependable: it left ~700 changes of a right-to-left document untouched).
 *
 * Covered (ECMA-376 Part 1 §17.13.5): run-level w:ins / w:del / w:moveFrom / w:moveTo and their
 * range markers; inserted/deleted paragraph marks (paragraphs are merged); inserted/deleted table
 * rows and cells (w:trPr/w:ins|del, w:cellIns, w:cellDel, w:cellMerge); property changes
 * (w:rPrChange, w:pPrChange, w:sectPrChange, w:tblPrChange, w:tblPrExChange, w:trPrChange,
 * w:tcPrChange, w:tblGridChange, w:numberingChange); custom XML range markers; and
 * w:trackRevisions in the settings. Every WordprocessingML part is handled (body, headers, footers,
 * footnotes, endnotes, comments, styles, numbering, glossary), text boxes included.
 */
export type ResolveMode = 'accept' | 'reject';

/** Transitional and Strict WordprocessingML. */
const W_NAMESPACES: ReadonlySet<string> = new Set([NS.wordprocessingml, NS.wordprocessingmlStrict]);

const isW = (node: Node | null | undefined, ...names: string[]): node is Element =>
  isElement(node) && W_NAMESPACES.has(node.namespaceURI ?? '') && (names.length === 0 || names.includes(node.localName ?? ''));

/** Containers of inserted / deleted content (runs, math, nested structures). */
const INSERTED = ['ins', 'moveTo'];
const DELETED = ['del', 'moveFrom'];
/** Markers carrying no content in either outcome. */
const MARKERS = new Set([
  'moveFromRangeStart', 'moveFromRangeEnd', 'moveToRangeStart', 'moveToRangeEnd',
  'customXmlInsRangeStart', 'customXmlInsRangeEnd', 'customXmlDelRangeStart', 'customXmlDelRangeEnd',
  'customXmlMoveFromRangeStart', 'customXmlMoveFromRangeEnd', 'customXmlMoveToRangeStart', 'customXmlMoveToRangeEnd',
]);
/** Property change → the children of the current properties it keeps when rejected (they are not part of the old properties). */
const PROPERTY_CHANGES: Record<string, string[]> = {
  rPrChange: ['ins', 'del', 'moveFrom', 'moveTo'],
  pPrChange: ['rPr', 'sectPr'],
  sectPrChange: ['headerReference', 'footerReference'],
  tblPrChange: [],
  tblPrExChange: [],
  trPrChange: ['ins', 'del'],
  tcPrChange: ['cellIns', 'cellDel', 'cellMerge'],
  tblGridChange: [],
};
/** What sits between block-level content without being content (bookmarks, comment ranges, permissions). */
const BLOCK_MARKERS = new Set(['bookmarkStart', 'bookmarkEnd', 'commentRangeStart', 'commentRangeEnd', 'permStart', 'permEnd', 'proofErr', ...MARKERS]);

const WORDPROCESSINGML_PART = /^application\/vnd\.openxmlformats-officedocument\.wordprocessingml\.[a-z.]+\+xml$/i;
/** Cheap test on the raw part before parsing it. */
const REVISION_HINT = /<(?:\w+:)?(?:ins|del|moveFrom|moveTo|cellIns|cellDel|cellMerge|numberingChange|trackRevisions|\w+Change|customXml(?:Ins|Del|MoveFrom|MoveTo)Range\w+|moveFromRange\w+|moveToRange\w+)[\s/>]/;

export interface ResolveResult {
  /** Revision elements removed or applied. */
  changes: number;
  /** Parts rewritten. */
  parts: string[];
}

/** Accepts or rejects every tracked change in the package, in place. */
export function resolveTrackedChanges(pkg: OpcPackage, mode: ResolveMode): ResolveResult {
  const result: ResolveResult = { changes: 0, parts: [] };
  for (const part of pkg.partNames()) {
    if (!WORDPROCESSINGML_PART.test(pkg.contentType(part) ?? '')) continue;
    const bytes = pkg.bytes(part);
    if (!bytes) continue;
    const text = decodeXmlBytes(bytes);
    if (!REVISION_HINT.test(text)) continue;
    const doc = parseXmlPart(protectLineSeparators(text), part);
    const changes = resolveInDocument(doc, mode);
    if (changes > 0) {
      pkg.setText(part, serializeXml(doc));
      result.changes += changes;
      result.parts.push(part);
    }
  }
  return result;
}

/**
 * xmldom turns U+0085 and U+2028 into line feeds while parsing (XML 1.1 end-of-line handling, not
 * XML 1.0's), which would change the text of every part rewritten here. As character references they
 * survive. (CDATA, where references are not expanded, does not occur in WordprocessingML.)
 */
export const protectLineSeparators = (xml: string): string => xml.replace(/[\u0085\u2028]/gu, (c) => `&#x${c.charCodeAt(0).toString(16)};`);

/** Does any WordprocessingML part of the package hold a tracked change? (cheap: a text scan.) */
export function hasTrackedChanges(pkg: OpcPackage): boolean {
  for (const part of pkg.partNames()) {
    if (!WORDPROCESSINGML_PART.test(pkg.contentType(part) ?? '')) continue;
    const bytes = pkg.bytes(part);
    if (bytes && REVISION_HINT.test(decodeXmlBytes(bytes))) return true;
  }
  return false;
}

/** Elements of the W namespace under `root`, in document order (collected first: the walk then edits freely). */
function collect(root: Node): Element[] {
  const out: Element[] = [];
  // Iterative walk: input nesting depth must not reach the stack.
  const stack: Node[] = [];
  for (let child = root.lastChild; child; child = child.previousSibling) stack.push(child);
  while (stack.length) {
    const node = stack.pop()!;
    if (!isElement(node)) continue;
    if (W_NAMESPACES.has(node.namespaceURI ?? '')) out.push(node);
    for (let child = node.lastChild; child; child = child.previousSibling) stack.push(child);
  }
  return out;
}

const detached = (el: Element, root: Document): boolean => {
  let node: Node | null = el;
  while (node && node !== root) node = node.parentNode;
  return node !== root;
};

function unwrap(el: Element): void {
  const parent = el.parentNode!;
  while (el.firstChild) parent.insertBefore(el.firstChild, el);
  parent.removeChild(el);
}

const remove = (el: Element) => el.parentNode?.removeChild(el);

/** Replaces `el` by an element of another local name (same namespace, prefix, attributes and children). */
function rename(el: Element, localName: string): void {
  const doc = el.ownerDocument!;
  const copy = doc.createElementNS(el.namespaceURI, el.prefix ? `${el.prefix}:${localName}` : localName);
  for (const attr of Array.from(el.attributes)) copy.setAttributeNS(attr.namespaceURI, attr.name, attr.value);
  while (el.firstChild) copy.appendChild(el.firstChild);
  el.parentNode!.replaceChild(copy, el);
}

export function resolveInDocument(doc: Document, mode: ResolveMode): number {
  const accept = mode === 'accept';
  let changes = 0;
  const elements = collect(doc);
  const paragraphsToMerge: Element[] = [];

  for (const el of elements) {
    const name = el.localName ?? '';
    const parent = el.parentNode;
    if (!parent) continue;
    if (name === 'trackRevisions' && isW(parent, 'settings')) {
      remove(el);
      changes++;
    } else if (MARKERS.has(name)) {
      remove(el);
      changes++;
    } else if (name in PROPERTY_CHANGES) {
      if (!accept) restoreProperties(el, PROPERTY_CHANGES[name]!);
      remove(el);
      changes++;
    } else if (name === 'numberingChange') {
      remove(el); // deprecated; holds only the old number's text
      changes++;
    }
  }

  for (const el of elements) {
    const name = el.localName ?? '';
    const parent = el.parentNode;
    if (!parent || detached(el, doc)) continue;
    const inserted = INSERTED.includes(name);
    const deleted = DELETED.includes(name);
    if (isW(parent, 'rPr') && (inserted || deleted) && isW(parent.parentNode, 'pPr')) {
      // A paragraph mark inserted or deleted: it stays, or its paragraph joins the next one.
      remove(el);
      if (accept === deleted) paragraphsToMerge.push(parent.parentNode!.parentNode as Element);
      changes++;
    } else if (isW(parent, 'rPr') && (inserted || deleted)) {
      // A run's own mark (e.g. a field character's run, a math control): no content of its own.
      remove(el);
      changes++;
    } else if (isW(parent, 'trPr') && (name === 'ins' || name === 'del')) {
      const row = parent.parentNode as Element | null;
      if (accept === (name === 'del') && row) removeRow(row);
      else remove(el);
      changes++;
    } else if (isW(parent, 'tcPr') && (name === 'cellIns' || name === 'cellDel')) {
      const cell = parent.parentNode as Element | null;
      if (accept === (name === 'cellDel') && cell) removeCell(cell);
      else remove(el);
      changes++;
    } else if (isW(parent, 'tcPr') && name === 'cellMerge') {
      remove(el);
      changes++;
    } else if (inserted || deleted) {
      if (accept === inserted) unwrap(el);
      else remove(el);
      changes++;
    }
  }

  // Last first: a run of merged paragraphs collapses into the paragraph that ends it.
  for (const paragraph of paragraphsToMerge.reverse()) if (!detached(paragraph, doc)) mergeWithNext(paragraph);

  // Deleted text that stays (rejected deletions) becomes text again; none may remain otherwise.
  for (const el of collect(doc)) {
    if (el.localName === 'delText' || el.localName === 'delInstrText') {
      if (accept) remove(el);
      else rename(el, el.localName === 'delText' ? 't' : 'instrText');
    }
  }
  return changes;
}

/** Rejecting a property change: the old properties (the change's only child) replace the current ones, except `keep`. */
function restoreProperties(change: Element, keep: string[]): void {
  const properties = change.parentNode as Element;
  const old = childElements(change).find((c) => isW(c));
  for (const child of childElements(properties)) {
    if (child === change || (isW(child) && keep.includes(child.localName ?? ''))) continue;
    properties.removeChild(child);
  }
  if (!old) return;
  // Schema order: the old properties come first; kept children (rPr, sectPr, references, markers) after them,
  // except header/footer references, which lead a sectPr.
  const anchor = properties.localName === 'sectPr' ? null : properties.firstChild;
  const moved = Array.from(old.childNodes);
  for (const node of moved) properties.insertBefore(node, anchor);
}

function removeRow(row: Element): void {
  const table = row.parentNode as Element | null;
  remove(row);
  if (table && isW(table, 'tbl') && childElements(table).every((c) => !isW(c, 'tr'))) removeBlock(table);
}

function removeCell(cell: Element): void {
  const row = cell.parentNode as Element | null;
  remove(cell);
  if (row && isW(row, 'tr') && childElements(row).every((c) => !isW(c, 'tc'))) removeRow(row);
}

/** Removes a table; a cell must still end with a paragraph, and a note, comment or text box must keep one. */
function removeBlock(block: Element): void {
  const container = block.parentNode as Element | null;
  remove(block);
  if (container && needsClosingParagraph(container)) container.appendChild(emptyParagraph(container));
}

const blocks = (container: Element) => childElements(container).filter((c) => isW(c, 'p', 'tbl', 'sdt', 'customXml'));

function needsClosingParagraph(container: Element): boolean {
  if (isW(container, 'tc')) return !isW(blocks(container).at(-1), 'p');
  return isW(container, 'txbxContent', 'footnote', 'endnote', 'comment', 'hdr', 'ftr', 'body') && blocks(container).length === 0;
}

function emptyParagraph(context: Element): Element {
  return context.ownerDocument!.createElementNS(context.namespaceURI, context.prefix ? `${context.prefix}:p` : 'p');
}

const isBlockMarker = (node: Node): boolean => !isElement(node) || (isW(node) && BLOCK_MARKERS.has(node.localName ?? ''));
const hasContent = (paragraph: Element): boolean => childElements(paragraph).some((c) => !isW(c, 'pPr') && !isBlockMarker(c));

/**
 * The paragraph mark of `paragraph` is gone: its content joins the following paragraph, which
 * keeps its own properties (its mark is the one that ends the merged paragraph). Without a
 * following paragraph (a table or the end of the container comes next) an empty paragraph is
 * removed, unless its container would be left without the paragraph it must end with, and one
 * with content stays as it is.
 */
function mergeWithNext(paragraph: Element): void {
  let next = paragraph.nextSibling;
  while (next && isBlockMarker(next)) next = next.nextSibling;
  if (isW(next, 'p')) {
    const nextProperties = childElements(next).find((c) => isW(c, 'pPr'));
    const anchor = nextProperties ? nextProperties.nextSibling : next.firstChild;
    for (const child of Array.from(paragraph.childNodes)) {
      if (!isW(child, 'pPr')) next.insertBefore(child, anchor);
    }
    remove(paragraph);
    return;
  }
  if (hasContent(paragraph)) return;
  const container = paragraph.parentNode as Element | null;
  remove(paragraph);
  if (container && needsClosingParagraph(container)) container.insertBefore(paragraph, next);
}
