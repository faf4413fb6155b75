import { DOMParser, XMLSerializer, type Document, type Element, type Node } from '@xmldom/xmldom';
import { ErrorCode, DomainError } from '../../errors/domain-error.js';
import { NS, XML_DECLARATION } from './constants.js';

/**
 * XML of package parts — the one parse policy of docproc: xmldom, namespace-aware (elements are
 * matched by namespace URI and local name, never by prefix), strict (an error or fatal error
 * throws; warnings do not), no external entities ever fetched; a byte-order mark and blank lines
 * before the first tag (some producers write them; xmldom refuses them) are skipped. Serialisation
 * and element helpers.
 */

export const ELEMENT_NODE = 1;
export const TEXT_NODE = 3;
export const CDATA_SECTION_NODE = 4;
export const PROCESSING_INSTRUCTION_NODE = 7;
export const COMMENT_NODE = 8;
export const DOCUMENT_NODE = 9;

export class XmlSyntaxError extends Error {}

/** Parses XML strictly (a fatal or recoverable error throws XmlSyntaxError); no external entities are ever fetched. */
export function parseXml(text: string): Document {
  const source = text.replace(/^\uFEFF?\s+(?=<)|^\uFEFF/, '');
  const parser = new DOMParser({
    onError: (level, message) => {
      if (level !== 'warning') throw new XmlSyntaxError(message);
    },
  });
  try {
    return parser.parseFromString(source, 'text/xml');
  } catch (err) {
    throw err instanceof XmlSyntaxError ? err : new XmlSyntaxError(err instanceof Error ? err.message : String(err));
  }
}

/** Part bytes as text: UTF-16 when a UTF-16 byte-order mark says so, UTF-8 otherwise (a UTF-8 BOM is left for parseXml). */
export function decodeXmlBytes(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return Buffer.from(bytes.subarray(2)).toString('utf16le');
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return Buffer.from(bytes.subarray(2)).swap16().toString('utf16le');
  return Buffer.from(bytes).toString('utf8');
}

/** Parses a package part; throws DomainError 422 UNPROCESSABLE_DOCUMENT naming the part when it is not well-formed. */
export function parseXmlPart(content: Uint8Array | string, partName: string): Document {
  try {
    return parseXml(typeof content === 'string' ? content : decodeXmlBytes(content));
  } catch {
    throw new DomainError(
      ErrorCode.UNPROCESSABLE_DOCUMENT,
      `The DOCX part ${partName.replace(/^\//, '')} is not well-formed XML; repair the document (e.g. open and save it in Word) and try again.`,
    );
  }
}

/** UTF-8 text of a document, with an XML declaration when the document has none. */
export function serializeXml(doc: Document): string {
  const text = new XMLSerializer().serializeToString(doc);
  return text.startsWith('<?xml') ? text : `${XML_DECLARATION}${text}`;
}

export const isElement = (node: Node | null | undefined): node is Element => node?.nodeType === ELEMENT_NODE;

export function childElements(parent: Node, ns?: string, localName?: string): Element[] {
  const out: Element[] = [];
  for (let child = parent.firstChild; child; child = child.nextSibling) {
    if (!isElement(child)) continue;
    if (ns !== undefined && child.namespaceURI !== ns) continue;
    if (localName !== undefined && child.localName !== localName) continue;
    out.push(child);
  }
  return out;
}

export const firstChild = (parent: Node, ns: string, localName: string): Element | undefined => childElements(parent, ns, localName)[0];

export function descendants(root: Node, ns: string, localName: string): Element[] {
  const out: Element[] = [];
  const walk = (node: Node) => {
    for (let child = node.firstChild; child; child = child.nextSibling) {
      if (!isElement(child)) continue;
      if (child.namespaceURI === ns && child.localName === localName) out.push(child);
      walk(child);
    }
  };
  walk(root);
  return out;
}

export const textOf = (el: Element | undefined): string => (el?.textContent ?? '').trim();

/** Builds elements of `doc`: `qualifiedName` in namespace `ns`, with namespace declarations written out as attributes (C14N reads them). */
export function elementBuilder(doc: Document) {
  return (
    ns: string,
    qualifiedName: string,
    attributes: Record<string, string | undefined> = {},
    children: Array<Element | string> = [],
    declarations: Record<string, string> = {},
  ): Element => {
    const element = doc.createElementNS(ns, qualifiedName);
    for (const [prefix, uri] of Object.entries(declarations)) element.setAttributeNS(NS.xmlns, prefix ? `xmlns:${prefix}` : 'xmlns', uri);
    for (const [name, value] of Object.entries(attributes)) if (value !== undefined) element.setAttribute(name, value);
    for (const child of children) element.appendChild(typeof child === 'string' ? doc.createTextNode(child) : child);
    return element;
  };
}
