import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { deflateSync } from 'node:zlib';
import fontkit, { type Font, type Glyph } from '@pdf-lib/fontkit';
import { DomainError, ErrorCode } from '../../../errors/domain-error.js';
import { pdfDict, pdfName, pdfStream, textString, type PdfRef } from '../../pdf/objects.js';
import type { IncrementalWriter } from '../../pdf/writer.js';
import { TrueTypeSubsetter } from './truetype-subset.js';

/**
 * The fonts of the audit page and the signature appearance: DejaVu Sans and DejaVu Sans Bold
 * (Debian fonts-dejavu-core), embedded as subsets in Type0/CIDFontType2 fonts with Identity-H
 * encoding and a /ToUnicode CMap, so names in any script DejaVu covers print and stay
 * extractable. Code points DejaVu has no glyph for (CJK, for one) print as '?'. Right-to-left
 * runs (Hebrew, Arabic...) are drawn in visual order but without Arabic shaping: letters appear
 * in their isolated forms.
 */
export type FontKey = 'regular' | 'bold';

const FONT_DIR = '/usr/share/fonts/truetype/dejavu';
const FONT_FILES: Record<FontKey, string> = { regular: 'DejaVuSans.ttf', bold: 'DejaVuSans-Bold.ttf' };
const STEM_V: Record<FontKey, number> = { regular: 80, bold: 140 };
const MISSING = '?';

interface LoadedFont {
  font: Font;
  /** The font's tables, read once, for the per-revision subsets. */
  subsetter: TrueTypeSubsetter;
  /** Glyph per code point (undefined when the font has none); bounded by the font's cmap. */
  glyphs: Map<number, Glyph | undefined>;
}

/** Parsed once per process (each worker thread has its own copy). */
const loaded = new Map<FontKey, LoadedFont>();

function loadFont(key: FontKey): LoadedFont {
  let entry = loaded.get(key);
  if (!entry) {
    const file = path.join(FONT_DIR, FONT_FILES[key]);
    let bytes: Buffer;
    try {
      bytes = readFileSync(file);
    } catch {
      throw new DomainError(ErrorCode.SIGNING_FONT_MISSING,
        `The audit page font ${file} is not installed on this server (Debian package fonts-dejavu-core). Sign with certificate.enabled=false, or ask the operator to install it.`);
    }
    entry = { font: fontkit.create(bytes), subsetter: new TrueTypeSubsetter(bytes), glyphs: new Map() };
    loaded.set(key, entry);
  }
  return entry;
}

function glyphFor(entry: LoadedFont, codePoint: number): Glyph | undefined {
  if (entry.glyphs.has(codePoint)) return entry.glyphs.get(codePoint);
  const glyph = entry.font.hasGlyphForCodePoint(codePoint) ? entry.font.glyphForCodePoint(codePoint) : undefined;
  entry.glyphs.set(codePoint, glyph);
  return glyph;
}

const CONTROL = /[\p{Cc}\p{Cs}]/u;
const IGNORABLE = /\p{Default_Ignorable_Code_Point}/u;

/**
 * The text as it will be drawn: NFC, line breaks and tabs as spaces, other control characters
 * and code points without a glyph as '?', invisible format characters without a glyph dropped.
 */
export function printable(text: string, key: FontKey): string {
  const entry = loadFont(key);
  let out = '';
  for (const ch of text.normalize('NFC')) {
    if (ch === '\t' || ch === '\n' || ch === '\r') { out += ' '; continue; }
    if (CONTROL.test(ch)) { out += MISSING; continue; }
    if (glyphFor(entry, ch.codePointAt(0)!)) { out += ch; continue; }
    if (!IGNORABLE.test(ch)) out += MISSING;
  }
  return out;
}

/** Width in points of already printable text. */
export function printableWidth(text: string, key: FontKey, size: number): number {
  const entry = loadFont(key);
  let units = 0;
  for (const ch of text) units += glyphFor(entry, ch.codePointAt(0)!)?.advanceWidth ?? 0;
  return (units * size) / entry.font.unitsPerEm;
}

export const textWidth = (text: string, key: FontKey, size: number) => printableWidth(printable(text, key), key, size);

const RTL = /[\p{Script=Hebrew}\p{Script=Arabic}\p{Script=Syriac}\p{Script=Thaana}\p{Script=Nko}\p{Script=Samaritan}\p{Script=Mandaic}\p{Script=Adlam}]/u;
const STRONG_LTR = /\p{L}/u;
const MARK = /\p{M}/u;
const DIGIT = /\p{Nd}/u;
const NUMBER_SEPARATOR = /[.,:/]/;
const OPENING = /[([{<«]/;
const CLOSING = /[)\]}>»]/;
const MIRRORED: Record<string, string> = { '(': ')', ')': '(', '[': ']', ']': '[', '{': '}', '}': '{', '<': '>', '>': '<', '«': '»', '»': '«' };

/** A right-to-left run reversed, keeping numbers left to right and marks after their base. */
function reverseRun(run: string[]): string[] {
  const units: string[][] = [];
  run.forEach((ch, k) => {
    const last = units.at(-1);
    const numeric = last !== undefined && DIGIT.test(last[0]);
    if (last && MARK.test(ch)) last.push(ch);
    else if (numeric && (DIGIT.test(ch) || (NUMBER_SEPARATOR.test(ch) && DIGIT.test(run[k + 1] ?? '')))) last.push(ch);
    else units.push([MIRRORED[ch] ?? ch]);
  });
  return units.reverse().flat();
}

/**
 * A left-to-right line in visual order: each right-to-left run (from a right-to-left letter to
 * the last one before the next left-to-right letter) is reversed. A simplification of the
 * Unicode bidi algorithm that is right for names and short values.
 */
export function visualOrder(line: string): string {
  const chars = [...line];
  if (!chars.some((ch) => RTL.test(ch))) return line;
  const out: string[] = [];
  let i = 0;
  while (i < chars.length) {
    if (!RTL.test(chars[i])) { out.push(chars[i++]); continue; }
    let end = i;
    let open = 0;
    for (let j = i + 1; j < chars.length && !(STRONG_LTR.test(chars[j]) && !RTL.test(chars[j])); j++) {
      if (OPENING.test(chars[j])) open++;
      // A bracket opened inside the run closes inside it, so the pair mirrors together.
      if (CLOSING.test(chars[j]) && open > 0) { open--; end = j; }
      if (RTL.test(chars[j]) || MARK.test(chars[j])) end = j;
    }
    out.push(...reverseRun(chars.slice(i, end + 1)));
    i = end + 1;
  }
  return out.join('');
}

/** Draws text with one of the revision's fonts: the "<hex>" operand for Tj. */
export type ShowText = (text: string, key: FontKey) => string;

const hex4 = (n: number) => n.toString(16).toUpperCase().padStart(4, '0');

function utf16Hex(text: string): string {
  return Buffer.from(text, 'utf16le').swap16().toString('hex').toUpperCase();
}

/**
 * One subset font of a revision: collects the glyphs drawn, then writes the font objects. CIDs are
 * the font's own glyph ids (/CIDToGIDMap /Identity), so drawing needs no per-revision numbering and
 * the font file is cut from tables read once (truetype-subset.ts).
 */
class FontSubset {
  /** CID (= glyph id) → the glyph and the text it stands for. */
  private readonly used = new Map<number, { glyph: Glyph; text: string }>();

  constructor(private readonly key: FontKey, readonly ref: PdfRef) {}

  encode(text: string): string {
    const entry = loadFont(this.key);
    let hex = '';
    for (const ch of visualOrder(printable(text, this.key))) {
      const glyph = glyphFor(entry, ch.codePointAt(0)!)!;
      if (!this.used.has(glyph.id)) this.used.set(glyph.id, { glyph, text: ch });
      hex += hex4(glyph.id);
    }
    return `<${hex}>`;
  }

  /** Subset tag: six capitals derived from the glyph set, as the PDF spec asks of subsets. */
  private baseFont(postscriptName: string): string {
    const digest = createHash('sha256').update(postscriptName).update([...this.used.keys()].map((cid) => this.used.get(cid)!.glyph.id).join(',')).digest();
    const tag = [...digest.subarray(0, 6)].map((b) => String.fromCharCode(65 + (b % 26))).join('');
    return `${tag}+${postscriptName.replace(/[^A-Za-z0-9-]/g, '')}`;
  }

  /** The /W array: runs of consecutive CIDs with their widths. */
  private widths(scale: number): (number | number[])[] {
    const cids = [...this.used.keys()].sort((a, b) => a - b);
    const out: (number | number[])[] = [];
    let run: number[] = [];
    cids.forEach((cid, i) => {
      if (i === 0 || cid !== cids[i - 1] + 1) {
        run = [];
        out.push(cid, run);
      }
      run.push(Math.round(this.used.get(cid)!.glyph.advanceWidth * scale));
    });
    return out;
  }

  private toUnicode(): Buffer {
    const entries = [...this.used.entries()].sort((a, b) => a[0] - b[0]);
    const chunks: string[] = [];
    for (let i = 0; i < entries.length; i += 100) {
      const slice = entries.slice(i, i + 100);
      chunks.push(`${slice.length} beginbfchar\n${slice.map(([cid, u]) => `<${hex4(cid)}> <${utf16Hex(u.text)}>`).join('\n')}\nendbfchar`);
    }
    return Buffer.from([
      '/CIDInit /ProcSet findresource begin', '12 dict begin', 'begincmap',
      '/CIDSystemInfo <</Registry (Adobe) /Ordering (UCS) /Supplement 0>> def',
      '/CMapName /Adobe-Identity-UCS def', '/CMapType 2 def',
      '1 begincodespacerange', '<0000> <FFFF>', 'endcodespacerange',
      ...chunks,
      'endcmap', 'CMapName currentdict /CMap defineresource pop', 'end', 'end',
    ].join('\n'), 'latin1');
  }

  async write(writer: IncrementalWriter): Promise<void> {
    const { font } = loadFont(this.key);
    const scale = 1000 / font.unitsPerEm;
    const n = (v: number) => Math.round(v * scale);
    const baseFont = pdfName(this.baseFont(font.postscriptName ?? FONT_FILES[this.key].replace(/\.ttf$/, '')));
    const fontFile = loadFont(this.key).subsetter.subset(this.used.keys());
    const [fileRef, descriptorRef, cidRef, cmapRef] = [writer.allocate(), writer.allocate(), writer.allocate(), writer.allocate()];
    // Stored as it is: TrueType outlines deflate by a quarter at most, for most of this stage's time.
    writer.set(fileRef, pdfStream(pdfDict({ Length1: fontFile.length }), fontFile));
    const { minX, minY, maxX, maxY } = font.bbox;
    const capHeight = font.capHeight || font.ascent;
    writer.set(descriptorRef, pdfDict({
      Type: pdfName('FontDescriptor'), FontName: baseFont, Flags: 4, FontBBox: [minX, minY, maxX, maxY].map(n),
      ItalicAngle: font.italicAngle, Ascent: n(font.ascent), Descent: n(font.descent), CapHeight: n(capHeight), StemV: STEM_V[this.key], FontFile2: fileRef,
    }));
    writer.set(cidRef, pdfDict({
      Type: pdfName('Font'), Subtype: pdfName('CIDFontType2'), BaseFont: baseFont,
      CIDSystemInfo: pdfDict({ Registry: textString('Adobe'), Ordering: textString('Identity'), Supplement: 0 }),
      FontDescriptor: descriptorRef, CIDToGIDMap: pdfName('Identity'), DW: 1000, W: this.widths(scale),
    }));
    writer.set(cmapRef, pdfStream(pdfDict({ Filter: pdfName('FlateDecode') }), deflateSync(this.toUnicode())));
    writer.set(this.ref, pdfDict({
      Type: pdfName('Font'), Subtype: pdfName('Type0'), BaseFont: baseFont, Encoding: pdfName('Identity-H'), DescendantFonts: [cidRef], ToUnicode: cmapRef,
    }));
  }
}

/**
 * The fonts one signing revision draws with. `ref` reserves the Type0 font object the first
 * time a font is used; `write` adds every used font's objects to the same incremental update.
 */
export class RevisionFonts {
  private readonly subsets = new Map<FontKey, FontSubset>();

  constructor(private readonly writer: IncrementalWriter) {}

  private subsetFor(key: FontKey): FontSubset {
    let subset = this.subsets.get(key);
    if (!subset) {
      subset = new FontSubset(key, this.writer.allocate());
      this.subsets.set(key, subset);
    }
    return subset;
  }

  ref(key: FontKey): PdfRef {
    return this.subsetFor(key).ref;
  }

  readonly show: ShowText = (text, key) => this.subsetFor(key).encode(text);

  async write(): Promise<void> {
    for (const subset of this.subsets.values()) await subset.write(this.writer);
  }
}
