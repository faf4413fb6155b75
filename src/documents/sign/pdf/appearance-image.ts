import { inflateSync } from 'node:zlib';
import {
  PDFArray, PDFBool, PDFDict as LibDict, PDFDocument, PDFHexString, PDFName, PDFNull, PDFNumber, PDFRawStream, PDFRef as LibRef, PDFString,
  type PDFObject,
} from 'pdf-lib';
import { ErrorCode, fileTooLarge, invalidFile, DomainError } from '../../../errors/domain-error.js';
import { readImageInfo, type ImageInfo } from '../../images/image-info.js';
import { PdfDict, hexString, pdfName, pdfStream, type PdfRef, type PdfValue } from '../../pdf/objects.js';
import type { IncrementalWriter } from '../../pdf/writer.js';

/**
 * The image of a visible signature (appearance.image): PNG or JPEG, checked from its bytes and
 * header before anything is decoded, then turned into an image XObject by pdf-lib (which decodes
 * PNG into colour and alpha planes and embeds JPEG as it is) and carried into the signing
 * revision as objects of documents/pdf's model.
 */
export const MAX_APPEARANCE_IMAGE_BYTES = 1024 * 1024;
/** 4 megapixels: 2000 × 2000, far more than a signature box shows; PNG decodes to 4 bytes a pixel. */
export const MAX_APPEARANCE_IMAGE_PIXELS = 4_000_000;

export interface EmbeddedImage {
  ref: PdfRef;
  width: number;
  height: number;
}

const PNG_CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

/** Format and size from the header, within the byte and pixel limits; nothing is decoded. */
export function inspectAppearanceImage(bytes: Uint8Array): ImageInfo & { format: 'png' | 'jpeg' } {
  if (bytes.length > MAX_APPEARANCE_IMAGE_BYTES) {
    throw fileTooLarge(`appearance.image is ${(bytes.length / 1048576).toFixed(1)} MB; the signature image may be at most 1 MB. Send a smaller PNG or JPEG.`);
  }
  const info = readImageInfo(bytes);
  if (!info || info.format === 'gif') throw invalidFile('appearance.image must be a PNG or JPEG image.', { details: [{ field: 'appearance.image', issue: 'PNG or JPEG' }] });
  if (info.width * info.height > MAX_APPEARANCE_IMAGE_PIXELS) {
    throw new DomainError(ErrorCode.DOCUMENT_TOO_COMPLEX,
      `appearance.image is ${info.width} × ${info.height} pixels; a signature image may have at most 4 megapixels (e.g. 2000 × 2000). Scale it down and send it again.`);
  }
  return info as ImageInfo & { format: 'png' | 'jpeg' };
}

/**
 * A PNG's compressed pixel data inflates to at most what its header announces (rows of pixels
 * plus a filter byte, interlaced passes included): checked with a bounded inflate before the
 * decoder, whose own inflate is not bounded, sees it.
 */
function assertPngInflatesWithinHeader(bytes: Uint8Array, info: ImageInfo): void {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const bitDepth = data[24] ?? 8;
  const channels = PNG_CHANNELS[data[25] ?? -1];
  if (!channels) throw invalidFile('appearance.image is not a PNG this service reads (unknown colour type).');
  const rowBytes = Math.ceil((info.width * channels * bitDepth) / 8);
  const bound = (rowBytes + 16) * info.height + 64;
  const idat: Buffer[] = [];
  for (let at = 8; at + 8 <= data.length;) {
    const length = data.readUInt32BE(at);
    const type = data.toString('latin1', at + 4, at + 8);
    if (at + 12 + length > data.length) break;
    if (type === 'IDAT') idat.push(data.subarray(at + 8, at + 8 + length));
    if (type === 'IEND') break;
    at += 12 + length;
  }
  try {
    inflateSync(Buffer.concat(idat), { maxOutputLength: bound });
  } catch (err) {
    if (err instanceof RangeError) throw new DomainError(ErrorCode.DOCUMENT_TOO_COMPLEX, 'appearance.image holds more pixel data than its header announces; it was not decoded.');
    throw invalidFile('appearance.image is a damaged PNG (its pixel data does not inflate).');
  }
}

/** pdf-lib's objects as documents/pdf's model; references become new objects of the revision. */
class ObjectCarrier {
  private readonly carried = new Map<string, PdfRef>();

  constructor(private readonly doc: PDFDocument, private readonly writer: IncrementalWriter) {}

  ref(ref: LibRef): PdfRef {
    const key = ref.toString();
    let ours = this.carried.get(key);
    if (!ours) {
      ours = this.writer.allocate();
      this.carried.set(key, ours);
      this.writer.set(ours, this.value(this.doc.context.lookup(ref)));
    }
    return ours;
  }

  value(object: PDFObject | undefined, depth = 0): PdfValue {
    if (depth > 16) throw new Error('image objects nested too deeply');
    if (object === undefined || object === PDFNull) return null;
    if (object instanceof PDFBool) return object.asBoolean();
    if (object instanceof PDFNumber) return object.asNumber();
    if (object instanceof PDFName) return pdfName(object.decodeText());
    if (object instanceof PDFString || object instanceof PDFHexString) return hexString(object.asBytes());
    if (object instanceof LibRef) return this.ref(object);
    if (object instanceof PDFArray) return object.asArray().map((item) => this.value(item, depth + 1));
    if (object instanceof LibDict) return this.dict(object, depth);
    if (object instanceof PDFRawStream) return pdfStream(this.dict(object.dict, depth, ['Length']), object.contents);
    throw new Error(`unexpected ${object.constructor.name} in an embedded image`);
  }

  private dict(dict: LibDict, depth: number, skip: string[] = []): PdfDict {
    const entries = new Map<string, PdfValue>();
    for (const [key, item] of dict.entries()) {
      const name = key.decodeText();
      if (!skip.includes(name)) entries.set(name, this.value(item, depth + 1));
    }
    return new PdfDict(entries);
  }
}

/** Adds the image XObject (and its soft mask, for PNG with transparency) to the revision. */
export async function embedAppearanceImage(bytes: Uint8Array, writer: IncrementalWriter): Promise<EmbeddedImage> {
  const info = inspectAppearanceImage(bytes);
  if (info.format === 'png') assertPngInflatesWithinHeader(bytes, info);
  const doc = await PDFDocument.create({ updateMetadata: false });
  let image;
  try {
    image = info.format === 'png' ? await doc.embedPng(bytes) : await doc.embedJpg(bytes);
    await image.embed();
  } catch {
    throw invalidFile(`appearance.image is a damaged ${info.format.toUpperCase()} image; it could not be read.`);
  }
  return { ref: new ObjectCarrier(doc, writer).ref(image.ref), width: image.width, height: image.height };
}
