import { pictureSize, type PixelSize } from './image-size.js';
import { LAYOUT_BUDGET, layoutTooComplex, type LayoutBudget } from './layout-budget.js';

/**
 * Raster pictures of a Word or PowerPoint 97–2003 stream, found by their OfficeArt BLIP record
 * headers ([MS-ODRAW] 2.2.23–2.2.32: recVer 0, the recInstance of the picture type, recType
 * 0xF01D JPEG, 0xF01E PNG, 0xF01F DIB) wherever they lie (a DOC keeps them in the Data stream and
 * after the text of the WordDocument stream, a PPT in its Pictures stream). The picture starts after
 * the record header, one or two 16-byte UIDs and a tag byte; its pixel size is read from its own
 * header, within the record. The scan resumes after each record it read, so it is linear in the
 * stream; a picture lying inside another record's bytes is not looked for (Word and PowerPoint do
 * not write one; a crafted one is left to the office memory watch), nor are TIFF pictures or
 * metafiles (WMF, EMF, PICT: vector drawings).
 */
const HEADER = 8;
const UID = 16;
const TAG = 1;

/** recType → recInstances with one UID, and with two. */
const RASTER_BLIPS: ReadonlyMap<number, readonly [one: readonly number[], two: readonly number[]]> = new Map([
  [0xf01d, [[0x46a, 0x6e2], [0x46b, 0x6e3]]],
  [0xf01e, [[0x6e0], [0x6e1]]],
  [0xf01f, [[0x7a8], [0x7a9]]],
]);

/** A device-independent bitmap's header (BITMAPINFOHEADER and its successors, or the old BITMAPCOREHEADER): no "BM" file header before it. */
function dibSize(data: Buffer): PixelSize | undefined {
  if (data.length < 12) return undefined;
  const headerSize = data.readUInt32LE(0);
  if (headerSize === 12) return { width: data.readUInt16LE(4), height: data.readUInt16LE(6) };
  if (headerSize < 40 || data.length < 12) return undefined;
  return { width: Math.abs(data.readInt32LE(4)), height: Math.abs(data.readInt32LE(8)) };
}

/** Pixel sizes of the raster BLIPs in a stream, in order. */
export function* blipPictures(stream: Buffer): Generator<PixelSize> {
  for (let at = stream.indexOf(0xf0, 3); at !== -1; ) {
    const start = at - 3;
    const type = stream.readUInt16LE(start + 2);
    const instances = RASTER_BLIPS.get(type);
    const verInstance = stream.readUInt16LE(start);
    const uids = instances && (verInstance & 0x0f) === 0 ? (instances[0].includes(verInstance >> 4) ? 1 : instances[1].includes(verInstance >> 4) ? 2 : 0) : 0;
    const end = start + HEADER + (start + HEADER <= stream.length ? stream.readUInt32LE(start + 4) : 0);
    if (uids === 0 || start + HEADER > stream.length || end > stream.length) {
      at = stream.indexOf(0xf0, at + 1);
      continue;
    }
    const picture = stream.subarray(start + HEADER + uids * UID + TAG, end);
    const size = type === 0xf01f ? dibSize(picture) : pictureSize(picture);
    if (size) yield size;
    at = end + 3 < stream.length ? stream.indexOf(0xf0, end + 3) : -1;
  }
}

/** Refuses a stream holding a raster picture past maxPicturePixels (layout-budget.ts's limit and 422). */
export function assertBlipPixels(stream: Buffer | undefined, budget: LayoutBudget = LAYOUT_BUDGET): void {
  if (!stream) return;
  for (const { width, height } of blipPictures(stream)) if (width * height > budget.maxPicturePixels) throw layoutTooComplex('maxPicturePixels', budget);
}
