import type { Document } from '@xmldom/xmldom';
import { invalidFile } from '../../errors/app-error.js';
import { crc32 } from 'node:zlib';
import { assertDocx, type ZipEntry } from '../../inputs/zip.js';
import { writeZip, type CompressedPart, type ZipPart } from '../model/zip-writer.js';
import { CONTENT_TYPES_PART, NS, PACKAGE_SOURCE, XML_DECLARATION } from './constants.js';
import { childElements, parseXmlPart, serializeXml } from './xml.js';

/** One relationship of a source part, as its .rels part states it. */
export interface Relationship {
  id: string;
  type: string;
  /** The Target attribute as written: a URI relative to the source part, or an external URI. */
  target: string;
  /** The TargetMode attribute as written; absent means Internal. */
  targetMode?: string;
  external: boolean;
  /** Internal relationships: the part name the target resolves to, e.g. "/word/media/image1.png". */
  partName?: string;
}

export type NewRelationship = Pick<Relationship, 'id' | 'type' | 'target' | 'targetMode'>;

export interface OpenOptions {
  /**
   * A verifier reports on a damaged package rather than refusing it: with `tolerant`, an
   * unreadable .rels part has no relationships and an unreadable [Content_Types].xml declares
   * nothing. Without it (for code that rewrites the package) both throw the 422 AppError.
   */
  tolerant?: boolean;
}

interface StoredPart {
  /** ZIP item name, as stored (the part name without its leading slash). */
  name: string;
  /** Where the part is in the source archive; absent for parts added since. */
  entry?: ZipEntry;
  bytes: Uint8Array;
  /** Replaced or added since the package was opened (written anew; untouched parts are copied as stored). */
  changed?: boolean;
}

interface ContentTypes {
  doc?: Document;
  defaults: Map<string, string>;
  overrides: Map<string, string>;
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** OPC part names are equivalent when equal ignoring ASCII case; ZIP item names may spell them unescaped. */
export const partKey = (partName: string): string => safeDecode(partName.startsWith('/') ? partName : '/' + partName).toLowerCase();

/** "/word/document.xml" → "/word/_rels/document.xml.rels"; "/" (the package) → "/_rels/.rels". */
export function relationshipsPartOf(sourcePart: string): string {
  if (sourcePart === PACKAGE_SOURCE) return '/_rels/.rels';
  const slash = sourcePart.lastIndexOf('/');
  return `${sourcePart.slice(0, slash)}/_rels/${sourcePart.slice(slash + 1)}.rels`;
}

/** The source part of a relationships part ("/" = the package), or undefined when `partName` is not one. */
export function sourceOfRelationshipsPart(partName: string): string | undefined {
  const match = /^(.*\/)_rels\/([^/]*)\.rels$/i.exec(partName);
  return match ? match[1] + match[2] : undefined;
}

/** Resolves an internal relationship target against its source part, giving a part name. */
export function resolvePartName(sourcePart: string, target: string): string {
  try {
    return safeDecode(new URL(target, `http://package${sourcePart}`).pathname);
  } catch {
    return target;
  }
}

/** The Target to write for a relationship from `sourcePart` to `partName`: relative when it lies in the source's folder. */
export function relativeTarget(sourcePart: string, partName: string): string {
  const folder = sourcePart.slice(0, sourcePart.lastIndexOf('/') + 1);
  return partName.startsWith(folder) ? partName.slice(folder.length) : partName;
}

/** The part name as a URI path (OPC part names are ASCII with percent-encoding). */
export function partUri(partName: string): string {
  return partName
    .split('/')
    .map((segment) => segment.replace(/%(?![0-9A-Fa-f]{2})|[^A-Za-z0-9\-._~!$&'()*+,;=:@%]/gu, (c) => encodeURIComponent(c)))
    .join('/');
}

/** The first `${prefix}N` (N = 1, 2, …) no relationship uses as its Id. */
export function freeRelationshipId(relationships: Relationship[], prefix: string): string {
  const ids = new Set(relationships.map((r) => r.id));
  for (let n = 1; ; n++) if (!ids.has(`${prefix}${n}`)) return `${prefix}${n}`;
}

const EMPTY_RELATIONSHIPS = `${XML_DECLARATION}<Relationships xmlns="${NS.relationships}"/>`;

/**
 * An OPC package (the ZIP of a DOCX) as named parts, read and written in memory. Part names are
 * absolute ("/word/document.xml") and compared case-insensitively, as OPC requires; parts keep
 * their ZIP order, and added parts go at the end.
 */
export class OpcPackage {
  private readonly parts = new Map<string, StoredPart>();
  private contentTypesCache?: ContentTypes;

  private constructor(
    private readonly source: Buffer,
    entries: ZipEntry[],
    private readonly tolerant: boolean,
  ) {
    for (const entry of entries) {
      const data = entry.data!;
      if (!entry.name.endsWith('/')) this.parts.set(partKey(entry.name), { name: entry.name, entry, bytes: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) });
    }
  }

  /**
   * Throws AppError INVALID_FILE_FORMAT / ENCRYPTED_DOCUMENT / zip-bomb refusals from assertDocx. The
   * guard inflates every entry to measure it; the package reads parts from what it measured, so each
   * part is inflated once, natively.
   */
  static open(data: Uint8Array, options: OpenOptions = {}): OpcPackage {
    const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    // Every part is kept as the guard inflated it: the scrub reads them all on the way to LibreOffice,
    // and a part read on demand would be cached just the same (the guard bounds the total).
    const entries = assertDocx(buf, undefined, { keepData: true });
    return new OpcPackage(buf, entries, options.tolerant ?? false);
  }

  /** Every part name in package order, except the [Content_Types].xml stream (not a part). */
  partNames(): string[] {
    const contentTypes = partKey(CONTENT_TYPES_PART);
    return [...this.parts].filter(([key]) => key !== contentTypes).map(([, part]) => '/' + part.name);
  }

  has(partName: string): boolean {
    return this.parts.has(partKey(partName));
  }

  /** The name as stored (canonical spelling) of a part given in any case/escaping. */
  canonicalName(partName: string): string | undefined {
    const part = this.parts.get(partKey(partName));
    return part && '/' + part.name;
  }

  bytes(partName: string): Uint8Array | undefined {
    return this.parts.get(partKey(partName))?.bytes;
  }

  /** Throws AppError INVALID_FILE_FORMAT when the part is missing. */
  text(partName: string): string {
    const bytes = this.bytes(partName);
    if (!bytes) throw invalidFile(`The DOCX has no ${partName.replace(/^\//, '')} part.`);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  }

  /** Throws AppError INVALID_FILE_FORMAT when the part is missing, 422 UNPROCESSABLE_DOCUMENT when it is not well-formed. */
  xml(partName: string): Document {
    const bytes = this.bytes(partName);
    if (!bytes) throw invalidFile(`The DOCX has no ${partName.replace(/^\//, '')} part.`);
    return parseXmlPart(bytes, partName);
  }

  /** Adds a part, or replaces one (keeping its stored name and place). */
  setBytes(partName: string, bytes: Uint8Array): void {
    const key = partKey(partName);
    const existing = this.parts.get(key);
    if (existing) Object.assign(existing, { bytes, changed: true });
    else this.parts.set(key, { name: partName.replace(/^\//, ''), bytes, changed: true });
    if (key === partKey(CONTENT_TYPES_PART)) this.contentTypesCache = undefined;
  }

  setText(partName: string, text: string): void {
    this.setBytes(partName, new Uint8Array(Buffer.from(text, 'utf8')));
  }

  setXml(partName: string, doc: Document): void {
    this.setText(partName, serializeXml(doc));
  }

  /** Content type of a part: its Override, else the Default for its extension (both case-insensitive). */
  contentType(partName: string): string | undefined {
    const types = this.contentTypes();
    const key = partKey(partName);
    const override = types.overrides.get(key);
    if (override !== undefined) return override;
    const extension = /\.([^./]+)$/.exec(key)?.[1];
    return extension ? types.defaults.get(extension) : undefined;
  }

  /**
   * Declares `defaults` by extension (an extension already declared is kept as it is) and
   * `overrides` by part name (replacing an existing Override of the same part).
   */
  declareContentTypes(defaults: Record<string, string>, overrides: Record<string, string>): void {
    const doc = this.xml(CONTENT_TYPES_PART);
    const root = doc.documentElement!;
    const existingDefaults = new Set(childElements(root, NS.contentTypes, 'Default').map((d) => (d.getAttribute('Extension') ?? '').toLowerCase()));
    for (const [extension, type] of Object.entries(defaults)) {
      if (existingDefaults.has(extension.toLowerCase())) continue;
      const node = doc.createElementNS(NS.contentTypes, 'Default');
      node.setAttribute('Extension', extension);
      node.setAttribute('ContentType', type);
      root.appendChild(node);
    }
    const existingOverrides = childElements(root, NS.contentTypes, 'Override');
    for (const [partName, type] of Object.entries(overrides)) {
      const existing = existingOverrides.find((o) => partKey(o.getAttribute('PartName') ?? '') === partKey(partName));
      if (existing) {
        existing.setAttribute('ContentType', type);
        continue;
      }
      const node = doc.createElementNS(NS.contentTypes, 'Override');
      node.setAttribute('PartName', partName);
      node.setAttribute('ContentType', type);
      root.appendChild(node);
    }
    this.setXml(CONTENT_TYPES_PART, doc);
  }

  /** Relationships whose source is `sourcePart` ("/" for the package), in document order; none when it has no .rels part. */
  relationships(sourcePart: string): Relationship[] {
    const relsPart = relationshipsPartOf(sourcePart);
    const bytes = this.bytes(relsPart);
    if (!bytes) return [];
    const root = this.readXml(relsPart, bytes)?.documentElement;
    if (!root) return [];
    return childElements(root, NS.relationships, 'Relationship').map((rel) => {
      const target = rel.getAttribute('Target') ?? '';
      const targetMode = rel.getAttribute('TargetMode') ?? undefined;
      const external = targetMode === 'External';
      return {
        id: rel.getAttribute('Id') ?? '',
        type: rel.getAttribute('Type') ?? '',
        target,
        ...(targetMode !== undefined && { targetMode }),
        external,
        ...(!external && { partName: resolvePartName(sourcePart, target) }),
      };
    });
  }

  /** Appends a relationship to the .rels part of `sourcePart`, creating that part when needed. */
  addRelationship(sourcePart: string, relationship: NewRelationship): void {
    const relsPart = this.canonicalName(relationshipsPartOf(sourcePart)) ?? relationshipsPartOf(sourcePart);
    const doc = this.has(relsPart) ? this.xml(relsPart) : parseXmlPart(EMPTY_RELATIONSHIPS, relsPart);
    const node = doc.createElementNS(NS.relationships, 'Relationship');
    node.setAttribute('Id', relationship.id);
    node.setAttribute('Type', relationship.type);
    node.setAttribute('Target', relationship.target);
    if (relationship.targetMode) node.setAttribute('TargetMode', relationship.targetMode);
    doc.documentElement!.appendChild(node);
    this.setXml(relsPart, doc);
  }

  /**
   * Deflated ZIP (native zlib); part order is kept, with [Content_Types].xml first as OPC readers
   * expect. Parts never replaced are copied as they were stored, with the CRC of their real bytes
   * (a crafted header's CRC is not trusted).
   */
  write(): Buffer {
    const contentTypes = this.canonicalName(CONTENT_TYPES_PART);
    const names = [...(contentTypes ? [contentTypes] : []), ...this.partNames()];
    return writeZip(names.map((partName) => this.zipPart(this.parts.get(partKey(partName))!)));
  }

  private zipPart(part: StoredPart): ZipPart | CompressedPart {
    const { entry, bytes } = part;
    if (entry && !part.changed) {
      return {
        name: Buffer.from(part.name, 'utf8'),
        method: entry.method,
        checksum: crc32(bytes) >>> 0,
        size: entry.uncompressedSize,
        payload: this.source.subarray(entry.dataOffset, entry.dataOffset + entry.compressedSize),
      };
    }
    return { name: part.name, data: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) };
  }

  private readXml(partName: string, bytes: Uint8Array): Document | undefined {
    try {
      return parseXmlPart(bytes, partName);
    } catch (err) {
      if (this.tolerant) return undefined;
      throw err;
    }
  }

  private contentTypes(): ContentTypes {
    if (this.contentTypesCache) return this.contentTypesCache;
    const types: ContentTypes = { defaults: new Map(), overrides: new Map() };
    const bytes = this.bytes(CONTENT_TYPES_PART);
    if (!bytes && !this.tolerant) throw invalidFile('The DOCX has no [Content_Types].xml part.');
    const root = bytes && this.readXml(CONTENT_TYPES_PART, bytes)?.documentElement;
    if (root) {
      // A part or extension declared twice breaks OPC; the first declaration wins, as a document-order lookup would.
      for (const d of childElements(root, NS.contentTypes, 'Default')) {
        const extension = (d.getAttribute('Extension') ?? '').toLowerCase();
        if (!types.defaults.has(extension)) types.defaults.set(extension, d.getAttribute('ContentType') ?? '');
      }
      for (const o of childElements(root, NS.contentTypes, 'Override')) {
        const key = partKey(o.getAttribute('PartName') ?? '');
        if (!types.overrides.has(key)) types.overrides.set(key, o.getAttribute('ContentType') ?? '');
      }
    }
    this.contentTypesCache = types;
    return types;
  }
}
