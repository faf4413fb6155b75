import { DOMParser, XMLSerializer, type Document, type Element, type Node } from '@xmldom/xmldom';
import { NS } from '../ooxml/constants.js';

/** Minimal DOM helpers over @xmldom/xmldom for WordprocessingML parts. */
export const W_NS = NS.wordprocessingml;
export const R_NS = NS.officeRelationships;

export type { Document, Element, Node };

export function parseXml(xml: string): Document {
  // Some producers put a BOM or blank line before the XML declaration; xmldom refuses that.
  return new DOMParser({ onError: () => undefined }).parseFromString(xml.replace(/^\uFEFF?\s+(?=<)|^\uFEFF/, ''), 'text/xml');
}

export function serializeXml(node: Node): string {
  return new XMLSerializer().serializeToString(node);
}

/** Serializes one element for re-insertion as fragment text (drops the w: declaration xmldom adds). */
export function serializeFragment(node: Node): string {
  return serializeXml(node).replace(/^(<[^>]*?) xmlns:w="[^"]*"/, '$1');
}

export function elementChildren(parent: Node, name?: string): Element[] {
  const result: Element[] = [];
  for (let child = parent.firstChild; child; child = child.nextSibling) {
    if (child.nodeType === 1 && (!name || child.nodeName === name)) result.push(child as Element);
  }
  return result;
}

export function firstChild(parent: Node, name: string): Element | null {
  return elementChildren(parent, name)[0] ?? null;
}

export function descendants(parent: Element | Document, name: string): Element[] {
  return Array.from(parent.getElementsByTagName(name)) as Element[];
}

export function firstDescendant(parent: Element | Document, name: string): Element | null {
  return (parent.getElementsByTagName(name)[0] as Element | undefined) ?? null;
}

export function ancestor(node: Node, name: string, stopAt?: Node): Element | null {
  for (let current = node.parentNode; current && current !== stopAt; current = current.parentNode) {
    if (current.nodeName === name) return current as Element;
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

/** Parses WordprocessingML fragment text into nodes owned by `doc`. */
export function fragment(doc: Document, xml: string): Node[] {
  const wrapper = parseXml(`<docproc-fragment xmlns:w="${W_NS}" xmlns:r="${R_NS}">${xml}</docproc-fragment>`).documentElement!;
  return elementChildren(wrapper).map((child) => doc.importNode(child, true));
}

export function appendXml(parent: Node, xml: string): void {
  for (const node of fragment(parent.ownerDocument ?? (parent as Document), xml)) parent.appendChild(node);
}

export function wVal(element: Element | null): string | null {
  return element?.getAttribute('w:val') ?? null;
}
