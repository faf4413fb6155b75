/**
 * A tiny XML element tree for the signature parts we write ourselves. Because we build these
 * elements, we can serialise them directly in Canonical XML 1.0 form (inclusive C14N,
 * W3C REC-xml-c14n-20010315, no comments) and hash those bytes: a verifier that parses the
 * part and canonicalises the same element gets exactly the same octets.
 */
export interface XmlElement {
  /** Qualified name as written, e.g. `Reference` or `xd:SigningTime`. */
  name: string;
  /** Namespace declarations made on this element: prefix ('' = default) → URI. */
  namespaces?: Record<string, string>;
  /** Plain (unprefixed) attributes. */
  attributes?: Record<string, string | undefined>;
  children?: Array<XmlElement | string>;
}

export const el = (
  name: string,
  attributes: XmlElement['attributes'] = {},
  children: XmlElement['children'] = [],
  namespaces?: XmlElement['namespaces'],
): XmlElement => ({ name, attributes, children, namespaces });

const escapeText = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\r/g, '&#xD;');
const escapeAttribute = (s: string) =>
  s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/"/g, '&quot;')
    .replace(/\t/g, '&#x9;').replace(/\n/g, '&#xA;').replace(/\r/g, '&#xD;');

type Scope = ReadonlyMap<string, string>;

/** C14N orders namespace nodes by prefix (default first), attributes by local name (none of ours has a namespace). */
function render(node: XmlElement, inScope: Scope, rendered: Scope, out: string[]): void {
  const scope = new Map(inScope);
  for (const [prefix, uri] of Object.entries(node.namespaces ?? {})) scope.set(prefix, uri);
  const declarations = [...scope.entries()]
    .filter(([prefix, uri]) => rendered.get(prefix) !== uri && !(prefix === '' && uri === '' && !rendered.get('')))
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const attributes = Object.entries(node.attributes ?? {})
    .filter((entry): entry is [string, string] => entry[1] !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));

  out.push('<', node.name);
  for (const [prefix, uri] of declarations) out.push(prefix ? ` xmlns:${prefix}="` : ' xmlns="', escapeAttribute(uri), '"');
  for (const [key, value] of attributes) out.push(' ', key, '="', escapeAttribute(value), '"');
  out.push('>');
  const nowRendered = new Map(rendered);
  for (const [prefix, uri] of declarations) nowRendered.set(prefix, uri);
  for (const child of node.children ?? []) {
    if (typeof child === 'string') out.push(escapeText(child));
    else render(child, scope, nowRendered, out);
  }
  out.push('</', node.name, '>');
}

/**
 * Canonical form of `node` as the apex of a document subset: the namespaces in scope from its
 * ancestors (`inherited`) are declared on it, as inclusive C14N requires.
 */
export function canonicalize(node: XmlElement, inherited: Record<string, string> = {}): string {
  const out: string[] = [];
  render(node, new Map(Object.entries(inherited)), new Map(), out);
  return out.join('');
}
