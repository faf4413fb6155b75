import type { Attr, Document, Element, Node } from '@xmldom/xmldom';
import { NS } from './constants.js';
import { CDATA_SECTION_NODE, COMMENT_NODE, DOCUMENT_NODE, ELEMENT_NODE, PROCESSING_INSTRUCTION_NODE, TEXT_NODE } from './xml.js';

/**
 * Canonical XML 1.0 (inclusive, W3C REC-xml-c14n-20010315) and Exclusive XML Canonicalization
 * 1.0, for a whole document or for the subtree of one element (the document subsets XML-DSig
 * needs: same-document references and SignedInfo). Comments are kept only `withComments`.
 */
export interface C14nOptions {
  exclusive: boolean;
  withComments: boolean;
  /** Exclusive only: prefixes treated as in inclusive C14N (`#default` is the default namespace). */
  inclusivePrefixes?: string[];
}

export const C14N_ALGORITHMS: Record<string, C14nOptions> = {
  'http://www.w3.org/TR/2001/REC-xml-c14n-20010315': { exclusive: false, withComments: false },
  'http://www.w3.org/TR/2001/REC-xml-c14n-20010315#WithComments': { exclusive: false, withComments: true },
  'http://www.w3.org/2001/10/xml-exc-c14n#': { exclusive: true, withComments: false },
  'http://www.w3.org/2001/10/xml-exc-c14n#WithComments': { exclusive: true, withComments: true },
};

type Namespaces = Map<string, string>;

const escapeText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#xD;');
const escapeAttr = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;').replace(/\t/g, '&#x9;').replace(/\n/g, '&#xA;').replace(/\r/g, '&#xD;');

const isNamespaceDecl = (attr: Attr) => attr.namespaceURI === NS.xmlns || attr.name === 'xmlns' || attr.name.startsWith('xmlns:');
const declaredPrefix = (attr: Attr) => (attr.name === 'xmlns' ? '' : attr.name.slice(6));

function attributesOf(el: Element): Attr[] {
  const out: Attr[] = [];
  for (let i = 0; i < el.attributes.length; i++) out.push(el.attributes.item(i)!);
  return out;
}

/** Namespaces in scope at `el` (prefix '' is the default namespace; '' as value means undeclared). */
function inScopeNamespaces(el: Element): Namespaces {
  const chain: Element[] = [];
  for (let node: Node | null = el; node && node.nodeType === ELEMENT_NODE; node = node.parentNode) chain.unshift(node as Element);
  const scope: Namespaces = new Map();
  for (const ancestor of chain) declare(scope, ancestor);
  return scope;
}

function declare(scope: Namespaces, el: Element): void {
  for (const attr of attributesOf(el)) if (isNamespaceDecl(attr)) scope.set(declaredPrefix(attr), attr.value);
}

/** xml:* attributes an apex element inherits from its ancestors in inclusive C14N of a document subset. */
function inheritedXmlAttributes(el: Element): Attr[] {
  const own = new Set(attributesOf(el).filter((a) => a.namespaceURI === NS.xml).map((a) => a.localName));
  const inherited = new Map<string, Attr>();
  for (let node = el.parentNode; node && node.nodeType === ELEMENT_NODE; node = node.parentNode) {
    for (const attr of attributesOf(node as Element)) {
      if (attr.namespaceURI === NS.xml && !own.has(attr.localName!) && !inherited.has(attr.localName!)) inherited.set(attr.localName!, attr);
    }
  }
  return [...inherited.values()];
}

/** xmldom keeps the XML declaration as a processing instruction; it is not part of the data model C14N serialises. */
const isXmlDeclaration = (node: Node) =>
  node.nodeType === PROCESSING_INSTRUCTION_NODE && (node as unknown as { target: string }).target.toLowerCase() === 'xml';

const compareAttrs = (a: Attr, b: Attr) => {
  const nsA = a.namespaceURI ?? '';
  const nsB = b.namespaceURI ?? '';
  if (nsA !== nsB) return nsA < nsB ? -1 : 1;
  const la = a.localName ?? a.name;
  const lb = b.localName ?? b.name;
  return la < lb ? -1 : la > lb ? 1 : 0;
};

class Canonicalizer {
  private readonly out: string[] = [];
  private readonly inclusivePrefixes: Set<string>;

  constructor(private readonly options: C14nOptions) {
    this.inclusivePrefixes = new Set((options.inclusivePrefixes ?? []).map((p) => (p === '#default' ? '' : p)));
  }

  result(): string {
    return this.out.join('');
  }

  document(doc: Document): void {
    let seenElement = false;
    for (let child = doc.firstChild; child; child = child.nextSibling) {
      if (child.nodeType === ELEMENT_NODE) {
        this.element(child as Element, new Map(), new Map(), true);
        seenElement = true;
      } else if (isXmlDeclaration(child)) {
        continue;
      } else if (child.nodeType === PROCESSING_INSTRUCTION_NODE || (child.nodeType === COMMENT_NODE && this.options.withComments)) {
        if (seenElement) this.out.push('\n');
        this.leaf(child);
        if (!seenElement) this.out.push('\n');
      }
    }
  }

  apex(el: Element): void {
    const parentScope = el.parentNode && el.parentNode.nodeType === ELEMENT_NODE ? inScopeNamespaces(el.parentNode as Element) : new Map<string, string>();
    this.element(el, parentScope, new Map(), true);
  }

  private leaf(node: Node): void {
    if (node.nodeType === PROCESSING_INSTRUCTION_NODE) {
      const pi = node as unknown as { target: string; data: string };
      this.out.push(pi.data ? `<?${pi.target} ${pi.data}?>` : `<?${pi.target}?>`);
    } else if (node.nodeType === COMMENT_NODE) {
      this.out.push(`<!--${(node as unknown as { data: string }).data}-->`);
    }
  }

  /**
   * `parentScope`: namespaces in scope at the parent in the source document; `rendered`:
   * namespaces the nearest output ancestor rendered (what a reader of the output sees in scope).
   */
  private element(el: Element, parentScope: Namespaces, rendered: Namespaces, isApex: boolean): void {
    const scope = new Map(parentScope);
    declare(scope, el);
    const renderedHere = new Map(rendered);
    const nsOut: Array<[string, string]> = [];
    for (const prefix of this.namespacesToConsider(el, scope)) {
      if (prefix === 'xml') continue;
      const uri = scope.get(prefix) ?? '';
      const visible = rendered.get(prefix) ?? '';
      if (uri === visible && (prefix === '' || rendered.has(prefix) || uri === '')) continue;
      if (prefix !== '' && uri === '') continue;
      nsOut.push([prefix, uri]);
      renderedHere.set(prefix, uri);
    }
    nsOut.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));

    const attrs = attributesOf(el).filter((a) => !isNamespaceDecl(a));
    if (isApex && !this.options.exclusive) attrs.push(...inheritedXmlAttributes(el));
    attrs.sort(compareAttrs);

    this.out.push('<', el.tagName);
    for (const [prefix, uri] of nsOut) this.out.push(prefix ? ` xmlns:${prefix}="${escapeAttr(uri)}"` : ` xmlns="${escapeAttr(uri)}"`);
    for (const attr of attrs) this.out.push(` ${attr.name}="${escapeAttr(attr.value)}"`);
    this.out.push('>');
    for (let child = el.firstChild; child; child = child.nextSibling) {
      switch (child.nodeType) {
        case ELEMENT_NODE:
          this.element(child as Element, scope, renderedHere, false);
          break;
        case TEXT_NODE:
        case CDATA_SECTION_NODE:
          this.out.push(escapeText((child as unknown as { data: string }).data));
          break;
        case PROCESSING_INSTRUCTION_NODE:
          this.leaf(child);
          break;
        case COMMENT_NODE:
          if (this.options.withComments) this.leaf(child);
          break;
      }
    }
    this.out.push('</', el.tagName, '>');
  }

  /** Inclusive: every namespace in scope. Exclusive: only those visibly used here, plus the InclusiveNamespaces list. */
  private namespacesToConsider(el: Element, scope: Namespaces): string[] {
    if (!this.options.exclusive) return [...scope.keys()];
    const used = new Set<string>([el.prefix ?? '']);
    for (const attr of attributesOf(el)) if (!isNamespaceDecl(attr) && attr.prefix) used.add(attr.prefix);
    for (const prefix of this.inclusivePrefixes) if (scope.has(prefix)) used.add(prefix);
    return [...used];
  }
}

/** Canonical form of a whole document, or of the subtree rooted at an element (with its in-scope context). */
export function canonicalize(node: Document | Element, options: C14nOptions): string {
  const c = new Canonicalizer(options);
  if (node.nodeType === DOCUMENT_NODE) c.document(node as Document);
  else c.apex(node as Element);
  return c.result();
}
