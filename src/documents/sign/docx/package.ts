import { DOMParser, XMLSerializer, type Document, type Element } from '@xmldom/xmldom';
import PizZip from 'pizzip';
import { invalidFile, unprocessable, ErrorCode } from '../../../errors/app-error.js';
import { writeZip } from '../../model/zip-writer.js';

/** An OPC package (DOCX) held in memory: part bytes by ZIP item name, plus content-type and relationship lookups. */
export const NS_CONTENT_TYPES = 'http://schemas.openxmlformats.org/package/2006/content-types';
export const NS_RELATIONSHIPS = 'http://schemas.openxmlformats.org/package/2006/relationships';
export const RELS_CONTENT_TYPE = 'application/vnd.openxmlformats-package.relationships+xml';

export interface Relationship {
  id: string;
  type: string;
  target: string;
  targetMode?: string;
}

const unreadable = (part: string) =>
  unprocessable(ErrorCode.UNPROCESSABLE_DOCUMENT, `The DOCX part ${part} is not well-formed XML; repair the document (e.g. open and save it in Word) and try again.`);

export function parseXmlPart(text: string, part: string): Document {
  const source = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  try {
    return new DOMParser({
      onError: (level) => {
        if (level !== 'warning') throw new Error('xml');
      },
    }).parseFromString(source, 'application/xml');
  } catch {
    throw unreadable(part);
  }
}

const elements = (parent: Document | Element, namespace: string, localName: string): Element[] =>
  Array.from(parent.getElementsByTagNameNS(namespace, localName) as unknown as ArrayLike<Element>);

export class OpcPackage {
  readonly parts = new Map<string, Uint8Array>();

  private constructor() {}

  static read(input: Buffer): OpcPackage {
    let zip: PizZip;
    try {
      zip = new PizZip(input);
    } catch {
      throw invalidFile('The DOCX is not a readable ZIP package.');
    }
    const pkg = new OpcPackage();
    for (const [name, file] of Object.entries(zip.files)) {
      if (!file.dir) pkg.parts.set(name, file.asUint8Array());
    }
    return pkg;
  }

  has(name: string): boolean {
    return this.parts.has(name);
  }

  text(name: string): string {
    const bytes = this.parts.get(name);
    if (!bytes) throw invalidFile(`The DOCX has no ${name} part.`);
    return Buffer.from(bytes).toString('utf8');
  }

  xml(name: string): Document {
    return parseXmlPart(this.text(name), name);
  }

  setText(name: string, text: string): void {
    this.parts.set(name, new Uint8Array(Buffer.from(text, 'utf8')));
  }

  setXml(name: string, doc: Document): void {
    const text = new XMLSerializer().serializeToString(doc);
    this.setText(name, text.startsWith('<?xml') ? text : `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n${text}`);
  }

  /** Relationships of a .rels part, in document order; none when the part is missing. */
  relationships(relsName: string): Relationship[] {
    if (!this.has(relsName)) return [];
    return elements(this.xml(relsName), NS_RELATIONSHIPS, 'Relationship').map((r) => ({
      id: r.getAttribute('Id') ?? '',
      type: r.getAttribute('Type') ?? '',
      target: r.getAttribute('Target') ?? '',
      targetMode: r.getAttribute('TargetMode') ?? undefined,
    }));
  }

  /** Adds one relationship to a .rels part (creating the part when needed). */
  addRelationship(relsName: string, relationship: Relationship): void {
    const doc = this.has(relsName)
      ? this.xml(relsName)
      : parseXmlPart(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="${NS_RELATIONSHIPS}"/>`, relsName);
    const node = doc.createElementNS(NS_RELATIONSHIPS, 'Relationship');
    node.setAttribute('Id', relationship.id);
    node.setAttribute('Type', relationship.type);
    node.setAttribute('Target', relationship.target);
    if (relationship.targetMode) node.setAttribute('TargetMode', relationship.targetMode);
    doc.documentElement!.appendChild(node);
    this.setXml(relsName, doc);
  }

  /** Content type of a part (Override first, then Default by extension; both case-insensitive). */
  contentType(name: string): string | undefined {
    const types = this.contentTypes();
    const partName = `/${name}`.toLowerCase();
    const override = elements(types, NS_CONTENT_TYPES, 'Override').find((o) => (o.getAttribute('PartName') ?? '').toLowerCase() === partName);
    if (override) return override.getAttribute('ContentType') ?? undefined;
    const extension = name.includes('.') ? name.slice(name.lastIndexOf('.') + 1).toLowerCase() : '';
    const byExtension = elements(types, NS_CONTENT_TYPES, 'Default').find((d) => (d.getAttribute('Extension') ?? '').toLowerCase() === extension);
    return byExtension?.getAttribute('ContentType') ?? undefined;
  }

  /** Declares content types: `defaults` by extension, `overrides` by part name; existing declarations are kept. */
  declareContentTypes(defaults: Record<string, string>, overrides: Record<string, string>): void {
    const doc = this.contentTypes();
    const root = doc.documentElement!;
    const knownExtensions = new Set(elements(doc, NS_CONTENT_TYPES, 'Default').map((d) => (d.getAttribute('Extension') ?? '').toLowerCase()));
    for (const [extension, type] of Object.entries(defaults)) {
      if (knownExtensions.has(extension.toLowerCase())) continue;
      const node = doc.createElementNS(NS_CONTENT_TYPES, 'Default');
      node.setAttribute('Extension', extension);
      node.setAttribute('ContentType', type);
      root.appendChild(node);
    }
    for (const [name, type] of Object.entries(overrides)) {
      const node = doc.createElementNS(NS_CONTENT_TYPES, 'Override');
      node.setAttribute('PartName', `/${name}`);
      node.setAttribute('ContentType', type);
      root.appendChild(node);
    }
    this.cachedContentTypes = undefined;
    this.setXml('[Content_Types].xml', doc);
  }

  private cachedContentTypes?: Document;

  private contentTypes(): Document {
    this.cachedContentTypes ??= this.xml('[Content_Types].xml');
    return this.cachedContentTypes;
  }

  /** Deflated ZIP (native zlib); part order is kept, with [Content_Types].xml first as OPC readers expect. */
  write(): Buffer {
    const names = ['[Content_Types].xml', ...[...this.parts.keys()].filter((n) => n !== '[Content_Types].xml')];
    return writeZip(names.map((name) => {
      const bytes = this.parts.get(name)!;
      return { name, data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
    }));
  }
}

/** The .rels part holding the relationships of `partName` ('' = the package). */
export function relsPartOf(partName: string): string {
  if (partName === '') return '_rels/.rels';
  const slash = partName.lastIndexOf('/');
  return `${partName.slice(0, slash + 1)}_rels/${partName.slice(slash + 1)}.rels`;
}

/** The source part of a .rels part ('' = the package), or undefined when `name` is not a relationship part. */
export function sourceOfRels(name: string): string | undefined {
  const match = /^(.*?)_rels\/([^/]*)\.rels$/.exec(name);
  if (!match) return undefined;
  return match[1] + match[2];
}

/** Resolves an internal relationship target against its source part; ZIP item name without the leading slash. */
export function resolveTarget(sourcePart: string, target: string): string {
  if (target.startsWith('/')) return normalizePath(target.slice(1));
  const base = sourcePart.includes('/') ? sourcePart.slice(0, sourcePart.lastIndexOf('/') + 1) : '';
  return normalizePath(base + target);
}

function normalizePath(path: string): string {
  const out: string[] = [];
  for (const segment of path.split('/')) {
    if (segment === '..') out.pop();
    else if (segment !== '.' && segment !== '') out.push(segment);
  }
  return out.join('/');
}

/** The part name as a URI path (OPC part names are ASCII with percent-encoding). */
export function partUri(name: string): string {
  return '/' + name.split('/').map((segment) => segment.replace(/%(?![0-9A-Fa-f]{2})|[^A-Za-z0-9\-._~!$&'()*+,;=:@%]/gu, (c) => encodeURIComponent(c))).join('/');
}
