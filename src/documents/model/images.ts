import { safeFetch } from '../../inputs/safe-fetch.js';
import { readImageInfo } from './image-info.js';
import type { ImageInline } from './types.js';

/**
 * Resolves image sources to embeddable images. data: URIs are decoded; http(s) images are
 * fetched only from allow-listed hosts (through safeFetch, SSRF-guarded); everything else
 * (relative paths, file:, other hosts) is never read and falls back to its alt text.
 */
export interface ImageSourceOptions {
  allowHosts: string[];
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
  try {
    return Buffer.from(decodeURIComponent(payload), 'latin1');
  } catch {
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

function toImage(bytes: Uint8Array, src: string, warnings: string[]): ResolvedImage | undefined {
  const info = readImageInfo(bytes);
  if (!info) {
    warnings.push(`Image ${describe(src)} is not a readable PNG, JPEG or GIF; its alt text was used instead.`);
    return undefined;
  }
  return { type: 'image', data: bytes, format: info.format, widthPx: info.width, heightPx: info.height };
}

function describe(src: string): string {
  return src.startsWith('data:') ? `"${src.slice(0, 30)}…"` : `"${src.length > 200 ? `${src.slice(0, 200)}…` : src}"`;
}

export async function resolveImages(
  sources: Iterable<string>,
  options: ImageSourceOptions,
  warnings: string[],
): Promise<Map<string, ResolvedImage | undefined>> {
  const resolved = new Map<string, ResolvedImage | undefined>();
  let remoteCount = 0;
  for (const src of new Set(sources)) {
    if (/^data:/i.test(src)) {
      const bytes = decodeDataUri(src);
      resolved.set(src, bytes ? toImage(bytes, src, warnings) : undefined);
      if (!bytes) warnings.push(`Image ${describe(src)} has a malformed data: URI; its alt text was used instead.`);
      continue;
    }
    let url: URL | undefined;
    try {
      url = /^https?:/i.test(src) ? new URL(src) : undefined;
    } catch {
      url = undefined;
    }
    if (!url) {
      warnings.push(`Image ${describe(src)} is not embedded: only data: URIs (and allow-listed http(s) hosts) can be used; its alt text was used instead.`);
      resolved.set(src, undefined);
      continue;
    }
    if (!hostAllowed(url.hostname, options.allowHosts)) {
      warnings.push(`Remote image ${describe(src)} was not fetched (host not allow-listed); its alt text was used instead.`);
      resolved.set(src, undefined);
      continue;
    }
    if (remoteCount++ >= (options.maxRemoteImages ?? DEFAULT_MAX_REMOTE)) {
      warnings.push(`Remote image ${describe(src)} was not fetched: too many remote images; its alt text was used instead.`);
      resolved.set(src, undefined);
      continue;
    }
    try {
      const bytes = await safeFetch(src, {
        allowHttp: true,
        maxBytes: options.maxImageBytes ?? DEFAULT_MAX_IMAGE_BYTES,
        timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      });
      resolved.set(src, toImage(new Uint8Array(bytes), src, warnings));
    } catch (err) {
      warnings.push(`Remote image ${describe(src)} could not be fetched (${(err as Error).message}); its alt text was used instead.`);
      resolved.set(src, undefined);
    }
  }
  return resolved;
}
