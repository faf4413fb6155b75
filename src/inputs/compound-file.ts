import { invalidFile } from '../errors/domain-error.js';

/**
 * The one reader of the OLE2 Compound File Binary format ([MS-CFB]) for legacy Office files: the
 * names of the streams and storages at its root, the first bytes of one stream (to say what a file
 * is), and a whole root stream, from regular sectors or the mini stream (to count what it holds).
 * Every walk is bounded by the file's size (sector chains and the directory tree are followed with
 * a visited set; a stream's chain is walked for exactly the sectors its size needs, each sector at
 * most once), so a crafted file cannot make it loop or allocate more than the file holds.
 * readCompoundFile returns undefined when the file is not a readable compound file; a stream whose
 * chain leaves the file, loops or ends early is refused with 400 INVALID_FILE_FORMAT.
 */
export const CFB_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

const END_OF_CHAIN = 0xfffffffe;
const FREE_SECTOR = 0xffffffff;
const NO_STREAM = 0xffffffff;
const HEADER_DIFAT_ENTRIES = 109;
const DIRECTORY_ENTRY_BYTES = 128;
const MINI_SECTOR_SHIFT = 6;
/** Sector numbers from here on are markers (end of chain, free, FAT, DIFAT), never sectors. */
const MAX_REGULAR_SECTOR = 0xfffffffa;

export interface RootEntry {
  name: string;
  /** 1 storage, 2 stream. */
  type: number;
  startSector: number;
  size: number;
}

export interface CompoundFile {
  root: RootEntry[];
  /** Up to `length` bytes at the start of a root stream stored in regular sectors (undefined for mini-stream ones). */
  streamHead(entry: RootEntry, length: number): Buffer | undefined;
  /**
   * The whole content of a stream entry (of `root`), from its sector chain in the file or in the mini
   * stream, cut to its size. Throws INVALID_FILE_FORMAT when the chain leaves the file, loops or is
   * shorter than the size.
   */
  readStream(entry: RootEntry): Buffer;
  /**
   * The root stream with this name (compared without case, as [MS-CFB] does), whole; undefined when
   * there is none; INVALID_FILE_FORMAT when there are several.
   */
  stream(name: string): Buffer | undefined;
}

const damaged = (what: string) =>
  invalidFile(`The file is a damaged OLE2 compound file (legacy Office format): ${what}; save it again and resend it.`);

/**
 * The bytes of a chain of `unit`-byte sectors starting at `start`, cut to `size`: walks exactly the
 * sectors the size needs (at most `available`, the sectors there are), each at most once.
 */
function readChain(
  start: number,
  size: number,
  unit: number,
  available: number,
  next: (n: number) => number,
  sectorBytes: (n: number, length: number) => Buffer | undefined,
  what: string,
): Buffer {
  const count = Math.ceil(size / unit);
  if (count > available) throw damaged(`${what} declares ${size} bytes, more than the file holds`);
  const parts: Buffer[] = [];
  const seen = new Set<number>();
  let sector = start;
  for (let i = 0; i < count; i++) {
    if (seen.has(sector)) throw damaged(`the sector chain of ${what} loops`);
    seen.add(sector);
    const bytes = sectorBytes(sector, Math.min(unit, size - i * unit));
    if (!bytes) throw damaged(`the sector chain of ${what} ends before its ${size} bytes`);
    parts.push(bytes);
    if (i + 1 < count) sector = next(sector);
  }
  return Buffer.concat(parts, size);
}

export function readCompoundFile(buf: Buffer): CompoundFile | undefined {
  if (buf.length < 512 || !buf.subarray(0, 8).equals(CFB_MAGIC)) return undefined;
  const shift = buf.readUInt16LE(0x1e);
  if (shift !== 9 && shift !== 12) return undefined;
  const sectorSize = 1 << shift;
  const sectorOffset = (n: number) => (n + 1) * sectorSize;
  /** A sector wholly inside the file (the special values 0xFFFFFFFA… are far past any file we take). */
  const validSector = (n: number) => sectorOffset(n) + sectorSize <= buf.length;

  // The FAT's own sectors: 109 in the header, the rest in the DIFAT chain (each DIFAT sector's last slot links on).
  const fatSectors: number[] = [];
  for (let i = 0; i < HEADER_DIFAT_ENTRIES; i++) {
    const n = buf.readUInt32LE(0x4c + i * 4);
    if (n === FREE_SECTOR || n === END_OF_CHAIN) break;
    fatSectors.push(n);
  }
  const seenDifat = new Set<number>();
  for (let difat = buf.readUInt32LE(0x44); difat !== END_OF_CHAIN && difat !== FREE_SECTOR && validSector(difat) && !seenDifat.has(difat); ) {
    seenDifat.add(difat);
    const at = sectorOffset(difat);
    const slots = sectorSize / 4 - 1;
    for (let i = 0; i < slots; i++) {
      const n = buf.readUInt32LE(at + i * 4);
      if (n !== FREE_SECTOR && n !== END_OF_CHAIN) fatSectors.push(n);
    }
    difat = buf.readUInt32LE(at + slots * 4);
  }
  const perFatSector = sectorSize / 4;
  const nextSector = (n: number): number => {
    const fatSector = fatSectors[Math.floor(n / perFatSector)];
    if (fatSector === undefined || !validSector(fatSector)) return END_OF_CHAIN;
    return buf.readUInt32LE(sectorOffset(fatSector) + (n % perFatSector) * 4);
  };

  // The directory: a chain of sectors of 128-byte entries.
  const directorySectors: number[] = [];
  const seen = new Set<number>();
  for (let n = buf.readUInt32LE(0x30); n !== END_OF_CHAIN && validSector(n) && !seen.has(n); n = nextSector(n)) {
    seen.add(n);
    directorySectors.push(n);
  }
  if (directorySectors.length === 0) return undefined;
  const entriesPerSector = sectorSize / DIRECTORY_ENTRY_BYTES;
  const entryCount = directorySectors.length * entriesPerSector;
  const entryAt = (id: number) => sectorOffset(directorySectors[Math.floor(id / entriesPerSector)]!) + (id % entriesPerSector) * DIRECTORY_ENTRY_BYTES;
  const readEntry = (id: number): RootEntry & { left: number; right: number; child: number } => {
    const at = entryAt(id);
    const nameBytes = Math.min(64, buf.readUInt16LE(at + 0x40));
    return {
      name: buf.toString('utf16le', at, at + Math.max(0, nameBytes - 2)),
      type: buf[at + 0x42]!,
      left: buf.readUInt32LE(at + 0x44),
      right: buf.readUInt32LE(at + 0x48),
      child: buf.readUInt32LE(at + 0x4c),
      startSector: buf.readUInt32LE(at + 0x74),
      size: buf.readUInt32LE(at + 0x78),
    };
  };
  const rootEntry = readEntry(0);
  if (rootEntry.type !== 5) return undefined;

  // The root's children are a red-black tree of siblings under its child id.
  const root: RootEntry[] = [];
  const visited = new Set<number>();
  const pending = [rootEntry.child];
  while (pending.length > 0) {
    const id = pending.pop()!;
    if (id === NO_STREAM || id >= entryCount || visited.has(id)) continue;
    visited.add(id);
    const entry = readEntry(id);
    root.push({ name: entry.name, type: entry.type, startSector: entry.startSector, size: entry.size });
    pending.push(entry.left, entry.right);
  }

  const miniStreamCutoff = buf.readUInt32LE(0x38);
  /** `length` bytes of regular sector n, inside the file (its last sector may be short); none for the special values. */
  const regularBytes = (n: number, length: number) => {
    const at = sectorOffset(n);
    return n < MAX_REGULAR_SECTOR && at + length <= buf.length ? buf.subarray(at, at + length) : undefined;
  };
  const readRegular = (start: number, size: number, what: string) =>
    readChain(start, size, sectorSize, Math.ceil((buf.length - sectorSize) / sectorSize), nextSector, regularBytes, what);

  // The mini stream (the root entry's chain) and the mini FAT (its own chain of regular sectors), read on first use.
  let mini: { stream: Buffer; fat: Buffer } | undefined;
  const miniStream = () => {
    if (mini) return mini;
    if (buf.readUInt16LE(0x20) !== MINI_SECTOR_SHIFT) throw damaged('its mini sector size is not 64 bytes');
    const fatParts: Buffer[] = [];
    const seenFat = new Set<number>();
    for (let n = buf.readUInt32LE(0x3c); n !== END_OF_CHAIN && validSector(n) && !seenFat.has(n); n = nextSector(n)) {
      seenFat.add(n);
      fatParts.push(buf.subarray(sectorOffset(n), sectorOffset(n) + sectorSize));
    }
    mini = { stream: readRegular(rootEntry.startSector, rootEntry.size, 'the mini stream'), fat: Buffer.concat(fatParts) };
    return mini;
  };

  const readStream = (entry: RootEntry): Buffer => {
    const what = `the stream ${JSON.stringify(entry.name)}`;
    if (entry.type !== 2) throw damaged(`${what} is not a stream`);
    if (entry.size === 0) return Buffer.alloc(0);
    if (entry.size >= miniStreamCutoff) return readRegular(entry.startSector, entry.size, what);
    const { stream, fat } = miniStream();
    const unit = 1 << MINI_SECTOR_SHIFT;
    return readChain(
      entry.startSector,
      entry.size,
      unit,
      Math.ceil(stream.length / unit),
      (n) => (n < fat.length / 4 ? fat.readUInt32LE(n * 4) : END_OF_CHAIN),
      (n, length) => (n * unit + length <= stream.length ? stream.subarray(n * unit, n * unit + length) : undefined),
      what,
    );
  };

  return {
    root,
    streamHead(entry, length) {
      if (entry.size < miniStreamCutoff || !validSector(entry.startSector)) return undefined;
      const at = sectorOffset(entry.startSector);
      return buf.subarray(at, at + Math.min(length, sectorSize, entry.size));
    },
    readStream,
    stream(name) {
      const wanted = name.toUpperCase();
      const entries = root.filter((e) => e.type === 2 && e.name.toUpperCase() === wanted);
      // [MS-CFB] forbids two siblings of one name; readers that search the tree could each find another.
      if (entries.length > 1) throw damaged(`it holds ${entries.length} streams named ${JSON.stringify(name)}`);
      return entries[0] && readStream(entries[0]);
    },
  };
}
