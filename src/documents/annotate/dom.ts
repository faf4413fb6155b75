import { XMLSerializer, type Document, type Element, type Node } from '@xmldom/xmldom';
import { NS } from '../ooxml/constants.js';
import { isElement, parseXml as parseXmlStrictly, serializeXml as serializeDocument } from '../ooxml/xml.js';

/**
 * DOM helpers for WordprocessingML parts, over the one parse policy (ooxml/xml.ts: strict,
 * namespace-aware). Names are written as 'w:p', 'a:blip', 'wp:extent'… and matched by namespace
 * and local name, whatever prefix the document itself uses (a template may bind WordprocessingML
 * to `ns0:` as well as `w:`); 'w:' also matches Strict OOXML.
 */
export const W_NS = NS.wordprocessingml;
export const R_NS = NS.officeRelationships;

export type { Document, Element, Node };

const NAMESPACES: Record<string, readonly string[]> = {
  w: [NS.wordprocessingml, NS.wordprocessingmlStrict],
  r: [NS.officeRelationships],
  a: [NS.drawingml],
  wp: [NS.wordprocessingDrawing],
  pic: [NS.picture],
};

interface Name {
  namespaces: readonly string[];
  local: string;
}

const names = new Map<string, Name>();
function nameOf(qualified: string): Name {
  let name = names.get(qualified);
  if (!name) {
    const colon = qualified.indexOf(':');
    const namespaces = NAMESPACES[qualified.slice(0, colon)];
    if (colon < 0 || !namespaces) throw new Error(`dom: unknown name ${qualified}`);
    name = { namespaces, local: qualified.slice(colon + 1) };
    names.set(qualified, name);
  }
  return name;
}

/** Is `node` the element `qualified` ('w:p') names, in whatever prefix the document spells it? */
export function is(node: Node | null | undefined, qualified: string): node is Element {
  if (!isElement(node)) return false;
  const name = nameOf(qualified);
  return node.localName === name.local && name.namespaces.includes(node.namespaceURI ?? '');
}

/** A part as a DOM; throws XmlSyntaxError when it is not well-formed. */
export function parseXml(xml: string): Document {
  return parseXmlStrictly(xml);
}

/** A whole part, with its XML declaration. */
export function serializeXml(doc: Document): string {
  return serializeDocument(doc);
}

/** One node as text, no declaration. */
export function serializeNode(node: Node): string {
  return new XMLSerializer().serializeToString(node);
}

/** Serializes one element for re-insertion as fragment text (drops the w: declaration xmldom adds). */
export function serializeFragment(node: Node): string {
  return serializeNode(node).replace(/^(<[^>]*?) xmlns:w="[^"]*"/, '$1');
}

export function elementChildren(parent: Node, name?: string): Element[] {
  const result: Element[] = [];
  for (let child = parent.firstChild; child; child = child.nextSibling) {
    if (isElement(child) && (!name || is(child, name))) result.push(child);
  }
  return result;
}

export function firstChild(parent: Node, name: string): Element | null {
  return elementChildren(parent, name)[0] ?? null;
}

export function descendants(parent: Element | Document, name: string): Element[] {
  const { namespaces, local } = nameOf(name);
  return namespaces.flatMap((ns) => Array.from(parent.getElementsByTagNameNS(ns, local)) as Element[]);
}

export function firstDescendant(parent: Element | Document, name: string): Element | null {
  const { namespaces, local } = nameOf(name);
  for (const ns of namespaces) {
    const found = parent.getElementsByTagNameNS(ns, local)[0] as Element | undefined;
    if (found) return found;
  }
  return null;
}

export function ancestor(node: Node, name: string, stopAt?: Node): Element | null {
  for (let current = node.parentNode; current && current !== stopAt; current = current.parentNode) {
    if (is(current, name)) return current;
  }
  return null;
}

export function isAttached(node: Node): boolean {
  let current: Node | null = node;
  while (current && current.nodeType !== 9) current = current.parentNode;
  return current !== null;
}

export function removeChildren(node: Node): void {
  while (node.firstChild) node.removeChild(node.firstChild);
}

/** A new element `qualified` ('w:sdtContent') owned by `doc`, in the namespace its prefix stands for. */
export function createElement(doc: Document, qualified: string): Element {
  return doc.createElementNS(nameOf(qualified).namespaces[0]!, qualified);
}

/** Parses WordprocessingML fragment text into nodes owned by `doc`. */
export function fragment(doc: Document, xml: string): Node[] {
  const wrapper = parseXml(`<docproc-fragment xmlns:w="${W_NS}" xmlns:r="${R_NS}">${xml}</docproc-fragment>`).documentElement!;
  return elementChildren(wrapper).map((child) => doc.importNode(child, true));
}

export function appendXml(parent: Node, xml: string): void {
  for (const node of fragment(parent.ownerDocument ?? (parent as Document), xml)) parent.appendChild(node);
}

/** The w:val attribute, in whatever prefix (or the Strict namespace) the element carries it. */
export function wVal(element: Element | null): string | null {
  if (!element) return null;
  return element.getAttributeNS(element.namespaceURI ?? W_NS, 'val') ?? element.getAttributeNS(W_NS, 'val') ?? null;
}
