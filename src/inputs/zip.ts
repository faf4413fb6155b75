import { inflateRawSync } from 'node:zlib';
import { AppError, ErrorCode, invalidFile, unprocessable } from '../errors/app-error.js';

/**
 * Guards for ZIP-based office documents (DOCX). Every entry is really inflated with a hard
 * output cap, so a lying central directory cannot smuggle a zip bomb past the checks, and
 * nothing downstream (pizzip, LibreOffice) sees an archive we did not measure ourselves.
 */
export interface ZipLimits {
  maxEntries: number;
  maxTotalUncompressedBytes: number;
  /** Highest allowed uncompressed/compressed ratio for the whole archive. */
  maxCompressionRatio: number;
}

export const DEFAULT_ZIP_LIMITS: ZipLimits = {
  maxEntries: 5_000,
  maxTotalUncompressedBytes: 200 * 1024 * 1024,
  maxCompressionRatio: 200,
};

export interface ZipEntryInfo {
  name: string;
  compressedSize: number;
  uncompressedSize: number;
}

/**
 * An entry as the guard measured it, enough to use it without another ZIP reader: where its stored
 * bytes are, how they are compressed, and (when asked for) what they really inflate to.
 */
export interface ZipEntry extends ZipEntryInfo {
  /** 0 stored, 8 deflated (nothing else passes the guard). */
  method: 0 | 8;
  /** Offset of the stored (compressed) bytes in the archive. */
  dataOffset: number;
  /** The inflated bytes, with InspectOptions.keepData (a view of the archive for stored entries). */
  data?: Buffer;
}

export interface InspectOptions {
  /**
   * Keep every entry's inflated bytes on the result, for a reader that needs them (saves inflating
   * twice). Off, only one entry's bytes are alive at a time.
   */
  keepData?: boolean;
}

const EOCD_SIGNATURE = 0x06054b50;
const CENTRAL_SIGNATURE = 0x02014b50;
const LOCAL_SIGNATURE = 0x04034b50;
const ZIP64_SIZE = 0xffffffff;
const OLE_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

const zipBomb = (why: string) =>
  unprocessable(ErrorCode.INVALID_FILE_FORMAT, `The archive was refused as a possible zip bomb: ${why}.`);

function findEndOfCentralDirectory(buf: Buffer): number {
  const earliest = Math.max(0, buf.length - 22 - 0xffff);
  for (let i = buf.length - 22; i >= earliest; i--) {
    if (buf.readUInt32LE(i) === EOCD_SIGNATURE) return i;
  }
  return -1;
}

interface Inflated {
  dataOffset: number;
  data: Buffer;
}

/** Really inflates one entry, up to `cap` bytes; throws the guard's 4xx AppErrors. */
function inflateEntry(buf: Buffer, localOffset: number, method: number, compressedSize: number, cap: number): Inflated {
  if (localOffset + 30 > buf.length || buf.readUInt32LE(localOffset) !== LOCAL_SIGNATURE) {
    throw invalidFile('The file is not a valid ZIP archive (broken local header).');
  }
  const nameLength = buf.readUInt16LE(localOffset + 26);
  const extraLength = buf.readUInt16LE(localOffset + 28);
  const dataOffset = localOffset + 30 + nameLength + extraLength;
  const end = dataOffset + compressedSize;
  if (end > buf.length) throw invalidFile('The file is not a valid ZIP archive (truncated entry).');
  const stored = buf.subarray(dataOffset, end);
  if (method === 0) return { dataOffset, data: stored };
  if (method !== 8) throw invalidFile(`The archive uses an unsupported compression method (${method}).`);
  try {
    return { dataOffset, data: inflateRawSync(stored, { maxOutputLength: Math.max(1, cap) }) };
  } catch (err) {
    if (err instanceof RangeError || (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      throw zipBomb('its uncompressed size exceeds the limit');
    }
    throw invalidFile('The file is not a valid ZIP archive (corrupt compressed data).');
  }
}

/** Lists and measures every entry; throws a 4xx AppError on anything malformed or oversized. */
export function inspectZip(buf: Buffer, limits: ZipLimits = DEFAULT_ZIP_LIMITS, options: InspectOptions = {}): ZipEntry[] {
  if (buf.length < 22) throw invalidFile('The file is too short to be a ZIP-based document.');
  const eocd = findEndOfCentralDirectory(buf);
  if (eocd < 0) throw invalidFile('The file is not a valid ZIP archive (no central directory).');
  const entryCount = buf.readUInt16LE(eocd + 10);
  const directoryOffset = buf.readUInt32LE(eocd + 16);
  if (entryCount > limits.maxEntries) throw zipBomb(`${entryCount} entries (limit ${limits.maxEntries})`);

  const entries: ZipEntry[] = [];
  let total = 0;
  let offset = directoryOffset;
  for (let i = 0; i < entryCount; i++) {
    if (offset + 46 > buf.length || buf.readUInt32LE(offset) !== CENTRAL_SIGNATURE) {
      throw invalidFile('The file is not a valid ZIP archive (broken central directory).');
    }
    const flags = buf.readUInt16LE(offset + 8);
    const method = buf.readUInt16LE(offset + 10);
    const compressedSize = buf.readUInt32LE(offset + 20);
    const declaredSize = buf.readUInt32LE(offset + 24);
    const nameLength = buf.readUInt16LE(offset + 28);
    const extraLength = buf.readUInt16LE(offset + 30);
    const commentLength = buf.readUInt16LE(offset + 32);
    const localOffset = buf.readUInt32LE(offset + 42);
    const name = buf.toString('utf8', offset + 46, offset + 46 + nameLength);
    if (flags & 0x1) {
      throw new AppError(422, ErrorCode.ENCRYPTED_DOCUMENT, 'The archive is encrypted; send the document without a password.');
    }
    const remaining = limits.maxTotalUncompressedBytes - total;
    const { dataOffset, data } = inflateEntry(buf, localOffset, method, compressedSize, remaining + 1);
    const size = data.length;
    if (size > remaining) throw zipBomb('its uncompressed size exceeds the limit');
    // Readers trust the declared size (pizzip refuses the part, LibreOffice may read past it): a
    // mismatch is a damaged or crafted archive. 0xFFFFFFFF defers to a ZIP64 record.
    if (declaredSize !== ZIP64_SIZE && size !== declaredSize) {
      throw invalidFile(`The file is not a valid ZIP archive (the entry ${JSON.stringify(name.slice(0, 100))} is not the size its header says).`);
    }
    total += size;
    entries.push({ name, compressedSize, uncompressedSize: size, method: method as 0 | 8, dataOffset, ...(options.keepData && { data }) });
    offset += 46 + nameLength + extraLength + commentLength;
  }
  const compressedTotal = entries.reduce((sum, e) => sum + e.compressedSize, 0);
  if (total > 10 * 1024 * 1024 && total / Math.max(1, compressedTotal) > limits.maxCompressionRatio) {
    throw zipBomb(`compression ratio above ${limits.maxCompressionRatio}:1`);
  }
  return entries;
}

/** True when the buffer is an OLE compound file holding an encrypted OOXML package. */
function isEncryptedOoxml(buf: Buffer): boolean {
  const marker = Buffer.from('EncryptionInfo', 'utf16le');
  return buf.indexOf(marker) >= 0;
}

/**
 * Checks that `buf` is a DOCX we are willing to process and returns its entry list.
 * Password-protected files (OLE containers) and legacy .doc are told apart for the caller.
 */
export function assertDocx(buf: Buffer, limits: ZipLimits = DEFAULT_ZIP_LIMITS, options: InspectOptions = {}): ZipEntry[] {
  if (buf.subarray(0, 8).equals(OLE_MAGIC)) {
    if (isEncryptedOoxml(buf)) {
      throw new AppError(422, ErrorCode.ENCRYPTED_DOCUMENT, 'The document is password-protected; remove the password and send it again.');
    }
    throw invalidFile('The file is a legacy binary Word document (.doc); only DOCX is accepted.');
  }
  if (buf.length < 4 || buf.readUInt32LE(0) !== LOCAL_SIGNATURE) {
    throw invalidFile('The file is not a DOCX document (it is not a ZIP package).');
  }
  const entries = inspectZip(buf, limits, options);
  const names = new Set(entries.map((e) => e.name));
  if (!names.has('[Content_Types].xml') || !names.has('word/document.xml')) {
    throw invalidFile('The file is a ZIP archive but not a DOCX document (word/document.xml is missing).');
  }
  return entries;
}
