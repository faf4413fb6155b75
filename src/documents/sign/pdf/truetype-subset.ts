/**
 * TrueType subsets that keep glyph ids: the font's tables are read once per process, and a subset
 * is the glyph outlines a revision draws (and the components of composite glyphs) in a copy of
 * `glyf`, with `loca`/`hmtx` cut after the highest glyph id used. With glyph ids unchanged, a
 * CIDFontType2 with /CIDToGIDMap /Identity uses them as CIDs, and no table but glyf, loca and a
 * few counters depends on the request. Only the tables a PDF reader uses for an embedded
 * TrueType font are written (ISO 32000-1 §9.9: cvt, fpgm, glyf, head, hhea, hmtx, loca, maxp, prep).
 */
export class TrueTypeError extends Error {}

const KEPT_TABLES = ['cvt ', 'fpgm', 'glyf', 'head', 'hhea', 'hmtx', 'loca', 'maxp', 'prep'] as const;
const REQUIRED_TABLES = ['glyf', 'head', 'hhea', 'hmtx', 'loca', 'maxp'] as const;
/** Composite glyphs nest (a glyph made of glyphs made of glyphs); fonts do not go deeper than a few levels. */
const MAX_COMPONENT_DEPTH = 8;

// Composite glyph flags (OpenType glyf table).
const ARG_1_AND_2_ARE_WORDS = 0x0001;
const WE_HAVE_A_SCALE = 0x0008;
const MORE_COMPONENTS = 0x0020;
const WE_HAVE_AN_X_AND_Y_SCALE = 0x0040;
const WE_HAVE_A_TWO_BY_TWO = 0x0080;

function checksum(data: Uint8Array): number {
  let sum = 0;
  const whole = data.length & ~3;
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  for (let i = 0; i < whole; i += 4) sum = (sum + view.getUint32(i)) >>> 0;
  if (whole < data.length) {
    let last = 0;
    for (let i = whole; i < whole + 4; i++) last = (last << 8) | (data[i] ?? 0);
    sum = (sum + (last >>> 0)) >>> 0;
  }
  return sum;
}

const padded = (n: number) => (n + 3) & ~3;

export class TrueTypeSubsetter {
  private readonly tables = new Map<string, Buffer>();
  readonly numGlyphs: number;
  private readonly numberOfHMetrics: number;
  /** Start of each glyph's outline in `glyf` (numGlyphs + 1 entries). */
  private readonly offsets: Uint32Array;

  constructor(font: Buffer) {
    if (font.length < 12) throw new TrueTypeError('not a TrueType font');
    const numTables = font.readUInt16BE(4);
    if (12 + numTables * 16 > font.length) throw new TrueTypeError('truncated table directory');
    for (let i = 0; i < numTables; i++) {
      const at = 12 + i * 16;
      const tag = font.toString('latin1', at, at + 4);
      const offset = font.readUInt32BE(at + 8);
      const length = font.readUInt32BE(at + 12);
      if (offset + length > font.length) throw new TrueTypeError(`table ${tag} lies outside the file`);
      if ((KEPT_TABLES as readonly string[]).includes(tag)) this.tables.set(tag, font.subarray(offset, offset + length));
    }
    for (const tag of REQUIRED_TABLES) if (!this.tables.has(tag)) throw new TrueTypeError(`no ${tag} table (not a TrueType-outline font)`);
    this.numGlyphs = this.table('maxp').readUInt16BE(4);
    this.numberOfHMetrics = this.table('hhea').readUInt16BE(34);
    const long = this.table('head').readInt16BE(50) === 1;
    const loca = this.table('loca');
    if (loca.length < (this.numGlyphs + 1) * (long ? 4 : 2)) throw new TrueTypeError('loca is shorter than maxp says');
    this.offsets = new Uint32Array(this.numGlyphs + 1);
    for (let gid = 0; gid <= this.numGlyphs; gid++) this.offsets[gid] = long ? loca.readUInt32BE(gid * 4) : loca.readUInt16BE(gid * 2) * 2;
    const glyfLength = this.table('glyf').length;
    for (let gid = 0; gid < this.numGlyphs; gid++) {
      if (this.offsets[gid]! > this.offsets[gid + 1]! || this.offsets[gid + 1]! > glyfLength) throw new TrueTypeError(`glyph ${gid} lies outside glyf`);
    }
  }

  private table(tag: string): Buffer {
    return this.tables.get(tag)!;
  }

  private outline(gid: number): Buffer {
    return this.table('glyf').subarray(this.offsets[gid], this.offsets[gid + 1]);
  }

  /** The glyph ids a composite glyph is made of (empty for a simple or an empty glyph). */
  private components(gid: number): number[] {
    const data = this.outline(gid);
    if (data.length < 10 || data.readInt16BE(0) >= 0) return [];
    const out: number[] = [];
    let at = 10;
    for (;;) {
      if (at + 4 > data.length) throw new TrueTypeError(`composite glyph ${gid} is truncated`);
      const flags = data.readUInt16BE(at);
      out.push(data.readUInt16BE(at + 2));
      at += 4 + (flags & ARG_1_AND_2_ARE_WORDS ? 4 : 2);
      if (flags & WE_HAVE_A_SCALE) at += 2;
      else if (flags & WE_HAVE_AN_X_AND_Y_SCALE) at += 4;
      else if (flags & WE_HAVE_A_TWO_BY_TWO) at += 8;
      if (!(flags & MORE_COMPONENTS)) return out;
    }
  }

  /** The glyphs to keep: .notdef, the ones asked for and every component they are built from. */
  private closure(gids: Iterable<number>): Set<number> {
    const keep = new Set<number>([0]);
    const visit = (gid: number, depth: number) => {
      if (gid >= this.numGlyphs || keep.has(gid) || depth > MAX_COMPONENT_DEPTH) return;
      keep.add(gid);
      for (const component of this.components(gid)) visit(component, depth + 1);
    };
    for (const gid of gids) visit(gid, 0);
    return keep;
  }

  /** A font file holding the outlines of `gids` (ids unchanged); every other glyph is empty. */
  subset(gids: Iterable<number>): Buffer {
    const keep = this.closure(gids);
    const count = Math.max(...keep) + 1;
    const loca = Buffer.alloc((count + 1) * 4);
    const outlines: Buffer[] = [];
    let glyfLength = 0;
    for (let gid = 0; gid < count; gid++) {
      loca.writeUInt32BE(glyfLength, gid * 4);
      if (!keep.has(gid)) continue;
      const outline = this.outline(gid);
      if (outline.length === 0) continue;
      outlines.push(outline);
      if (outline.length % 4) outlines.push(Buffer.alloc(4 - (outline.length % 4)));
      glyfLength += padded(outline.length);
    }
    loca.writeUInt32BE(glyfLength, count * 4);
    const metrics = Math.min(this.numberOfHMetrics, count);
    const hmtx = this.table('hmtx').subarray(0, metrics * 4 + (count - metrics) * 2);
    const head = Buffer.from(this.table('head'));
    head.writeUInt32BE(0, 8); // checkSumAdjustment, set below
    head.writeInt16BE(1, 50); // long loca offsets
    const hhea = Buffer.from(this.table('hhea'));
    hhea.writeUInt16BE(metrics, 34);
    const maxp = Buffer.from(this.table('maxp'));
    maxp.writeUInt16BE(count, 4);

    const tables = new Map<string, Buffer>([['glyf', Buffer.concat(outlines, glyfLength)], ['head', head], ['hhea', hhea], ['hmtx', hmtx], ['loca', loca], ['maxp', maxp]]);
    for (const tag of ['cvt ', 'fpgm', 'prep']) if (this.tables.has(tag)) tables.set(tag, this.table(tag));
    const tags = [...tables.keys()].sort();
    return assemble(tags.map((tag) => [tag, tables.get(tag)!] as const));
  }
}

/** The sfnt file: offset table, table records (sorted by tag), tables padded to 4 bytes. */
function assemble(tables: readonly (readonly [string, Buffer])[]): Buffer {
  const numTables = tables.length;
  const entrySelector = Math.floor(Math.log2(numTables));
  const searchRange = 2 ** entrySelector * 16;
  const directory = Buffer.alloc(12 + numTables * 16);
  directory.writeUInt32BE(0x00010000, 0);
  directory.writeUInt16BE(numTables, 4);
  directory.writeUInt16BE(searchRange, 6);
  directory.writeUInt16BE(entrySelector, 8);
  directory.writeUInt16BE(numTables * 16 - searchRange, 10);
  const parts: Buffer[] = [directory];
  let offset = directory.length;
  tables.forEach(([tag, data], i) => {
    const at = 12 + i * 16;
    directory.write(tag, at, 'latin1');
    directory.writeUInt32BE(checksum(data), at + 4);
    directory.writeUInt32BE(offset, at + 8);
    directory.writeUInt32BE(data.length, at + 12);
    parts.push(data);
    if (data.length % 4) parts.push(Buffer.alloc(4 - (data.length % 4)));
    offset += padded(data.length);
  });
  const file = Buffer.concat(parts, offset);
  // The whole-font checksum adjustment goes into head (whose own checksum was taken with 0 there).
  const headAt = directory.readUInt32BE(12 + tables.findIndex(([tag]) => tag === 'head') * 16 + 8);
  file.writeUInt32BE((0xb1b0afba - checksum(file)) >>> 0, headAt + 8);
  return file;
}
