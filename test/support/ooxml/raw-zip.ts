import { crc32, deflateRawSync } from 'node:zlib';

/**
 * A ZIP writer for tests that can write every archive the readers might disagree on: data
 * descriptors (with or without their signature), ZIP64 fields and end records, local headers that
 * say something else than the central ones, bytes before, between or after the entries.
 * Independent of src/ (it shares no code with the writer under test).
 */
export interface HeaderFields {
  name: Buffer;
  flags: number;
  method: number;
  crc: number;
  compressedSize: number;
  uncompressedSize: number;
}

export interface RawEntry {
  name: string;
  data: Buffer | string;
  /** 8 (deflate, the default) or 0 (stored). */
  method?: 0 | 8;
  /** Set the UTF-8 name flag (bit 11); default: when the name is not ASCII. */
  utf8?: boolean;
  /** Sizes and CRC after the data (flag bit 3), with the optional signature or without. */
  descriptor?: 'signed' | 'unsigned';
  /** ZIP64 extra fields in both headers (sizes as 0xFFFFFFFF), 8-byte sizes in the descriptor. */
  zip64?: boolean;
  /** Header fields that differ from the truth, in the local or central header only. */
  local?: Partial<HeaderFields>;
  central?: Partial<HeaderFields>;
  /** Extra field bytes for both headers. */
  extra?: Buffer;
  /** Bytes written after this entry's data (and descriptor), before the next entry. */
  gapAfter?: Buffer;
}

export interface RawZipOptions {
  /** Bytes before the first entry (the offsets in the headers do not account for them). */
  prefix?: Buffer;
  /** Bytes between the last entry and the central directory. */
  beforeDirectory?: Buffer;
  comment?: Buffer;
  /** Bytes after the end record (not counted in the comment length). */
  trailer?: Buffer;
  /** Always write a ZIP64 end record and locator. */
  zip64End?: boolean;
}

const u16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(n);
  return b;
};
const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
};
const u64 = (n: number) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64LE(BigInt(n));
  return b;
};

export function rawZip(entries: RawEntry[], options: RawZipOptions = {}): Buffer {
  const chunks: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  const push = (b: Buffer) => {
    chunks.push(b);
    offset += b.length;
  };
  if (options.prefix) push(options.prefix);
  const headerOffset = (at: number) => at - (options.prefix?.length ?? 0);
  for (const entry of entries) {
    const data = Buffer.isBuffer(entry.data) ? entry.data : Buffer.from(entry.data, 'utf8');
    const method = entry.method ?? 8;
    const payload = method === 8 ? deflateRawSync(data) : data;
    const nameBytes = Buffer.from(entry.name, 'utf8');
    const utf8 = entry.utf8 ?? /[^\x00-\x7f]/.test(entry.name);
    const truth: HeaderFields = {
      name: nameBytes,
      flags: (utf8 ? 0x0800 : 0) | (entry.descriptor ? 0x0008 : 0),
      method,
      crc: crc32(data) >>> 0,
      compressedSize: payload.length,
      uncompressedSize: data.length,
    };
    const local = { ...truth, ...entry.local };
    const centralFields = { ...truth, ...entry.central };
    const deferred = entry.descriptor !== undefined;
    const localOffset = offset;

    const zip64Local = entry.zip64 ? Buffer.concat([u16(1), u16(16), u64(deferred ? 0 : local.uncompressedSize), u64(deferred ? 0 : local.compressedSize)]) : Buffer.alloc(0);
    const localExtra = Buffer.concat([zip64Local, entry.extra ?? Buffer.alloc(0)]);
    const sizeField = (n: number) => (entry.zip64 ? 0xffffffff : deferred ? 0 : n);
    push(Buffer.concat([
      u32(0x04034b50), u16(entry.zip64 ? 45 : 20), u16(local.flags), u16(local.method), u16(0), u16(0x21),
      u32(deferred ? 0 : local.crc), u32(sizeField(local.compressedSize)), u32(sizeField(local.uncompressedSize)),
      u16(local.name.length), u16(localExtra.length), local.name, localExtra,
    ]));
    push(payload);
    if (entry.descriptor) {
      const sizes = entry.zip64 ? [u64(local.compressedSize), u64(local.uncompressedSize)] : [u32(local.compressedSize), u32(local.uncompressedSize)];
      push(Buffer.concat([...(entry.descriptor === 'signed' ? [u32(0x08074b50)] : []), u32(local.crc), ...sizes]));
    }
    if (entry.gapAfter) push(entry.gapAfter);

    const zip64Central = entry.zip64
      ? Buffer.concat([u16(1), u16(24), u64(centralFields.uncompressedSize), u64(centralFields.compressedSize), u64(headerOffset(localOffset))])
      : Buffer.alloc(0);
    const centralExtra = Buffer.concat([zip64Central, entry.extra ?? Buffer.alloc(0)]);
    central.push(Buffer.concat([
      u32(0x02014b50), u16(entry.zip64 ? 45 : 20), u16(entry.zip64 ? 45 : 20), u16(centralFields.flags), u16(centralFields.method), u16(0), u16(0x21),
      u32(centralFields.crc),
      u32(entry.zip64 ? 0xffffffff : centralFields.compressedSize), u32(entry.zip64 ? 0xffffffff : centralFields.uncompressedSize),
      u16(centralFields.name.length), u16(centralExtra.length), u16(0), u16(0), u16(0), u32(0),
      u32(entry.zip64 ? 0xffffffff : headerOffset(localOffset)), centralFields.name, centralExtra,
    ]));
  }
  if (options.beforeDirectory) push(options.beforeDirectory);
  const directoryOffset = headerOffset(offset);
  const directory = Buffer.concat(central);
  push(directory);
  const comment = options.comment ?? Buffer.alloc(0);
  if (options.zip64End) {
    const recordOffset = headerOffset(offset);
    push(Buffer.concat([u32(0x06064b50), u64(44), u16(45), u16(45), u32(0), u32(0), u64(entries.length), u64(entries.length), u64(directory.length), u64(directoryOffset)]));
    push(Buffer.concat([u32(0x07064b50), u32(0), u64(recordOffset), u32(1)]));
  }
  const count = options.zip64End ? 0xffff : entries.length;
  push(Buffer.concat([
    u32(0x06054b50), u16(0), u16(0), u16(count), u16(count),
    u32(options.zip64End ? 0xffffffff : directory.length), u32(options.zip64End ? 0xffffffff : directoryOffset),
    u16(comment.length), comment,
  ]));
  if (options.trailer) push(options.trailer);
  return Buffer.concat(chunks);
}
