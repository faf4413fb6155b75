import { DOMParser, type Document, type Element, type Node } from '@xmldom/xmldom';

export const NS = {
  dsig: 'http://www.w3.org/2000/09/xmldsig#',
  xmlns: 'http://www.w3.org/2000/xmlns/',
  xml: 'http://www.w3.org/XML/1998/namespace',
  mdssi: 'http://schemas.openxmlformats.org/package/2006/digital-signature',
  relationships: 'http://schemas.openxmlformats.org/package/2006/relationships',
  contentTypes: 'http://schemas.openxmlformats.org/package/2006/content-types',
  xades132: 'http://uri.etsi.org/01903/v1.3.2#',
  xades141: 'http://uri.etsi.org/01903/v1.4.1#',
  officeDigsig: 'http://schemas.microsoft.com/office/2006/digsig',
} as const;

export const ELEMENT_NODE = 1;
export const TEXT_NODE = 3;
export const CDATA_SECTION_NODE = 4;
export const PROCESSING_INSTRUCTION_NODE = 7;
export const COMMENT_NODE = 8;
export const DOCUMENT_NODE = 9;

export class XmlSyntaxError extends Error {}

/** Parses XML strictly (a fatal or recoverable error throws XmlSyntaxError); no external entities are ever fetched. */
export function parseXml(text: string): Document {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
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

export function decodeXmlBytes(bytes: Uint8Array): string {
  if (bytes[0] === 0xff && bytes[1] === 0xfe) return Buffer.from(bytes.subarray(2)).toString('utf16le');
  if (bytes[0] === 0xfe && bytes[1] === 0xff) return Buffer.from(bytes.subarray(2)).swap16().toString('utf16le');
  return Buffer.from(bytes).toString('utf8');
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
