import { readFileSync } from 'node:fs';
import fontkit from '@pdf-lib/fontkit';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TrueTypeError, TrueTypeSubsetter } from '../../../src/documents/sign/pdf/truetype-subset.js';

/**
 * The glyph-id-keeping TrueType subsetter against fontkit's reading of the original font and of
 * the subset: every kept glyph has the same outline (path commands) and advance width under the
 * same id, composite glyphs bring their components, every other glyph is empty, and the file's
 * checksums hold.
 */
const DEJAVU = ['/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf', '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf'];

function checksum(data: Buffer): number {
  let sum = 0;
  for (let i = 0; i < data.length; i += 4) sum = (sum + Buffer.concat([data.subarray(i, i + 4), Buffer.alloc(4)]).readUInt32BE(0)) >>> 0;
  return sum;
}

describe.each(DEJAVU)('TrueTypeSubsetter on %s', (file) => {
  const bytes = readFileSync(file);
  const original = fontkit.create(bytes);
  const subsetter = new TrueTypeSubsetter(bytes);
  const gidOf = (text: string) => [...text].map((ch) => original.glyphForCodePoint(ch.codePointAt(0)!).id);

  it('keeps outlines and advance widths of the glyphs asked for under their own ids; others are empty', () => {
    fc.assert(fc.property(fc.array(fc.integer({ min: 1, max: subsetter.numGlyphs - 1 }), { minLength: 1, maxLength: 40 }), (gids) => {
      const subset = fontkit.create(subsetter.subset(gids));
      for (const gid of gids) {
        const before = original.getGlyph(gid);
        const after = subset.getGlyph(gid);
        expect(after.path.toSVG(), `glyph ${gid}`).toBe(before.path.toSVG());
        expect(after.advanceWidth).toBe(before.advanceWidth);
      }
      expect(subset.numGlyphs).toBeGreaterThanOrEqual(Math.max(...gids) + 1); // components may lie further
      const kept = new Set(gids);
      const unused = [...Array(subset.numGlyphs).keys()].filter((gid) => gid > 0 && !kept.has(gid));
      let empty = 0;
      for (const gid of unused.slice(0, 50)) {
        // An unused glyph is empty, unless it is a component some kept glyph is built from.
        const path = subset.getGlyph(gid).path.toSVG();
        if (path === '') empty++;
        else expect(path).toBe(original.getGlyph(gid).path.toSVG());
      }
      expect(empty).toBeGreaterThanOrEqual(Math.min(unused.length, 50) - 10 * gids.length);
    }), { numRuns: 30 });
  });

  it('composite glyphs (accented letters) bring their components', () => {
    const accented = gidOf('ÅéŁžǅ');
    const subset = fontkit.create(subsetter.subset(accented));
    for (const gid of accented) expect(subset.getGlyph(gid).path.toSVG()).toBe(original.getGlyph(gid).path.toSVG());
  });

  it('writes a well-formed sfnt: sorted table records, table checksums and the whole-file checksum adjustment', () => {
    const font = subsetter.subset(gidOf('Digitally signed by Zoë'));
    const numTables = font.readUInt16BE(4);
    const tags: string[] = [];
    for (let i = 0; i < numTables; i++) {
      const at = 12 + i * 16;
      const tag = font.toString('latin1', at, at + 4);
      tags.push(tag);
      const offset = font.readUInt32BE(at + 8);
      const length = font.readUInt32BE(at + 12);
      const data = Buffer.from(font.subarray(offset, offset + length));
      if (tag === 'head') data.writeUInt32BE(0, 8);
      expect(checksum(data), tag).toBe(font.readUInt32BE(at + 4));
    }
    expect(tags).toEqual([...tags].sort());
    expect(tags).toEqual(expect.arrayContaining(['glyf', 'head', 'hhea', 'hmtx', 'loca', 'maxp']));
    expect(checksum(font)).toBe(0xb1b0afba);
  });

  it('refuses what is not a TrueType-outline font', () => {
    expect(() => new TrueTypeSubsetter(Buffer.from('not a font at all'))).toThrow(TrueTypeError);
    const truncated = Buffer.from(bytes.subarray(0, 200));
    expect(() => new TrueTypeSubsetter(truncated)).toThrow(TrueTypeError);
  });
});
