import { createHash } from 'node:crypto';
import type { Document, Element, Node } from '@xmldom/xmldom';
import type { HashName } from '../pki/algorithms.js';
import { DIGEST_METHODS, decodeBase64 } from './algorithms.js';
import { C14N_ALGORITHMS, canonicalize } from '../ooxml/c14n.js';
import { NS, RELATIONSHIP_TRANSFORM } from '../ooxml/constants.js';
import type { OpcPackage } from '../ooxml/package.js';
import { normalisePartName } from '../ooxml/part-names.js';
import { childElements, decodeXmlBytes, firstChild, parseXml, textOf } from '../ooxml/xml.js';
import { applyRelationshipTransform, relationshipSelection } from '../ooxml/relationship-transform.js';

const EXC_C14N_NS = 'http://www.w3.org/2001/10/xml-exc-c14n#';

/** What flows between transforms: raw octets or an XML node-set (a document, or one element's subtree). */
type Data = { kind: 'octets'; bytes: Uint8Array } | { kind: 'nodes'; node: Document | Element; comments: boolean };

export interface ReferenceCheck {
  uri: string;
  type: string | null;
  hash: HashName | null;
  transforms: string[];
  intact: boolean;
  /** Set when the reference uses an algorithm or transform this verifier does not implement. */
  unsupported?: string;
  error?: string;
  /** Same-document reference: the element it points to. */
  element?: Element;
  /** Package-part reference. */
  part?: { name: string; contentType: string | null; relationships: string[] | null };
}

export interface ReferenceContext {
  /** The package whose parts references name (OPC); absent for a standalone XML document. */
  pkg?: OpcPackage;
  /** Elements of the signature document by Id attribute. */
  ids: Map<string, Element[]>;
  /** The signed document itself, for URI="" (an enveloped signature, e.g. an ETSI trusted list). */
  doc?: Document;
  /** The ds:Signature being checked, which the enveloped-signature transform removes. */
  signature?: Element;
}

const ENVELOPED_SIGNATURE = 'http://www.w3.org/2000/09/xmldsig#enveloped-signature';

export function indexIds(doc: Document): Map<string, Element[]> {
  const ids = new Map<string, Element[]>();
  const walk = (el: Element) => {
    const id = el.getAttribute('Id') ?? el.getAttribute('ID') ?? el.getAttribute('id');
    if (id) ids.set(id, [...(ids.get(id) ?? []), el]);
    for (const child of childElements(el)) walk(child);
  };
  if (doc.documentElement) walk(doc.documentElement);
  return ids;
}

const transformName = (uri: string) =>
  uri === RELATIONSHIP_TRANSFORM ? 'RelationshipTransform' : uri === ENVELOPED_SIGNATURE ? 'enveloped-signature' : (C14N_ALGORITHMS[uri] ? describeC14n(uri) : uri);

/** Child positions from `root` down to `target`, or undefined when `target` is not below `root`. */
function pathFrom(root: Node, target: Node): number[] | undefined {
  const path: number[] = [];
  let node: Node = target;
  while (node !== root) {
    const parent = node.parentNode;
    if (!parent) return undefined;
    path.unshift(Array.prototype.indexOf.call(parent.childNodes, node));
    node = parent;
  }
  return path;
}

/** The enveloped-signature transform (XML-DSig §6.6.4): the node-set without the Signature element, on a copy. */
function withoutSignature(node: Document | Element, signature: Element): Document | Element {
  const doc = node.nodeType === 9 ? (node as Document) : node.ownerDocument!;
  const toNode = pathFrom(doc, node);
  const toSignature = pathFrom(doc, signature);
  if (!toNode || !toSignature) return node;
  const copy = doc.cloneNode(true) as Document;
  const at = (path: number[]) => path.reduce<Node>((n, i) => n.childNodes[i] as Node, copy);
  const target = at(toNode) as Document | Element;
  const removed = at(toSignature);
  removed.parentNode?.removeChild(removed);
  return target;
}

export function describeC14n(uri: string): string {
  const o = C14N_ALGORITHMS[uri];
  if (!o) return uri;
  return `${o.exclusive ? 'Exclusive C14N 1.0' : 'C14N 1.0'}${o.withComments ? ' with comments' : ''}`;
}

function splitPartUri(uri: string): { name: string; contentType: string | null } {
  const q = uri.indexOf('?');
  const path = normalisePartName(q < 0 ? uri : uri.slice(0, q));
  const query = q < 0 ? '' : uri.slice(q + 1);
  const match = /(?:^|&)ContentType=([^&]*)/.exec(query);
  let contentType: string | null = null;
  if (match) {
    try {
      contentType = decodeURIComponent(match[1]);
    } catch {
      contentType = match[1];
    }
  }
  return { name: path, contentType };
}

function toNodes(data: Data): { node: Document | Element; comments: boolean } {
  if (data.kind === 'nodes') return data;
  return { node: parseXml(decodeXmlBytes(data.bytes)), comments: true };
}

function toOctets(data: Data): Uint8Array {
  if (data.kind === 'octets') return data.bytes;
  return Buffer.from(canonicalize(data.node, { exclusive: false, withComments: false }), 'utf8');
}

function applyTransform(transform: Element, data: Data, check: ReferenceCheck, ctx: ReferenceContext): Data {
  const algorithm = transform.getAttribute('Algorithm') ?? '';
  if (algorithm === ENVELOPED_SIGNATURE && ctx.signature) {
    const { node, comments } = toNodes(data);
    return { kind: 'nodes', node: withoutSignature(node, ctx.signature), comments };
  }
  const c14n = C14N_ALGORITHMS[algorithm];
  if (c14n) {
    const { node, comments } = toNodes(data);
    const prefixes = firstChild(transform, EXC_C14N_NS, 'InclusiveNamespaces')?.getAttribute('PrefixList');
    const text = canonicalize(node, { ...c14n, withComments: c14n.withComments && comments, inclusivePrefixes: prefixes?.split(/\s+/).filter(Boolean) });
    return { kind: 'octets', bytes: Buffer.from(text, 'utf8') };
  }
  if (algorithm === RELATIONSHIP_TRANSFORM) {
    const { node } = toNodes(data);
    if (node.nodeType !== 9) throw new Error('the RelationshipTransform applies to a whole relationships part');
    const result = applyRelationshipTransform(node as Document, relationshipSelection(transform));
    if (check.part) check.part.relationships = result.selectedIds;
    return { kind: 'nodes', node: result.doc, comments: false };
  }
  check.unsupported = `transform ${algorithm}`;
  throw new Error(`unsupported transform ${algorithm}`);
}

function dereference(uri: string, ctx: ReferenceContext, check: ReferenceCheck): Data | undefined {
  // The whole document without comments (XML-DSig §4.4.3.2).
  if (uri === '' && ctx.doc) return { kind: 'nodes', node: ctx.doc, comments: false };
  if (uri.startsWith('#')) {
    const matches = ctx.ids.get(uri.slice(1)) ?? [];
    if (matches.length !== 1) {
      check.error = matches.length ? `the reference ${uri} is ambiguous (${matches.length} elements carry that Id)` : `the reference ${uri} points to nothing`;
      return undefined;
    }
    check.element = matches[0];
    // A bare-name XPointer selects the element subtree without comments.
    return { kind: 'nodes', node: matches[0], comments: false };
  }
  if (!uri.startsWith('/') || !ctx.pkg) {
    check.error = `the reference "${uri}" is neither a package part nor an element of the signature`;
    return undefined;
  }
  const { name, contentType } = splitPartUri(uri);
  check.part = { name, contentType, relationships: null };
  const bytes = ctx.pkg.bytes(name);
  if (!bytes) {
    check.error = `the signed part ${name} is missing from the package`;
    return undefined;
  }
  const actualType = ctx.pkg.contentType(name);
  if (contentType !== null && actualType?.toLowerCase() !== contentType.toLowerCase()) {
    check.error = `the content type of ${name} changed since signing (signed "${contentType}", now "${actualType ?? 'none'}")`;
    return undefined;
  }
  return { kind: 'octets', bytes };
}

/** Dereferences one ds:Reference, runs its transforms and compares the digest. Never throws. */
export function checkReference(reference: Element, ctx: ReferenceContext): ReferenceCheck {
  const uri = reference.getAttribute('URI') ?? '';
  const transforms = childElements(firstChild(reference, NS.dsig, 'Transforms') ?? reference, NS.dsig, 'Transform');
  const digestUri = firstChild(reference, NS.dsig, 'DigestMethod')?.getAttribute('Algorithm') ?? '';
  const check: ReferenceCheck = {
    uri,
    type: reference.getAttribute('Type') || null,
    hash: DIGEST_METHODS[digestUri] ?? null,
    transforms: transforms.map((t) => transformName(t.getAttribute('Algorithm') ?? '')),
    intact: false,
  };
  if (!check.hash) {
    check.unsupported = `digest method ${digestUri || '(none)'}`;
    check.error = `unsupported digest method ${digestUri || '(none)'}`;
  }
  let data = dereference(uri, ctx, check);
  if (!data || !check.hash) return check;
  try {
    for (const transform of transforms) data = applyTransform(transform, data, check, ctx);
    const digest = createHash(check.hash).update(toOctets(data)).digest();
    check.intact = digest.equals(decodeBase64(textOf(firstChild(reference, NS.dsig, 'DigestValue'))));
    if (!check.intact) check.error = `${check.part ? `the part ${check.part.name}` : uri === '' ? 'the signed document' : `the signed element ${uri}`} does not match its signed digest`;
  } catch (err) {
    check.error = `${uri} cannot be processed: ${err instanceof Error ? err.message : String(err)}`;
  }
  return check;
}
