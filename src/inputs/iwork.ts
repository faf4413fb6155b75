import { constants, gunzipSync } from 'node:zlib';
import { peekZip } from '../documents/ooxml/zip/read.js';

/**
 * Which Apple iWork application wrote a ZIP package, from its content (LibreOffice reads Pages
 * through libetonyek; docproc takes Pages only). Two generations:
 * - iWork '09 (Pages 4): `index.xml` or `index.xml.gz` at the root, an XML document whose root
 *   element is in Pages' namespace (`http://developer.apple.com/namespaces/sl`); Numbers '09 uses
 *   `.../ls`, Keynote '09 `index.apxl`.
 * - iWork 2013 and later (Pages 5+): `Index/Document.iwa`, or `Index.zip` holding it (a bundle
 *   zipped whole, at the root or in one folder). An .iwa file is a run of chunks (a 0 byte, a 24-bit
 *   length, Snappy-compressed data); the first chunk starts with the document's archive header, a
 *   protobuf whose first message type is 10000 for Pages (TP.DocumentArchive) and 1 for Numbers and
 *   Keynote. Only the first 64 bytes of that chunk are decompressed.
 */
export type IworkKind = 'pages' | 'numbers' | 'keynote' | 'unknown';

const MAX_INDEX_BYTES = 8 * 1024 * 1024;
const HEAD_BYTES = 64;
const PAGES_NAMESPACE = 'http://developer.apple.com/namespaces/sl';
const NUMBERS_NAMESPACE = 'http://developer.apple.com/namespaces/ls';
const PAGES_DOCUMENT_ARCHIVE = 10000;

/** The first `want` bytes a raw Snappy block decompresses to (fewer when it is shorter); undefined when damaged. */
export function snappyHead(src: Uint8Array, want: number): Buffer | undefined {
  let p = 0;
  let total = 0;
  for (let shift = 0; shift < 35; shift += 7) {
    if (p >= src.length) return undefined;
    const b = src[p++]!;
    total += (b & 0x7f) * 2 ** shift;
    if (!(b & 0x80)) break;
  }
  const limit = Math.min(want, total);
  const out: number[] = [];
  while (out.length < limit) {
    if (p >= src.length) return undefined;
    const tag = src[p++]!;
    const kind = tag & 3;
    if (kind === 0) {
      let n = tag >> 2;
      if (n >= 60) {
        const bytes = n - 59;
        n = 0;
        for (let i = 0; i < bytes; i++) n += (src[p++] ?? 0) * 2 ** (8 * i);
      }
      n += 1;
      for (let i = 0; i < n && out.length < limit; i++) {
        if (p + i >= src.length) return undefined;
        out.push(src[p + i]!);
      }
      p += n;
      continue;
    }
    let n: number;
    let offset: number;
    if (kind === 1) {
      n = ((tag >> 2) & 7) + 4;
      offset = ((tag >> 5) << 8) | (src[p++] ?? 0);
    } else if (kind === 2) {
      n = (tag >> 2) + 1;
      offset = (src[p] ?? 0) | ((src[p + 1] ?? 0) << 8);
      p += 2;
    } else {
      n = (tag >> 2) + 1;
      offset = ((src[p] ?? 0) | ((src[p + 1] ?? 0) << 8) | ((src[p + 2] ?? 0) << 16)) + (src[p + 3] ?? 0) * 2 ** 24;
      p += 4;
    }
    if (offset === 0 || offset > out.length) return undefined;
    const start = out.length - offset;
    for (let i = 0; i < n && out.length < limit; i++) out.push(out[start + i]!);
  }
  return Buffer.from(out);
}

function varint(data: Buffer, at: number): [number, number] | undefined {
  let value = 0;
  for (let shift = 0; shift < 35 && at < data.length; shift += 7) {
    const b = data[at++]!;
    value += (b & 0x7f) * 2 ** shift;
    if (!(b & 0x80)) return [value, at];
  }
  return undefined;
}

/** The type of the first message of the first archive in an .iwa file (protobuf ArchiveInfo.message_infos[0].type). */
export function firstMessageType(iwa: Buffer): number | undefined {
  if (iwa.length < 4 || iwa[0] !== 0) return undefined;
  const length = iwa.readUIntLE(1, 3);
  const head = snappyHead(iwa.subarray(4, 4 + length), HEAD_BYTES);
  if (!head) return undefined;
  const header = varint(head, 0);
  if (!header) return undefined;
  let at = header[1];
  const end = Math.min(head.length, at + header[0]);
  while (at < end) {
    const key = varint(head, at);
    if (!key) return undefined;
    at = key[1];
    const [field, wire] = [Math.floor(key[0] / 8), key[0] % 8];
    if (wire === 0) {
      const skipped = varint(head, at);
      if (!skipped) return undefined;
      at = skipped[1];
    } else if (wire === 2) {
      const size = varint(head, at);
      if (!size) return undefined;
      at = size[1];
      // message_infos (field 2): its field 1 (a varint) is the type.
      if (field === 2 && head[at] === 0x08) return varint(head, at + 1)?.[0];
      at += size[0];
    } else return undefined;
  }
  return undefined;
}

function xmlKind(xml: string): IworkKind {
  const root = /<([A-Za-z_][\w.-]*:)?document\b[^<>]*>/.exec(xml.slice(0, 64 * 1024))?.[0] ?? '';
  if (root.includes(`"${PAGES_NAMESPACE}"`) && /^<sl:document\b/.test(root)) return 'pages';
  if (root.includes(`"${NUMBERS_NAMESPACE}"`)) return 'numbers';
  return 'unknown';
}

function iwaKind(iwa: Buffer | undefined): IworkKind {
  if (!iwa) return 'unknown';
  const type = firstMessageType(iwa);
  if (type === PAGES_DOCUMENT_ARCHIVE) return 'pages';
  return type === 1 ? 'keynote' : 'unknown';
}

/**
 * The iWork application of a ZIP whose entry names are `names`, or undefined when it is no iWork
 * package. Numbers and Keynote 2013+ share message type 1: both are reported as 'keynote' then
 * ('numbers' only for '09 packages); callers refuse both alike.
 */
export function iworkKind(data: Buffer, names: string[]): IworkKind | undefined {
  if (names.includes('index.apxl') || names.includes('index.apxl.gz')) return 'keynote';
  if (names.includes('index.xml')) return xmlKind(peekZip(data, ['index.xml'], MAX_INDEX_BYTES).entries.get('index.xml')?.toString('utf8') ?? '');
  if (names.includes('index.xml.gz')) {
    const gz = peekZip(data, ['index.xml.gz'], MAX_INDEX_BYTES).entries.get('index.xml.gz');
    if (!gz) return 'unknown';
    try {
      // The start of the XML only: a few KB of the compressed stream, flushed where it stops.
      const head = gunzipSync(gz.subarray(0, 4096), { finishFlush: constants.Z_SYNC_FLUSH, maxOutputLength: 1024 * 1024 });
      return xmlKind(head.toString('utf8'));
    } catch {
      return 'unknown';
    }
  }
  if (names.includes('Index/Document.iwa')) return iwaKind(peekZip(data, ['Index/Document.iwa'], MAX_INDEX_BYTES).entries.get('Index/Document.iwa'));
  const inner = names.find((name) => /^([^/]+\/)?Index\.zip$/.test(name));
  if (inner) {
    const zip = peekZip(data, [inner], MAX_INDEX_BYTES).entries.get(inner);
    if (!zip) return 'unknown';
    try {
      return iwaKind(peekZip(zip, ['Index/Document.iwa'], MAX_INDEX_BYTES).entries.get('Index/Document.iwa'));
    } catch {
      return 'unknown';
    }
  }
  return undefined;
}
