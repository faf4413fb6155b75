import { warning, type Warning } from '../warnings.js';
import { DomainError } from '../../errors/domain-error.js';
import { parseImage } from '../annotate/images.js';
import { loadSvgRenderer } from '../annotate/svg.js';
import { readImageInfo } from '../images/image-info.js';
import { findAttached, normaliseReference } from './attached-files.js';
import type { ImageInline, RemoteImage, RemoteImageSource } from './types.js';

/**
 * Resolves image sources to embeddable images. data: URIs are decoded; relative names are looked up
 * among the files sent with the document (never on a file system); http(s) images come from the
 * operation's RemoteImageSource (fetched under src/inputs/remote-inputs.ts — this engine does no
 * network I/O); everything else (file:, names not sent, images refused or not fetched) falls back to
 * its alt text with a warning naming it.
 */
export interface ImageSourceOptions {
  /** Files sent with the document, by normalised name (attached-files.ts): relative references are looked up here only. */
  files?: ReadonlyMap<string, Uint8Array>;
  /** http(s) images: absent, none is fetched. */
  remote?: RemoteImageSource;
}

export type ResolvedImage = Omit<ImageInline, 'alt' | 'title'>;


function decodeDataUri(uri: string): Uint8Array | undefined {
  const comma = uri.indexOf(',');
  if (comma < 0) return undefined;
  const header = uri.slice(5, comma);
  const payload = uri.slice(comma + 1);
  if (/;base64$/i.test(header)) return Buffer.from(payload.replace(/\s+/g, ''), 'base64');
  return percentDecode(payload);
}

/** `%XX` escapes to bytes, other characters as UTF-8 (an inline `data:image/svg+xml,<svg …>`). */
function percentDecode(payload: string): Uint8Array {
  const text = Buffer.from(payload, 'utf8');
  const out = Buffer.alloc(text.length);
  let length = 0;
  for (let i = 0; i < text.length; i++) {
    if (text[i] === 0x25 && i + 2 < text.length && isHex(text[i + 1]) && isHex(text[i + 2])) {
      out[length++] = parseInt(text.toString('latin1', i + 1, i + 3), 16);
      i += 2;
    } else {
      out[length++] = text[i];
    }
  }
  return out.subarray(0, length);
}

const isHex = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x46) || (c >= 0x61 && c <= 0x66);

const looksLikeSvg = (bytes: Uint8Array) => {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.byteLength, 4096)).toString('utf8').trimStart();
  return head.startsWith('<') && /<svg[\s>]/i.test(head);
};

/**
 * SVG becomes a PNG drawn by resvg (WebAssembly, no file or network access) with the annotate
 * engine's guards (size, embedded pixel bombs): Word, LibreOffice and pandoc all read PNG.
 */
async function svgToImage(bytes: Uint8Array, src: string, warnings: Warning[]): Promise<ResolvedImage | undefined> {
  try {
    await loadSvgRenderer();
    const asset = parseImage(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), 'image');
    if (!asset) return undefined;
    return { type: 'image', data: asset.bytes, format: 'png', widthPx: asset.widthPx, heightPx: asset.heightPx };
  } catch (err) {
    const reason = err instanceof DomainError ? err.message.replace(/^image: /, '') : 'it could not be rendered';
    warnings.push(warning('IMAGE_NOT_EMBEDDED', `SVG image ${describe(src)} was not embedded (${reason}); its alt text was used instead.`, imageField(src)));
    return undefined;
  }
}

async function toImage(bytes: Uint8Array, src: string, warnings: Warning[]): Promise<ResolvedImage | undefined> {
  const info = readImageInfo(bytes);
  if (!info && looksLikeSvg(bytes)) return svgToImage(bytes, src, warnings);
  if (!info) {
    warnings.push(warning('IMAGE_NOT_EMBEDDED', `Image ${describe(src)} is not a readable PNG, JPEG, GIF or SVG; its alt text was used instead.`, imageField(src)));
    return undefined;
  }
  return { type: 'image', data: bytes, format: info.format, widthPx: info.width, heightPx: info.height };
}

/** The image's source as a warning's field: bounded (a data: URI by its start, a URL to 200 characters). */
function imageField(src: string): string {
  return src.startsWith('data:') ? `${src.slice(0, 30)}…` : src.length > 200 ? `${src.slice(0, 200)}…` : src;
}

function describe(src: string): string {
  return src.startsWith('data:') ? `"${src.slice(0, 30)}…"` : `"${src.length > 200 ? `${src.slice(0, 200)}…` : src}"`;
}

/** A policy's sentence as a parenthesis: "The URL …." → "the URL …". */
const reasonText = (reason: string) => reason.replace(/\.$/, '').replace(/^[A-Z](?=[a-z ])/, (c) => c.toLowerCase());

const remoteUrl = (src: string): URL | undefined => {
  if (!/^https?:/i.test(src)) return undefined;
  try {
    return new URL(src);
  } catch {
    return undefined;
  }
};

/** Every http(s) source's answer from the operation, asked for all at once (one round trip from a worker). */
async function fetchRemote(sources: string[], remote: RemoteImageSource | undefined): Promise<Map<string, RemoteImage>> {
  const urls = sources.filter((src) => remoteUrl(src));
  if (urls.length === 0) return new Map();
  if (!remote) return new Map(urls.map((url) => [url, { refused: 'remote images are not fetched here' }]));
  const answers = await remote.fetch(urls);
  return new Map(urls.map((url, i) => [url, answers[i] ?? { refused: 'no answer for it' }]));
}

export async function resolveImages(
  sources: Iterable<string>,
  options: ImageSourceOptions,
  warnings: Warning[],
): Promise<Map<string, ResolvedImage | undefined>> {
  const resolved = new Map<string, ResolvedImage | undefined>();
  const unique = [...new Set(sources)];
  const remote = await fetchRemote(unique, options.remote);
  for (const src of unique) {
    if (/^data:/i.test(src)) {
      const bytes = decodeDataUri(src);
      resolved.set(src, bytes ? await toImage(bytes, src, warnings) : undefined);
      if (!bytes) warnings.push(warning('IMAGE_NOT_EMBEDDED', `Image ${describe(src)} has a malformed data: URI; its alt text was used instead.`, imageField(src)));
      continue;
    }
    const answer = remote.get(src);
    if (!answer) {
      const name = normaliseReference(src);
      const attached = name === undefined || !options.files ? undefined : findAttached(options.files, name);
      if (attached) {
        resolved.set(src, await toImage(attached, src, warnings));
        continue;
      }
      const message =
        name === undefined
          ? `Image ${describe(src)} is not embedded: only data: URIs, files sent with the document and allowed http(s) URLs can be used; its alt text was used instead.`
          : `Image ${describe(src)} refers to the file "${name.slice(0, 200)}", which was not sent with the document (send it as a \`files\` part with that file name); its alt text was used instead.`;
      warnings.push(warning('IMAGE_NOT_EMBEDDED', message, imageField(src)));
      resolved.set(src, undefined);
      continue;
    }
    if ('refused' in answer) {
      warnings.push(warning('IMAGE_NOT_EMBEDDED', `Remote image ${describe(src)} was not fetched (${reasonText(answer.refused)}); its alt text was used instead.`, imageField(src)));
      resolved.set(src, undefined);
      continue;
    }
    resolved.set(src, await toImage(answer.bytes, src, warnings));
  }
  return resolved;
}
