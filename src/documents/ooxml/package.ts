import type { Document } from '@xmldom/xmldom';
import { DomainError, ErrorCode, invalidFile } from '../../errors/domain-error.js';
import { CONTENT_TYPES_PART, NS, XML_DECLARATION } from './constants.js';
import { equivalenceKey, normalisePartName, partNameOf, relationshipsPartOf, resolvePartName } from './part-names.js';
import { childElements, parseXmlPart, serializeXml } from './xml.js';
import { DEFAULT_ZIP_LIMITS, readZip, type ZipEntry, type ZipLimits } from './zip/read.js';
import { writeZip, type CompressedPart, type ZipPart } from './zip/write.js';

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
   * nothing. Without it (for code that rewrites the package) both throw the 422 DomainError.
   */
  tolerant?: boolean;
  limits?: ZipLimits;
  /**
   * The part that must exist besides [Content_Types].xml (default "/word/document.xml": a DOCX);
   * null for any OOXML package whose kind was told from its main content type (detect-format.ts).
   */
  mainPart?: string | null;
}

interface StoredPart {
  /** ZIP item name, as stored. */
  name: string;
  /** Where the part is in the source archive; absent for parts added since. */
  entry?: ZipEntry;
  bytes: Uint8Array;
  /** Replaced or added since the package was opened (written anew; untouched parts are copied as stored). */
  changed?: boolean;
}

interface ContentTypes {
  defaults: Map<string, string>;
  /** By equivalence key: OPC matches an Override to its part case-insensitively (one part per key, read.ts). */
  overrides: Map<string, string>;
}

const OLE_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
const LOCAL_SIGNATURE = 0x04034b50;

/** Refuses what is not a ZIP package, telling password-protected OOXML (an OLE container) and legacy .doc apart. */
function refuseNonPackage(buf: Buffer): void {
  if (buf.subarray(0, 8).equals(OLE_MAGIC)) {
    if (buf.indexOf(Buffer.from('EncryptionInfo', 'utf16le')) >= 0) {
      throw new DomainError(ErrorCode.ENCRYPTED_DOCUMENT, 'The document is password-protected; remove the password and send it again.');
    }
    throw invalidFile('The file is a legacy binary Word document (.doc); only DOCX is accepted.');
  }
  if (buf.length < 4 || buf.readUInt32LE(0) !== LOCAL_SIGNATURE) {
    throw invalidFile('The file is not a DOCX document (it is not a ZIP package).');
  }
}

/** The first `${prefix}N` (N = 1, 2, …) no relationship uses as its Id. */
export function freeRelationshipId(relationships: Relationship[], prefix: string): string {
  const ids = new Set(relationships.map((r) => r.id));
  for (let n = 1; ; n++) if (!ids.has(`${prefix}${n}`)) return `${prefix}${n}`;
}

const EMPTY_RELATIONSHIPS = `${XML_DECLARATION}<Relationships xmlns="${NS.relationships}"/>`;

/**
 * An OPC package (the ZIP of a DOCX) as named parts, read and written in memory. Part names are
 * absolute ("/word/document.xml") and found exactly (part-names.ts); the ZIP reader has refused
 * packages with equivalent names. Parts keep their ZIP order; added parts go at the end.
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
      const { data } = entry;
      if (!entry.name.endsWith('/')) this.parts.set(partNameOf(entry.name), { name: entry.name, entry, bytes: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) });
    }
  }

  /**
   * Reads a DOCX through the one ZIP reader (zip/read.ts), which inflates every part once, natively,
   * within `limits`. Throws DomainError: 400 INVALID_FILE_FORMAT (not a DOCX, malformed or ambiguous
   * ZIP), 422 INVALID_FILE_FORMAT (zip bomb), 422 ENCRYPTED_DOCUMENT.
   */
  static open(data: Uint8Array, options: OpenOptions = {}): OpcPackage {
    const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    refuseNonPackage(buf);
    const pkg = new OpcPackage(buf, readZip(buf, options.limits ?? DEFAULT_ZIP_LIMITS), options.tolerant ?? false);
    const mainPart = options.mainPart === undefined ? '/word/document.xml' : options.mainPart;
    if (!pkg.has(CONTENT_TYPES_PART) || (mainPart !== null && !pkg.has(mainPart))) {
      throw invalidFile(mainPart === null ? 'The file is a ZIP archive but not an OOXML package ([Content_Types].xml is missing).' : 'The file is a ZIP archive but not a DOCX document (word/document.xml is missing).');
    }
    return pkg;
  }

  /** Every part name in package order, except the [Content_Types].xml stream (not a part). */
  partNames(): string[] {
    return [...this.parts.keys()].filter((name) => name !== CONTENT_TYPES_PART);
  }

  has(partName: string): boolean {
    return this.parts.has(normalisePartName(partName));
  }

  bytes(partName: string): Uint8Array | undefined {
    return this.parts.get(normalisePartName(partName))?.bytes;
  }

  /** Throws DomainError INVALID_FILE_FORMAT when the part is missing. */
  text(partName: string): string {
    const bytes = this.bytes(partName);
    if (!bytes) throw invalidFile(`The DOCX has no ${partName.replace(/^\//, '')} part.`);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  }

  /** Throws DomainError INVALID_FILE_FORMAT when the part is missing, 422 UNPROCESSABLE_DOCUMENT when it is not well-formed. */
  xml(partName: string): Document {
    const bytes = this.bytes(partName);
    if (!bytes) throw invalidFile(`The DOCX has no ${partName.replace(/^\//, '')} part.`);
    return parseXmlPart(bytes, partName);
  }

  /** Adds a part, or replaces one (keeping its stored name and place). Throws (a bug) for a name equivalent to another part's. */
  setBytes(partName: string, bytes: Uint8Array): void {
    const name = normalisePartName(partName);
    const existing = this.parts.get(name);
    if (existing) {
      Object.assign(existing, { bytes, changed: true });
    } else {
      const key = equivalenceKey(name);
      const clash = [...this.parts.keys()].find((other) => equivalenceKey(other) === key);
      if (clash) throw new Error(`OpcPackage: ${name} would be a second name for the part ${clash}`);
      this.parts.set(name, { name: name.slice(1), bytes, changed: true });
    }
    if (name === CONTENT_TYPES_PART) this.contentTypesCache = undefined;
  }

  setText(partName: string, text: string): void {
    this.setBytes(partName, new Uint8Array(Buffer.from(text, 'utf8')));
  }

  setXml(partName: string, doc: Document): void {
    this.setText(partName, serializeXml(doc));
  }

  /** Content type of a part: its Override, else the Default for its extension (both case-insensitive, as OPC says). */
  contentType(partName: string): string | undefined {
    const types = this.contentTypes();
    const key = equivalenceKey(normalisePartName(partName));
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
    const existingDefaults = new Set(childElements(root, NS.contentTypes, 'Default').map((d) => equivalenceKey(d.getAttribute('Extension') ?? '')));
    for (const [extension, type] of Object.entries(defaults)) {
      if (existingDefaults.has(equivalenceKey(extension))) continue;
      const node = doc.createElementNS(NS.contentTypes, 'Default');
      node.setAttribute('Extension', extension);
      node.setAttribute('ContentType', type);
      root.appendChild(node);
    }
    const existingOverrides = childElements(root, NS.contentTypes, 'Override');
    for (const [partName, type] of Object.entries(overrides)) {
      const existing = existingOverrides.find((o) => equivalenceKey(o.getAttribute('PartName') ?? '') === equivalenceKey(partName));
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
    const relsPart = relationshipsPartOf(sourcePart);
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
   * Deflated ZIP through the one writer (zip/write.ts); part order is kept, with
   * [Content_Types].xml first as OPC readers expect. Parts never replaced are copied as they were
   * stored (the reader checked their CRC against their bytes).
   */
  write(): Buffer {
    const contentTypes = this.parts.get(CONTENT_TYPES_PART);
    const parts = [...(contentTypes ? [contentTypes] : []), ...[...this.parts].filter(([name]) => name !== CONTENT_TYPES_PART).map(([, part]) => part)];
    return writeZip(parts.map((part) => this.zipPart(part)));
  }

  private zipPart(part: StoredPart): ZipPart | CompressedPart {
    const { entry, bytes } = part;
    if (entry && !part.changed) {
      return {
        name: Buffer.from(part.name, 'utf8'),
        method: entry.method,
        checksum: entry.crc32,
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
        const extension = equivalenceKey(d.getAttribute('Extension') ?? '');
        if (!types.defaults.has(extension)) types.defaults.set(extension, d.getAttribute('ContentType') ?? '');
      }
      for (const o of childElements(root, NS.contentTypes, 'Override')) {
        const key = equivalenceKey(o.getAttribute('PartName') ?? '');
        if (!types.overrides.has(key)) types.overrides.set(key, o.getAttribute('ContentType') ?? '');
      }
    }
    this.contentTypesCache = types;
    return types;
  }
}
