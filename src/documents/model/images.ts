import { warning, type Warning } from '../warnings.js';
import { DomainError } from '../../errors/domain-error.js';
import { safeFetch } from '../../inputs/safe-fetch.js';
import { parseImage } from '../annotate/images.js';
import { loadSvgRenderer } from '../annotate/svg.js';
import { readImageInfo } from '../images/image-info.js';
import { normaliseReference } from './attached-files.js';
import type { ImageInline } from './types.js';

/**
 * Resolves image sources to embeddable images. data: URIs are decoded; relative names are looked up
 * among the files sent with the document (never on a file system); http(s) images are fetched only
 * from allow-listed hosts (through safeFetch, SSRF-guarded); everything else (file:, other hosts,
 * names not sent) falls back to its alt text with a warning naming it.
 */
export interface ImageSourceOptions {
  allowHosts: string[];
  /** Files sent with the document, by normalised name (attached-files.ts): relative references are looked up here only. */
  files?: ReadonlyMap<string, Uint8Array>;
  /** OUTBOUND_ALLOW_PRIVATE_ADDRESSES. */
  allowPrivateAddresses?: boolean;
  maxImageBytes?: number;
  timeoutMs?: number;
  maxRemoteImages?: number;
}

export type ResolvedImage = Omit<ImageInline, 'alt' | 'title'>;

const DEFAULT_MAX_IMAGE_BYTES = 10 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_MAX_REMOTE = 20;

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

function hostAllowed(host: string, allowHosts: string[]): boolean {
  const h = host.toLowerCase();
  return allowHosts.some((pattern) => {
    const p = pattern.toLowerCase();
    return p.startsWith('*.') ? h.endsWith(p.slice(1)) : h === p;
  });
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

/**
 * The file a normalised reference names: the file of that exact name, else — multipart clients send
 * a part's file name without its folders — the one file of the reference's last segment sent without
 * a folder (none when two folders' files could be meant).
 */
function findAttached(files: ReadonlyMap<string, Uint8Array>, name: string): Uint8Array | undefined {
  const exact = files.get(name);
  if (exact || !name.includes('/')) return exact;
  return files.get(name.slice(name.lastIndexOf('/') + 1));
}

export async function resolveImages(
  sources: Iterable<string>,
  options: ImageSourceOptions,
  warnings: Warning[],
): Promise<Map<string, ResolvedImage | undefined>> {
  const resolved = new Map<string, ResolvedImage | undefined>();
  let remoteCount = 0;
  for (const src of new Set(sources)) {
    if (/^data:/i.test(src)) {
      const bytes = decodeDataUri(src);
      resolved.set(src, bytes ? await toImage(bytes, src, warnings) : undefined);
      if (!bytes) warnings.push(warning('IMAGE_NOT_EMBEDDED', `Image ${describe(src)} has a malformed data: URI; its alt text was used instead.`, imageField(src)));
      continue;
    }
    let url: URL | undefined;
    try {
      url = /^https?:/i.test(src) ? new URL(src) : undefined;
    } catch {
      url = undefined;
    }
    if (!url) {
      const name = normaliseReference(src);
      const attached = name === undefined || !options.files ? undefined : findAttached(options.files, name);
      if (attached) {
        resolved.set(src, await toImage(attached, src, warnings));
        continue;
      }
      const message =
        name === undefined
          ? `Image ${describe(src)} is not embedded: only data: URIs, files sent with the document and allow-listed http(s) hosts can be used; its alt text was used instead.`
          : `Image ${describe(src)} refers to the file "${name.slice(0, 200)}", which was not sent with the document (send it as a \`files\` part with that file name); its alt text was used instead.`;
      warnings.push(warning('IMAGE_NOT_EMBEDDED', message, imageField(src)));
      resolved.set(src, undefined);
      continue;
    }
    if (!hostAllowed(url.hostname, options.allowHosts)) {
      warnings.push(warning('IMAGE_NOT_EMBEDDED', `Remote image ${describe(src)} was not fetched (host not allow-listed); its alt text was used instead.`, imageField(src)));
      resolved.set(src, undefined);
      continue;
    }
    if (remoteCount++ >= (options.maxRemoteImages ?? DEFAULT_MAX_REMOTE)) {
      warnings.push(warning('IMAGE_NOT_EMBEDDED', `Remote image ${describe(src)} was not fetched: too many remote images; its alt text was used instead.`, imageField(src)));
      resolved.set(src, undefined);
      continue;
    }
    try {
      const bytes = await safeFetch(src, {
        allowHttp: true,
        // The allow-list holds for every redirect hop, not only the first URL.
        isHostAllowed: (host) => hostAllowed(host, options.allowHosts),
        allowPrivateAddresses: options.allowPrivateAddresses,
        maxBytes: options.maxImageBytes ?? DEFAULT_MAX_IMAGE_BYTES,
        timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      });
      resolved.set(src, await toImage(new Uint8Array(bytes), src, warnings));
    } catch (err) {
      warnings.push(warning('IMAGE_NOT_EMBEDDED', `Remote image ${describe(src)} could not be fetched (${(err as Error).message}); its alt text was used instead.`, imageField(src)));
      resolved.set(src, undefined);
    }
  }
  return resolved;
}
