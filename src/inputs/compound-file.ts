/**
 * Just enough of the OLE2 Compound File Binary format ([MS-CFB]) to say what a legacy Office file
 * is: the names of the streams and storages at its root, and the first bytes of one stream. Every
 * walk is bounded by the file's size (sector chains and the directory tree are followed with a
 * visited set), so a crafted file cannot make it loop. Returns undefined when the file is not a
 * readable compound file.
 */
export const CFB_MAGIC = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

const END_OF_CHAIN = 0xfffffffe;
const FREE_SECTOR = 0xffffffff;
const NO_STREAM = 0xffffffff;
const HEADER_DIFAT_ENTRIES = 109;
const DIRECTORY_ENTRY_BYTES = 128;

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
  return {
    root,
    streamHead(entry, length) {
      if (entry.size < miniStreamCutoff || !validSector(entry.startSector)) return undefined;
      const at = sectorOffset(entry.startSector);
      return buf.subarray(at, at + Math.min(length, sectorSize, entry.size));
    },
  };
}
