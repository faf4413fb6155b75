/**
 * Writes an OLE2 compound file ([MS-CFB] version 3, 512-byte sectors) holding the given root streams:
 * streams under 4096 bytes in the mini stream (64-byte mini sectors), others in regular sectors,
 * directory siblings as a binary search tree in [MS-CFB] name order. `order` (any numbers) shuffles
 * where the data sectors lie in the file, so chains jump back and forth as in files Office rewrote.
 * For tests only: no DIFAT (at most 109 FAT sectors, ~7 MB).
 */
export interface CfbStream {
  name: string;
  data: Uint8Array;
}

const SECTOR = 512;
const MINI = 64;
const CUTOFF = 4096;
const END_OF_CHAIN = 0xfffffffe;
const FREE = 0xffffffff;
const FAT_SECTOR = 0xfffffffd;
const NO_STREAM = 0xffffffff;

const compareNames = (a: string, b: string) => a.length - b.length || (a.toUpperCase() < b.toUpperCase() ? -1 : a.toUpperCase() > b.toUpperCase() ? 1 : 0);

export function buildCompoundFile(streams: readonly CfbStream[], order: readonly number[] = []): Buffer {
  const names = new Set(streams.map((s) => s.name.toUpperCase()));
  if (names.size !== streams.length) throw new Error('stream names must differ (without case)');

  // Mini stream: the small streams one after another, each from a mini sector boundary.
  const miniStarts: number[] = [];
  const miniChunks: Buffer[] = [];
  let miniSectors = 0;
  const miniFat: number[] = [];
  for (const s of streams) {
    if (s.data.length >= CUTOFF || s.data.length === 0) {
      miniStarts.push(END_OF_CHAIN);
      continue;
    }
    const count = Math.ceil(s.data.length / MINI);
    miniStarts.push(miniSectors);
    for (let i = 0; i < count; i++) miniFat.push(i + 1 < count ? miniSectors + i + 1 : END_OF_CHAIN);
    const padded = Buffer.alloc(count * MINI);
    Buffer.from(s.data).copy(padded);
    miniChunks.push(padded);
    miniSectors += count;
  }
  const miniStream = Buffer.concat(miniChunks);
  const miniFatBytes = Buffer.alloc(Math.ceil((miniFat.length * 4) / SECTOR) * SECTOR, 0xff);
  miniFat.forEach((n, i) => miniFatBytes.writeUInt32LE(n, i * 4));

  // Directory: root + one entry per stream, four to a sector.
  const entryCount = streams.length + 1;
  const directoryBytes = Buffer.alloc(Math.ceil(entryCount / 4) * SECTOR);

  // Regular chains, as (content) lists of sectors: each stream ≥ cutoff, the mini stream, the mini FAT, the directory.
  const chains: Buffer[][] = [];
  const split = (data: Buffer) => {
    const sectors: Buffer[] = [];
    for (let at = 0; at < data.length; at += SECTOR) {
      const sector = Buffer.alloc(SECTOR);
      data.copy(sector, 0, at, at + SECTOR);
      sectors.push(sector);
    }
    return sectors;
  };
  const regularIndex = streams.map((s) => (s.data.length >= CUTOFF ? chains.push(split(Buffer.from(s.data))) - 1 : -1));
  const miniStreamChain = chains.push(split(miniStream)) - 1;
  const miniFatChain = chains.push(split(miniFatBytes)) - 1;
  const directoryChain = chains.push(split(directoryBytes)) - 1;
  const dataSectors = chains.reduce((n, c) => n + c.length, 0);
  let fatSectors = 1;
  while (Math.ceil((fatSectors + dataSectors) / (SECTOR / 4)) > fatSectors) fatSectors++;
  if (fatSectors > 109) throw new Error('too large for a file without DIFAT');

  // Where each data sector goes: a permutation of fatSectors..total-1 driven by `order`.
  const slots = Array.from({ length: dataSectors }, (_, i) => fatSectors + i);
  for (let i = slots.length - 1; i > 0; i--) {
    const j = Math.abs(Math.trunc(order[i % Math.max(order.length, 1)] ?? 0) + i * 7919) % (i + 1);
    if (order.length) [slots[i], slots[j]] = [slots[j]!, slots[i]!];
  }
  const total = fatSectors + dataSectors;
  const fat = new Array<number>(fatSectors * (SECTOR / 4)).fill(FREE);
  for (let i = 0; i < fatSectors; i++) fat[i] = FAT_SECTOR;
  const placed: number[][] = [];
  let next = 0;
  for (const chain of chains) {
    const at = chain.map(() => slots[next++]!);
    at.forEach((sector, i) => (fat[sector] = i + 1 < at.length ? at[i + 1]! : END_OF_CHAIN));
    placed.push(at);
  }
  const start = (chain: number) => placed[chain]![0] ?? END_OF_CHAIN;

  // Directory entries: root's child is the middle of the name-ordered streams, recursively.
  const entry = (id: number, name: string, type: number, startSector: number, size: number) => {
    const at = id * 128;
    directoryBytes.fill(0, at, at + 128);
    directoryBytes.write(name, at, 'utf16le');
    directoryBytes.writeUInt16LE((name.length + 1) * 2, at + 0x40);
    directoryBytes[at + 0x42] = type;
    directoryBytes[at + 0x43] = 1; // black
    directoryBytes.writeUInt32LE(NO_STREAM, at + 0x44);
    directoryBytes.writeUInt32LE(NO_STREAM, at + 0x48);
    directoryBytes.writeUInt32LE(NO_STREAM, at + 0x4c);
    directoryBytes.writeUInt32LE(startSector, at + 0x74);
    directoryBytes.writeUInt32LE(size, at + 0x78);
  };
  for (let id = entryCount; id < directoryBytes.length / 128; id++) {
    entry(id, '', 0, 0, 0);
  }
  entry(0, 'Root Entry', 5, miniStream.length ? start(miniStreamChain) : END_OF_CHAIN, miniStream.length);
  streams.forEach((s, i) => entry(i + 1, s.name, 2, s.data.length === 0 ? END_OF_CHAIN : s.data.length >= CUTOFF ? start(regularIndex[i]!) : miniStarts[i]!, s.data.length));
  const sorted = streams.map((s, i) => ({ name: s.name, id: i + 1 })).sort((a, b) => compareNames(a.name, b.name));
  const tree = (from: number, to: number): number => {
    if (from >= to) return NO_STREAM;
    const middle = (from + to) >> 1;
    const at = sorted[middle]!.id * 128;
    directoryBytes.writeUInt32LE(tree(from, middle), at + 0x44);
    directoryBytes.writeUInt32LE(tree(middle + 1, to), at + 0x48);
    return sorted[middle]!.id;
  };
  directoryBytes.writeUInt32LE(tree(0, sorted.length), 0x4c);
  chains[directoryChain] = split(directoryBytes);

  const file = Buffer.alloc((total + 1) * SECTOR);
  Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(file, 0);
  file.writeUInt16LE(0x3e, 0x18);
  file.writeUInt16LE(3, 0x1a);
  file.writeUInt16LE(0xfffe, 0x1c);
  file.writeUInt16LE(9, 0x1e);
  file.writeUInt16LE(6, 0x20);
  file.writeUInt32LE(fatSectors, 0x2c);
  file.writeUInt32LE(start(directoryChain), 0x30);
  file.writeUInt32LE(CUTOFF, 0x38);
  file.writeUInt32LE(miniFat.length ? start(miniFatChain) : END_OF_CHAIN, 0x3c);
  file.writeUInt32LE(miniFat.length ? placed[miniFatChain]!.length : 0, 0x40);
  file.writeUInt32LE(END_OF_CHAIN, 0x44);
  file.writeUInt32LE(0, 0x48);
  file.fill(0xff, 0x4c, SECTOR);
  for (let i = 0; i < fatSectors; i++) file.writeUInt32LE(i, 0x4c + i * 4);
  fat.forEach((n, i) => file.writeUInt32LE(n, SECTOR + i * 4));
  chains.forEach((chain, c) => chain.forEach((bytes, i) => bytes.copy(file, (placed[c]![i]! + 1) * SECTOR)));
  return file;
}
