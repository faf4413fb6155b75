import PizZip from 'pizzip';
import type { Document } from '@xmldom/xmldom';
import { assertDocx } from '../../../inputs/zip.js';
import { NS, childElements, decodeXmlBytes, parseXml } from './xml.js';

export const REL_SIGNATURE_ORIGIN = 'http://schemas.openxmlformats.org/package/2006/relationships/digital-signature/origin';
export const REL_SIGNATURE = 'http://schemas.openxmlformats.org/package/2006/relationships/digital-signature/signature';
export const CT_XML_SIGNATURE = 'application/vnd.openxmlformats-package.digital-signature-xmlsignature+xml';

export interface Relationship {
  id: string;
  type: string;
  target: string;
  external: boolean;
}

/**
 * An OPC package (the ZIP of a DOCX) as named parts. Part names are absolute ("/word/document.xml")
 * and compared case-insensitively, as OPC requires.
 */
export class OpcPackage {
  private readonly byKey = new Map<string, string>();
  private readonly defaults = new Map<string, string>();
  private readonly overrides = new Map<string, string>();

  private constructor(private readonly zip: PizZip) {
    for (const entry of Object.values(zip.files)) {
      if (!entry.dir) this.byKey.set(partKey('/' + entry.name), entry.name);
    }
    this.readContentTypes();
  }

  /** Throws AppError INVALID_FILE_FORMAT / ENCRYPTED_DOCUMENT / zip-bomb refusals from assertDocx. */
  static open(data: Uint8Array): OpcPackage {
    const buf = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    assertDocx(buf);
    return new OpcPackage(new PizZip(buf));
  }

  /** Every part name in the package except the [Content_Types].xml stream (not a part). */
  partNames(): string[] {
    return [...this.byKey.values()].filter((n) => n !== '[Content_Types].xml').map((n) => '/' + n);
  }

  has(partName: string): boolean {
    return this.byKey.has(partKey(partName));
  }

  bytes(partName: string): Uint8Array | undefined {
    const name = this.byKey.get(partKey(partName));
    return name === undefined ? undefined : this.zip.file(name)!.asUint8Array();
  }

  /** The name as stored (canonical spelling) of a part given in any case/escaping. */
  canonicalName(partName: string): string | undefined {
    const name = this.byKey.get(partKey(partName));
    return name === undefined ? undefined : '/' + name;
  }

  contentType(partName: string): string | undefined {
    const key = partKey(partName);
    const override = this.overrides.get(key);
    if (override) return override;
    const ext = /\.([^./]+)$/.exec(key)?.[1];
    return ext ? this.defaults.get(ext) : undefined;
  }

  /** Relationships whose source is `sourcePart` ('/' for the package), targets resolved to part names. */
  relationships(sourcePart: string): Relationship[] {
    const relsPart = relationshipsPartOf(sourcePart);
    const bytes = this.bytes(relsPart);
    if (!bytes) return [];
    let doc: Document;
    try {
      doc = parseXml(decodeXmlBytes(bytes));
    } catch {
      return [];
    }
    const root = doc.documentElement;
    if (!root) return [];
    return childElements(root, NS.relationships, 'Relationship').map((rel) => {
      const external = rel.getAttribute('TargetMode') === 'External';
      const target = rel.getAttribute('Target') ?? '';
      return { id: rel.getAttribute('Id') ?? '', type: rel.getAttribute('Type') ?? '', target: external ? target : resolvePartName(sourcePart, target), external };
    });
  }

  private readContentTypes(): void {
    const bytes = this.bytes('/[Content_Types].xml');
    if (!bytes) return;
    let doc: Document;
    try {
      doc = parseXml(decodeXmlBytes(bytes));
    } catch {
      return;
    }
    const root = doc.documentElement;
    if (!root) return;
    for (const d of childElements(root, NS.contentTypes, 'Default')) {
      this.defaults.set((d.getAttribute('Extension') ?? '').toLowerCase(), d.getAttribute('ContentType') ?? '');
    }
    for (const o of childElements(root, NS.contentTypes, 'Override')) {
      this.overrides.set(partKey(o.getAttribute('PartName') ?? ''), o.getAttribute('ContentType') ?? '');
    }
  }
}

function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export const partKey = (partName: string): string => safeDecode(partName.startsWith('/') ? partName : '/' + partName).toLowerCase();

/** "/word/document.xml" → "/word/_rels/document.xml.rels"; "/" → "/_rels/.rels". */
export function relationshipsPartOf(sourcePart: string): string {
  if (sourcePart === '/') return '/_rels/.rels';
  const slash = sourcePart.lastIndexOf('/');
  return `${sourcePart.slice(0, slash)}/_rels/${sourcePart.slice(slash + 1)}.rels`;
}

export function resolvePartName(sourcePart: string, target: string): string {
  try {
    return safeDecode(new URL(target, `http://package${sourcePart}`).pathname);
  } catch {
    return target;
  }
}
