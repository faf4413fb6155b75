import { resourceLimits } from 'node:worker_threads';
import { crc32, inflateRawSync } from 'node:zlib';
import { DomainError, ErrorCode, invalidFile } from '../../../errors/domain-error.js';
import { describeClash, itemNameProblem, PartNameSet } from '../part-names.js';

/**
 * The one ZIP reader of docproc (every OOXML package goes through it: the guard before
 * LibreOffice, the scrub, annotate, DOCX signing and verification). It accepts only archives that
 * every reader reads the same way — Python's zipfile, Info-ZIP, LibreOffice's package reader — and
 * refuses the rest:
 *
 * - one end-of-central-directory record, the last in the file, its comment ending the file; ZIP64
 *   records when the classic fields overflow; one disk; the central directory exactly where the
 *   records say, ending where they begin;
 * - local entries that tile the archive from byte 0 to the central directory (no prepended bytes,
 *   gaps, hidden or overlapping entries);
 * - each local header agreeing with its central one (name bytes, flags, method, CRC and sizes, or
 *   a data descriptor holding them), well-formed extra fields, ZIP64 extra fields as the spec says;
 * - stored or deflated data only, inflated to exactly the declared size with the declared CRC;
 * - names that are ASCII, or UTF-8 with the UTF-8 flag; no duplicate or equivalent part names
 *   (part-names.ts), no name that is another's folder, no empty/dot segments or backslashes.
 *
 * Work is bounded before it is done: the entry count, the declared sizes and the declared
 * compression ratio are checked against the limits first, and each entry is inflated into one
 * buffer of its declared size that inflation cannot outgrow (a lying header stops at size + 1 byte).
 */
export interface ZipLimits {
  maxEntries: number;
  maxTotalUncompressedBytes: number;
  /** Highest allowed uncompressed/compressed ratio for the whole archive (checked above 10 MB). */
  maxCompressionRatio: number;
}

/** Largest total an archive may inflate to anywhere. */
const MAX_UNCOMPRESSED_BYTES = 200 * 1024 * 1024;
/**
 * On a worker thread with a heap ceiling (WORKER_MEMORY_MB), the inflated entries — buffers outside
 * the heap, which the ceiling does not count — may take at most this share of the thread's budget
 * beside it: a 1.4 MB archive inflating to 190 MB took a worker (and the replica) ~500 MB past its
 * ceiling.
 */
export const INFLATE_SHARE_OF_WORKER_HEAP = 0.25;

/** What this thread may inflate: MAX_UNCOMPRESSED_BYTES, or less on a worker with a heap ceiling. */
export function inflateBudgetBytes(heapCeilingMb = resourceLimits.maxOldGenerationSizeMb): number {
  if (!heapCeilingMb) return MAX_UNCOMPRESSED_BYTES;
  return Math.min(MAX_UNCOMPRESSED_BYTES, Math.floor(heapCeilingMb * INFLATE_SHARE_OF_WORKER_HEAP) * 1024 * 1024);
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  maxEntries: 5_000,
  maxTotalUncompressedBytes: inflateBudgetBytes(),
  maxCompressionRatio: 200,
};

/** Archives smaller than this inflated are never refused for their ratio (small XML compresses well). */
const RATIO_FLOOR_BYTES = 10 * 1024 * 1024;

export interface ZipEntry {
  /** The ZIP item name as stored (UTF-8 or ASCII). Folders end with "/". */
  name: string;
  /** 0 stored, 8 deflated. */
  method: 0 | 8;
  crc32: number;
  compressedSize: number;
  uncompressedSize: number;
  /** Where the stored (compressed) bytes are in the archive. */
  dataOffset: number;
  /** The inflated bytes (a view of the archive for stored entries). */
  data: Buffer;
}

const SIG = {
  local: 0x04034b50,
  central: 0x02014b50,
  end: 0x06054b50,
  zip64End: 0x06064b50,
  zip64Locator: 0x07064b50,
  descriptor: 0x08074b50,
} as const;
const EXTRA = { zip64: 0x0001, unicodePath: 0x7075 } as const;
const U16_MAX = 0xffff;
const U32_MAX = 0xffffffff;
/** Flag bits every reader handles alike: 1–2 deflate options, 3 data descriptor, 11 UTF-8 names. */
const KNOWN_FLAGS = 0x080e;
const FLAG_ENCRYPTED = 0x0001;
const FLAG_STRONG_ENCRYPTION = 0x0040;
const FLAG_DESCRIPTOR = 0x0008;
const FLAG_UTF8 = 0x0800;

const broken = (why: string) => invalidFile(`The file is not a valid ZIP archive (${why}); save the document again and resend it.`);
const zipBomb = (why: string) => new DomainError(ErrorCode.ARCHIVE_REFUSED, `The archive was refused as a possible zip bomb: ${why}.`);
const encrypted = () => new DomainError(ErrorCode.ENCRYPTED_DOCUMENT, 'The archive is encrypted; send the document without a password.');
const quoted = (name: string) => JSON.stringify(name.length > 100 ? `${name.slice(0, 100)}…` : name);

const utf8 = new TextDecoder('utf-8', { fatal: true });

function readU64(buf: Buffer, at: number): number {
  const value = buf.readBigUInt64LE(at);
  if (value > BigInt(Number.MAX_SAFE_INTEGER)) throw broken('a ZIP64 size or offset out of range');
  return Number(value);
}

/** Extra fields as id → data; throws when they do not exactly fill their area or an id repeats. */
function parseExtra(buf: Buffer, start: number, length: number, where: string): Map<number, Buffer> {
  const fields = new Map<number, Buffer>();
  let at = start;
  const end = start + length;
  while (at < end) {
    if (at + 4 > end) throw broken(`malformed extra field in ${where}`);
    const id = buf.readUInt16LE(at);
    const size = buf.readUInt16LE(at + 2);
    if (at + 4 + size > end) throw broken(`malformed extra field in ${where}`);
    if (fields.has(id)) throw broken(`a repeated extra field in ${where}`);
    fields.set(id, buf.subarray(at + 4, at + 4 + size));
    at += 4 + size;
  }
  return fields;
}

interface Sizes {
  uncompressed: number;
  compressed: number;
}

/**
 * Applies a central header's ZIP64 extra field to the fields that overflowed (APPNOTE 4.5.3:
 * present only for those, in this order, then possibly the disk number).
 */
function centralSizes(extra: Map<number, Buffer>, header: Sizes & { offset: number }, where: string): Sizes & { offset: number } {
  const field = extra.get(EXTRA.zip64);
  const wanted = [header.uncompressed === U32_MAX, header.compressed === U32_MAX, header.offset === U32_MAX];
  if (!field) {
    if (wanted.some(Boolean)) throw broken(`a ZIP64 size without its ZIP64 field in ${where}`);
    return header;
  }
  const result = { ...header };
  let at = 0;
  const take = () => {
    if (at + 8 > field.length) throw broken(`a short ZIP64 field in ${where}`);
    const value = readU64(field, at);
    at += 8;
    return value;
  };
  if (wanted[0]) result.uncompressed = take();
  if (wanted[1]) result.compressed = take();
  if (wanted[2]) result.offset = take();
  if (at !== field.length && !(field.length - at === 4 && field.readUInt32LE(at) === 0)) {
    throw broken(`a ZIP64 field that does not match its header in ${where}`);
  }
  return result;
}

interface Directory {
  entryCount: number;
  size: number;
  offset: number;
  /** Where the central directory must end: the ZIP64 end record, or the end record. */
  end: number;
}

function findEndOfCentralDirectory(buf: Buffer): number {
  const earliest = Math.max(0, buf.length - 22 - U16_MAX);
  for (let at = buf.length - 22; at >= earliest; at--) {
    if (buf.readUInt32LE(at) === SIG.end) {
      // The last record in the file is the one every reader takes; its comment must end the file.
      if (at + 22 + buf.readUInt16LE(at + 20) !== buf.length) throw broken('trailing bytes after the end of the central directory');
      return at;
    }
  }
  throw broken('no end of central directory');
}

function readDirectory(buf: Buffer): Directory {
  const eocd = findEndOfCentralDirectory(buf);
  const disk = buf.readUInt16LE(eocd + 4);
  const directoryDisk = buf.readUInt16LE(eocd + 6);
  const onDisk = buf.readUInt16LE(eocd + 8);
  const total = buf.readUInt16LE(eocd + 10);
  const size = buf.readUInt32LE(eocd + 12);
  const offset = buf.readUInt32LE(eocd + 16);
  const locator = eocd - 20;
  if (locator >= 0 && buf.readUInt32LE(locator) === SIG.zip64Locator) {
    if (buf.readUInt32LE(locator + 4) !== 0 || buf.readUInt32LE(locator + 16) !== 1) throw broken('a multi-disk archive');
    const record = readU64(buf, locator + 8);
    if (record + 56 > locator || buf.readUInt32LE(record) !== SIG.zip64End) throw broken('a broken ZIP64 end record');
    if (record + 12 + readU64(buf, record + 4) !== locator) throw broken('a ZIP64 end record of the wrong size');
    const z = {
      disk: buf.readUInt32LE(record + 16),
      directoryDisk: buf.readUInt32LE(record + 20),
      onDisk: readU64(buf, record + 24),
      total: readU64(buf, record + 32),
      size: readU64(buf, record + 40),
      offset: readU64(buf, record + 48),
    };
    if (z.disk !== 0 || z.directoryDisk !== 0 || z.onDisk !== z.total) throw broken('a multi-disk archive');
    // The classic record holds the same values, or the overflow marker where they do not fit.
    const agrees = (classic: number, value: number, max: number) => classic === value || classic === max;
    if (
      !agrees(disk, 0, U16_MAX) || !agrees(directoryDisk, 0, U16_MAX) || !agrees(onDisk, z.total, U16_MAX) ||
      !agrees(total, z.total, U16_MAX) || !agrees(size, z.size, U32_MAX) || !agrees(offset, z.offset, U32_MAX)
    ) {
      throw broken('the ZIP64 and classic end records disagree');
    }
    return { entryCount: z.total, size: z.size, offset: z.offset, end: record };
  }
  if (disk !== 0 || directoryDisk !== 0 || onDisk !== total) throw broken('a multi-disk archive');
  if (total === U16_MAX || size === U32_MAX || offset === U32_MAX) throw broken('ZIP64 values without a ZIP64 end record');
  return { entryCount: total, size, offset, end: eocd };
}

interface CentralEntry {
  name: string;
  nameBytes: Buffer;
  flags: number;
  method: number;
  crc32: number;
  compressedSize: number;
  uncompressedSize: number;
  localOffset: number;
}

function decodeName(bytes: Buffer, flags: number, where: string): string {
  if (flags & FLAG_UTF8) {
    try {
      return utf8.decode(bytes);
    } catch {
      throw broken(`a name that is not UTF-8 in ${where}`);
    }
  }
  // Without the UTF-8 flag readers decode names as CP437 or as the system's charset: only ASCII reads alike.
  if (bytes.some((b) => b >= 0x80)) throw broken(`a non-ASCII name without the UTF-8 flag in ${where}`);
  return bytes.toString('latin1');
}

function readCentralEntries(buf: Buffer, directory: Directory, limits: ZipLimits): CentralEntry[] {
  if (directory.entryCount > limits.maxEntries) throw zipBomb(`${directory.entryCount} entries (limit ${limits.maxEntries})`);
  if (directory.offset + directory.size !== directory.end) throw broken('the central directory is not where the end record says');
  const entries: CentralEntry[] = [];
  let at = directory.offset;
  for (let i = 0; i < directory.entryCount; i++) {
    if (at + 46 > directory.end || buf.readUInt32LE(at) !== SIG.central) throw broken('a broken central directory');
    const flags = buf.readUInt16LE(at + 8);
    const method = buf.readUInt16LE(at + 10);
    const nameLength = buf.readUInt16LE(at + 28);
    const extraLength = buf.readUInt16LE(at + 30);
    const commentLength = buf.readUInt16LE(at + 32);
    const next = at + 46 + nameLength + extraLength + commentLength;
    if (next > directory.end) throw broken('a broken central directory');
    const nameBytes = buf.subarray(at + 46, at + 46 + nameLength);
    const where = `central entry ${i + 1}`;
    const name = decodeName(nameBytes, flags, where);
    if (flags & (FLAG_ENCRYPTED | FLAG_STRONG_ENCRYPTION)) throw encrypted();
    if (flags & ~KNOWN_FLAGS) throw broken(`unsupported flags 0x${flags.toString(16)} on ${quoted(name)}`);
    if (method !== 0 && method !== 8) throw invalidFile(`The archive uses an unsupported compression method (${method}) for ${quoted(name)}.`);
    if (buf.readUInt16LE(at + 34) !== 0 && buf.readUInt16LE(at + 34) !== U16_MAX) throw broken('a multi-disk archive');
    const extra = parseExtra(buf, at + 46 + nameLength, extraLength, quoted(name));
    const unicodePath = extra.get(EXTRA.unicodePath);
    // Info-ZIP takes this name instead of the header's; others ignore it.
    if (unicodePath && (unicodePath.length < 5 || unicodePath.subarray(5).toString('utf8') !== name)) {
      throw broken(`two different names for ${quoted(name)}`);
    }
    const header = {
      uncompressed: buf.readUInt32LE(at + 24),
      compressed: buf.readUInt32LE(at + 20),
      offset: buf.readUInt32LE(at + 42),
    };
    const sizes = centralSizes(extra, header, quoted(name));
    entries.push({
      name,
      nameBytes,
      flags,
      method,
      crc32: buf.readUInt32LE(at + 16),
      compressedSize: sizes.compressed,
      uncompressedSize: sizes.uncompressed,
      localOffset: sizes.offset,
    });
    at = next;
  }
  if (at !== directory.end) throw broken('bytes after the last central directory entry');
  return entries;
}

/** Where the entry's stored bytes start and its local entry ends; checks its local header against the central one. */
function checkLocalHeader(buf: Buffer, entry: CentralEntry): { dataOffset: number; end: number } {
  const at = entry.localOffset;
  const where = quoted(entry.name);
  if (at + 30 > buf.length || buf.readUInt32LE(at) !== SIG.local) throw broken(`no local header for ${where}`);
  const flags = buf.readUInt16LE(at + 6);
  const method = buf.readUInt16LE(at + 8);
  const nameLength = buf.readUInt16LE(at + 26);
  const extraLength = buf.readUInt16LE(at + 28);
  const dataOffset = at + 30 + nameLength + extraLength;
  if (dataOffset > buf.length) throw broken(`a truncated local header for ${where}`);
  if (!buf.subarray(at + 30, at + 30 + nameLength).equals(entry.nameBytes)) throw broken(`the local and central names of ${where} differ`);
  if (flags !== entry.flags) throw broken(`the local and central flags of ${where} differ`);
  if (method !== entry.method) throw broken(`the local and central compression methods of ${where} differ`);
  const extra = parseExtra(buf, at + 30 + nameLength, extraLength, `the local header of ${where}`);
  const crc = buf.readUInt32LE(at + 14);
  const sizes = localSizes(extra, { uncompressed: buf.readUInt32LE(at + 22), compressed: buf.readUInt32LE(at + 18) }, where);
  const dataEnd = dataOffset + entry.compressedSize;
  if (dataEnd > buf.length) throw broken(`a truncated entry ${where}`);
  // With a data descriptor the local fields are zero (or, from some writers, the real values).
  const deferred = (flags & FLAG_DESCRIPTOR) !== 0 && crc === 0 && sizes.uncompressed === 0 && sizes.compressed === 0;
  if (!deferred && (crc !== entry.crc32 || sizes.uncompressed !== entry.uncompressedSize || sizes.compressed !== entry.compressedSize)) {
    throw broken(`the local and central sizes or CRC of ${where} differ`);
  }
  return { dataOffset, end: flags & FLAG_DESCRIPTOR ? dataEnd + descriptorLength(buf, dataEnd, entry) : dataEnd };
}

/** Sizes of a local header: a ZIP64 field there holds both (APPNOTE 4.5.3), and must agree with the classic fields that did not overflow (or be all zeros: a placeholder). */
function localSizes(extra: Map<number, Buffer>, header: Sizes, where: string): Sizes {
  const field = extra.get(EXTRA.zip64);
  const overflow = header.uncompressed === U32_MAX || header.compressed === U32_MAX;
  if (!field) {
    if (overflow) throw broken(`a ZIP64 size without its ZIP64 field in the local header of ${where}`);
    return header;
  }
  if (field.length < 16) throw broken(`a short ZIP64 field in the local header of ${where}`);
  const sizes = { uncompressed: readU64(field, 0), compressed: readU64(field, 8) };
  // A field of zeros beside classic sizes that did not overflow is a placeholder (Apple's iWork '09
  // writer leaves one): readers take the classic sizes then (APPNOTE 4.5.3 uses the field only for
  // 0xFFFFFFFF), and so does this one.
  if (!overflow && sizes.uncompressed === 0 && sizes.compressed === 0) return header;
  const agrees = (classic: number, value: number) => classic === U32_MAX || classic === value;
  if (!agrees(header.uncompressed, sizes.uncompressed) || !agrees(header.compressed, sizes.compressed)) {
    throw broken(`the ZIP64 and classic sizes in the local header of ${where} differ`);
  }
  return sizes;
}

/**
 * Length of the data descriptor at `at`, checked against the central values: with or without its
 * signature, with 4- or 8-byte sizes (ZIP64 writers use 8; readers take sizes from the central header).
 */
function descriptorLength(buf: Buffer, at: number, entry: CentralEntry): number {
  const matches = (from: number, sizeBytes: 4 | 8) => {
    if (from + 4 + 2 * sizeBytes > buf.length) return false;
    const read = (o: number) => (sizeBytes === 8 ? readU64(buf, o) : buf.readUInt32LE(o));
    return buf.readUInt32LE(from) === entry.crc32 && read(from + 4) === entry.compressedSize && read(from + 4 + sizeBytes) === entry.uncompressedSize;
  };
  const signed = at + 4 <= buf.length && buf.readUInt32LE(at) === SIG.descriptor;
  for (const sizeBytes of [4, 8] as const) {
    if (signed && matches(at + 4, sizeBytes)) return 8 + 2 * sizeBytes;
    if (matches(at, sizeBytes)) return 4 + 2 * sizeBytes;
  }
  throw broken(`the data descriptor of ${quoted(entry.name)} does not match its central header`);
}

/** Inflates one entry into a buffer of its declared size; refuses anything else. */
function inflate(stored: Buffer, entry: CentralEntry): Buffer {
  const where = quoted(entry.name);
  if (entry.method === 0) {
    if (entry.compressedSize !== entry.uncompressedSize) throw broken(`the stored entry ${where} has two sizes`);
    return stored;
  }
  const size = entry.uncompressedSize;
  let result: { buffer: Buffer; engine: { bytesWritten: number } };
  try {
    // One chunk of exactly size + 1 bytes: no growth, no concatenation, and a longer stream stops there.
    result = inflateRawSync(stored, { chunkSize: Math.max(64, size + 1), maxOutputLength: Math.max(1, size), info: true }) as unknown as typeof result;
  } catch (err) {
    if (err instanceof RangeError || (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      throw broken(`the entry ${where} inflates to more than the size its header says`);
    }
    throw broken(`corrupt compressed data in ${where}`);
  }
  if (result.buffer.length !== size) throw broken(`the entry ${where} is not the size its header says`);
  if (result.engine.bytesWritten !== stored.length) throw broken(`bytes after the compressed data of ${where}`);
  return result.buffer;
}

/**
 * Reads and checks a whole archive (see the module comment); every entry's bytes are inflated and
 * kept. Throws DomainError: 400 INVALID_FILE_FORMAT (malformed, ambiguous or clashing names), 422
 * INVALID_FILE_FORMAT (past the limits: a possible zip bomb), 422 ENCRYPTED_DOCUMENT.
 */
export function readZip(buf: Buffer, limits: ZipLimits = DEFAULT_ZIP_LIMITS): ZipEntry[] {
  if (buf.length < 22) throw invalidFile('The file is too short to be a ZIP archive.');
  const directory = readDirectory(buf);
  const central = readCentralEntries(buf, directory, limits);

  const names = new PartNameSet();
  let declared = 0;
  let compressed = 0;
  for (const entry of central) {
    const problem = itemNameProblem(entry.name);
    if (problem) throw invalidFile(`The package holds an entry named ${quoted(entry.name)}, with ${problem}; no office application reads it the same way. Save the document again and resend it.`);
    const clash = names.add(entry.name);
    if (clash) throw invalidFile(`The package is invalid: ${describeClash(clash)}, and office applications disagree on which part counts. Save the document again and resend it.`);
    if (entry.name.endsWith('/') && entry.uncompressedSize !== 0) throw broken(`the folder entry ${quoted(entry.name)} holds data`);
    declared += entry.uncompressedSize;
    compressed += entry.compressedSize;
  }
  // Counted before anything is inflated: inflation can never produce more than what was declared.
  if (declared > limits.maxTotalUncompressedBytes) throw zipBomb(`it inflates to more than the ${Math.round(limits.maxTotalUncompressedBytes / 2 ** 20)} MB one document may take`);
  if (declared > RATIO_FLOOR_BYTES && declared / Math.max(1, compressed) > limits.maxCompressionRatio) {
    throw zipBomb(`compression ratio above ${limits.maxCompressionRatio}:1`);
  }

  const layout = central
    .map((entry, index) => ({ entry, index, ...checkLocalHeader(buf, entry) }))
    .sort((a, b) => a.entry.localOffset - b.entry.localOffset);
  let expected = 0;
  for (const { entry, end } of layout) {
    if (entry.localOffset !== expected) throw broken(expected === 0 ? 'bytes before the first entry' : 'gaps or overlaps between entries');
    expected = end;
  }
  if (expected !== directory.offset) throw broken('bytes between the last entry and the central directory');

  return layout
    .sort((a, b) => a.index - b.index)
    .map(({ entry, dataOffset }) => {
      const data = inflate(buf.subarray(dataOffset, dataOffset + entry.compressedSize), entry);
      if ((crc32(data) >>> 0) !== entry.crc32) throw broken(`the CRC of ${quoted(entry.name)} does not match its data`);
      return {
        name: entry.name,
        method: entry.method as 0 | 8,
        crc32: entry.crc32,
        compressedSize: entry.compressedSize,
        uncompressedSize: entry.uncompressedSize,
        dataOffset,
        data,
      };
    });
}

/** What peekZip saw: every item name, and the bytes of the wanted entries that exist. */
export interface ZipPeek {
  names: string[];
  entries: Map<string, Buffer>;
}

/**
 * Reads only the central directory and the few named entries (each inflated only when it declares
 * at most maxEntryBytes; a larger one is left out): enough to tell what kind of package a file is
 * without inflating the rest. Same checks as readZip on what it reads (entry count, names, flags).
 */
export function peekZip(buf: Buffer, wanted: readonly string[], maxEntryBytes: number, limits: ZipLimits = DEFAULT_ZIP_LIMITS): ZipPeek {
  if (buf.length < 22) throw invalidFile('The file is too short to be a ZIP archive.');
  const central = readCentralEntries(buf, readDirectory(buf), limits);
  const entries = new Map<string, Buffer>();
  for (const entry of central) {
    if (!wanted.includes(entry.name) || entry.uncompressedSize > maxEntryBytes || entries.has(entry.name)) continue;
    const { dataOffset } = checkLocalHeader(buf, entry);
    entries.set(entry.name, inflate(buf.subarray(dataOffset, dataOffset + entry.compressedSize), entry));
  }
  return { names: central.map((e) => e.name), entries };
}
