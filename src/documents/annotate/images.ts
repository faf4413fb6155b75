import { DomainError, ErrorCode, fileTooLarge } from '../../errors/domain-error.js';
import { readImageInfo } from '../images/image-info.js';
import { assertSvgSize, rasteriseSvg, SVG_LIMITS } from './svg.js';

/**
 * An image ready to embed: raster bytes, format and its intrinsic size in pixels. For an SVG,
 * `bytes` is the PNG fallback and `svg` the original, embedded beside it (asvg:svgBlip).
 */
export interface ImageAsset {
  bytes: Buffer;
  extension: 'png' | 'jpeg' | 'gif';
  contentType: string;
  widthPx: number;
  heightPx: number;
  svg?: Buffer;
}

export const IMAGE_LIMITS = {
  maxBytes: 15 * 1024 * 1024,
  maxPixels: 60_000_000,
  maxSide: 30_000,
};

const badImage = (where: string, issue: string) =>
  new DomainError(ErrorCode.VALIDATION_ERROR, `${where}: ${issue}`, { details: [{ field: where, issue }] });

const CONTENT_TYPES = { png: 'image/png', jpeg: 'image/jpeg', gif: 'image/gif' } as const;

function sniff(buf: Buffer): Omit<ImageAsset, 'bytes'> | 'svg' | null {
  const info = readImageInfo(buf);
  if (info) return { extension: info.format, contentType: CONTENT_TYPES[info.format], widthPx: info.width, heightPx: info.height };
  const head = buf.toString('utf8', 0, Math.min(buf.length, 4096)).trimStart();
  if (head.startsWith('<') && /<svg[\s>]/i.test(head)) return 'svg';
  return null;
}

const EMBEDDED_DATA_URI = /data:([\w.+/-]*)((?:;[\w=.+-]*)*?)(;base64)?,([A-Za-z0-9+/=%\s]*)/gi;

/**
 * Rasters inside an SVG (data: URIs, also in nested SVGs) are decoded by the renderer at full
 * size: refuse pixel bombs before they reach it.
 */
function assertEmbeddedImagesWithinLimits(svg: Buffer, where: string, depth = 0): void {
  for (const match of svg.toString('utf8').matchAll(EMBEDDED_DATA_URI)) {
    const bytes = match[3] ? Buffer.from(match[4].replace(/\s+/g, ''), 'base64') : percentDecode(match[4]);
    const kind = sniff(bytes);
    if (kind === 'svg') {
      if (depth >= 2) throw badImage(where, 'the SVG nests SVG images more than two levels deep; flatten it or send a PNG.');
      assertEmbeddedImagesWithinLimits(bytes, where, depth + 1);
    } else if (kind && kind.widthPx * kind.heightPx > SVG_LIMITS.maxEmbeddedPixels) {
      throw fileTooLarge(`${where}: the SVG embeds a ${kind.widthPx}×${kind.heightPx} pixel image, above the ${SVG_LIMITS.maxEmbeddedPixels / 1e6} megapixel limit; send a smaller image.`);
    }
  }
}

function svgAsset(svg: Buffer, where: string): ImageAsset {
  assertSvgSize(svg, where);
  assertEmbeddedImagesWithinLimits(svg, where);
  const { png, widthPx, heightPx } = rasteriseSvg(svg, where);
  return { bytes: png, extension: 'png', contentType: 'image/png', widthPx, heightPx, svg };
}

/** Parses image bytes (PNG, JPEG, GIF, SVG), or returns null when they are no image at all. Throws on limits. */
export function parseImage(bytes: Buffer, where: string): ImageAsset | null {
  if (bytes.length > IMAGE_LIMITS.maxBytes) {
    throw fileTooLarge(`${where}: the image is larger than ${IMAGE_LIMITS.maxBytes / 1024 / 1024} MB; send a smaller image.`);
  }
  const kind = sniff(bytes);
  if (kind === 'svg') return svgAsset(bytes, where);
  if (!kind) return null;
  const { widthPx, heightPx } = kind;
  if (widthPx < 1 || heightPx < 1) throw badImage(where, 'the image has no width or height; send a valid PNG, JPEG or GIF.');
  if (widthPx > IMAGE_LIMITS.maxSide || heightPx > IMAGE_LIMITS.maxSide || widthPx * heightPx > IMAGE_LIMITS.maxPixels) {
    throw fileTooLarge(`${where}: the image is ${widthPx}×${heightPx} pixels, above the ${IMAGE_LIMITS.maxPixels / 1e6} megapixel limit; send a smaller image.`);
  }
  return { bytes, ...kind };
}

/** `%XX` escapes of a non-base64 data: URI to bytes; other characters as UTF-8 (e.g. an inline SVG). */
function percentDecode(payload: string): Buffer {
  const text = Buffer.from(payload, 'utf8');
  const out = Buffer.alloc(text.length);
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    const hex = text[i] === 0x25 && i + 2 < text.length ? text.toString('latin1', i + 1, i + 3) : '';
    if (/^[0-9a-f]{2}$/i.test(hex)) {
      out[length++] = parseInt(hex, 16);
      i += 2;
    } else {
      out[length++] = text[i];
    }
  }
  return out.subarray(0, length);
}

const BASE64 = /^[A-Za-z0-9+/_-]+={0,2}$/;

export type ImageSource =
  | { kind: 'bytes'; bytes: Buffer }
  | { kind: 'missing-remote'; url: string }
  | { kind: 'not-binary' };

/**
 * Finds the bytes a value refers to: a data: URI, a `cid:` multipart part or a pre-fetched URL
 * (both looked up in `images`), or raw base64. Anything else is "not binary" (e.g. a typed name).
 */
export function resolveImageSource(value: string, images: Record<string, Buffer | Uint8Array>, where: string): ImageSource {
  const trimmed = value.trim();
  const provided = images[trimmed] ?? (trimmed.startsWith('cid:') ? images[trimmed.slice(4)] : undefined);
  if (provided) return { kind: 'bytes', bytes: Buffer.from(provided.buffer, provided.byteOffset, provided.byteLength) };
  if (/^cid:/i.test(trimmed)) {
    throw badImage(where, `no multipart file part named "${trimmed.slice(4)}" was sent; add it to the request or fix the cid: reference.`);
  }
  if (/^https?:\/\//i.test(trimmed)) return { kind: 'missing-remote', url: trimmed };
  const dataUri = /^data:([^;,]*)((?:;[^;,]*)*?)(;base64)?,(.*)$/is.exec(trimmed);
  if (dataUri) {
    const payload = dataUri[4];
    return { kind: 'bytes', bytes: dataUri[3] ? Buffer.from(payload, 'base64') : percentDecode(payload) };
  }
  const compact = trimmed.replace(/\s+/g, '');
  if (compact.length >= 16 && BASE64.test(compact)) return { kind: 'bytes', bytes: Buffer.from(compact, 'base64') };
  return { kind: 'not-binary' };
}

/** Decodes an image field value; every failure is a 4xx naming the field. */
export function loadImage(value: string, images: Record<string, Buffer | Uint8Array>, where: string): ImageAsset {
  const source = resolveImageSource(value, images, where);
  if (source.kind === 'missing-remote') {
    throw badImage(where, `the image URL ${source.url} was not fetched; image URLs must be http(s) and reachable.`);
  }
  if (source.kind === 'not-binary') {
    throw badImage(where, 'the value is not an image; send base64, a data: URI, a cid: file part or an https URL of a PNG, JPEG, GIF or SVG.');
  }
  const asset = parseImage(source.bytes, where);
  if (!asset) throw badImage(where, 'the data is not a PNG, JPEG, GIF or SVG image.');
  return asset;
}

/** URLs referenced by image/signature values, for the caller to fetch (SSRF-checked) beforehand. */
export function isRemoteImageValue(value: unknown): value is string {
  return typeof value === 'string' && /^https?:\/\//i.test(value.trim());
}
