/**
 * A minimal DER encoder/decoder for the few ASN.1 structures the signer writes and reads
 * (CMS SignedData, ESS attributes, RFC 3161 requests/responses). Writing DER by hand keeps
 * the encoding exact (DER-sorted SET OF, no BER indefinite lengths) and the hot path free of
 * WebCrypto round trips.
 */
export type Der = Buffer;

function encodeLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

export function tlv(tag: number, content: Buffer): Der {
  return Buffer.concat([Buffer.from([tag]), encodeLength(content.length), content]);
}

export const sequence = (...items: Der[]): Der => tlv(0x30, Buffer.concat(items));

/** SET OF in DER: elements sorted by their encodings (X.690 §11.6). */
export function sortedSetContent(items: Der[]): Buffer {
  return Buffer.concat([...items].sort(Buffer.compare));
}
export const set = (...items: Der[]): Der => tlv(0x31, sortedSetContent(items));

/** Context-specific tag [n]; constructed unless told otherwise. */
export const contextTag = (n: number, content: Buffer, constructed = true): Der =>
  tlv((constructed ? 0xa0 : 0x80) | n, content);

export const octetString = (bytes: Buffer | Uint8Array): Der => tlv(0x04, Buffer.from(bytes));
export const nullValue = (): Der => Buffer.from([0x05, 0x00]);
export const booleanValue = (v: boolean): Der => Buffer.from([0x01, 0x01, v ? 0xff : 0x00]);

export function integer(value: number | bigint | Buffer): Der {
  let bytes: Buffer;
  if (Buffer.isBuffer(value)) {
    bytes = value;
    let start = 0;
    while (start < bytes.length - 1 && bytes[start] === 0 && bytes[start + 1] < 0x80) start++;
    bytes = bytes.subarray(start);
    if (bytes.length === 0) bytes = Buffer.from([0]);
    if (bytes[0] >= 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  } else {
    let hex = BigInt(value).toString(16);
    if (hex.length % 2) hex = '0' + hex;
    bytes = Buffer.from(hex, 'hex');
    if (bytes[0] >= 0x80) bytes = Buffer.concat([Buffer.from([0]), bytes]);
  }
  return tlv(0x02, bytes);
}

export function objectIdentifier(oid: string): Der {
  const parts = oid.split('.').map((p) => BigInt(p));
  const out: number[] = [Number(parts[0] * 40n + parts[1])];
  for (const part of parts.slice(2)) {
    const chunk: number[] = [];
    let n = part;
    do {
      chunk.unshift(Number(n & 0x7fn));
      n >>= 7n;
    } while (n > 0n);
    for (let i = 0; i < chunk.length - 1; i++) chunk[i] |= 0x80;
    out.push(...chunk);
  }
  return tlv(0x06, Buffer.from(out));
}

/** One decoded TLV: `raw` is the whole encoding, `content` the value bytes. */
export interface DerNode {
  tag: number;
  raw: Buffer;
  content: Buffer;
  constructed: boolean;
}

export function readNode(buf: Buffer, offset = 0): DerNode {
  if (offset + 2 > buf.length) throw new RangeError('DER: truncated header');
  const tag = buf[offset];
  if ((tag & 0x1f) === 0x1f) throw new RangeError('DER: high tag numbers are not supported');
  let length = buf[offset + 1];
  let header = 2;
  if (length === 0x80) throw new RangeError('DER: indefinite length');
  if (length > 0x80) {
    const count = length & 0x7f;
    if (count > 4 || offset + 2 + count > buf.length) throw new RangeError('DER: bad length');
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + buf[offset + 2 + i];
    header += count;
  }
  const end = offset + header + length;
  if (end > buf.length) throw new RangeError('DER: truncated value');
  return { tag, raw: buf.subarray(offset, end), content: buf.subarray(offset + header, end), constructed: (tag & 0x20) !== 0 };
}

export function children(node: DerNode): DerNode[] {
  const out: DerNode[] = [];
  for (let offset = 0; offset < node.content.length; ) {
    const child = readNode(node.content, offset);
    out.push(child);
    offset += child.raw.length;
  }
  return out;
}

export function decodeObjectIdentifier(node: DerNode): string {
  const bytes = node.content;
  const parts: bigint[] = [];
  let value = 0n;
  for (const byte of bytes) {
    value = (value << 7n) | BigInt(byte & 0x7f);
    if ((byte & 0x80) === 0) {
      parts.push(value);
      value = 0n;
    }
  }
  const first = parts.shift() ?? 0n;
  const head = first < 80n ? [first / 40n, first % 40n] : [2n, first - 80n];
  return [...head, ...parts].join('.');
}

export const decodeInteger = (node: DerNode): bigint =>
  node.content.length === 0 ? 0n : BigInt('0x' + node.content.toString('hex')) -
    ((node.content[0] & 0x80) ? 1n << BigInt(node.content.length * 8) : 0n);
