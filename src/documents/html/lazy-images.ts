import type * as hast from 'hast';
import { append } from '../model/append.js';

/**
 * Images as a browser shows them once the page's lazy loading has run: pages put the real
 * address in `data-src`/`data-srcset` (and a placeholder in `src`), in `srcset` alone, in a
 * `<picture>`'s `<source>`s, or in a `<noscript>` copy of the image that scripts never show.
 */

/** Attributes lazy-loading libraries keep the real address in (hast property names). */
const LAZY_SOURCES = ['dataSrc', 'dataOriginal', 'dataLazySrc', 'dataLazy', 'dataOriginalSrc', 'dataHiResSrc', 'dataUrl'];
const LAZY_SOURCE_SETS = ['dataSrcset', 'dataLazySrcset', 'dataOriginalSet'];
/** `<source type>`s a DOCX can hold (the writer embeds PNG, JPEG and GIF). */
const EMBEDDABLE_TYPES = new Set(['image/png', 'image/jpeg', 'image/jpg', 'image/gif']);

/** Addresses of the placeholders a <noscript> copy replaced, still usable when the copy's cannot be had. */
const placeholderSources = new WeakMap<hast.Element, string[]>();

const text = (el: hast.Element, name: string): string | undefined => {
  const value = el.properties?.[name];
  if (value === undefined || value === null || value === false || value === true) return undefined;
  const joined = (Array.isArray(value) ? value.join(', ') : String(value)).trim();
  return joined || undefined;
};

/**
 * The candidate a srcset offers at the highest density or width (the document is printed, not
 * shown on a small screen); the first one when none has a descriptor.
 */
export function bestCandidate(srcset: string | undefined): string | undefined {
  if (!srcset) return undefined;
  let best: string | undefined;
  let bestSize = -1;
  // Candidates are separated by commas followed by space (a comma inside a URL is kept).
  for (const candidate of srcset.split(/,\s+|,$/)) {
    const [url, descriptor = '1x'] = candidate.trim().split(/\s+/, 2);
    if (!url) continue;
    const size = Number.parseFloat(descriptor) * (descriptor.endsWith('x') ? 1000 : 1);
    if (best === undefined || (Number.isFinite(size) && size > bestSize)) {
      best = url;
      bestSize = Number.isFinite(size) ? size : bestSize;
    }
  }
  return best;
}

/**
 * The addresses of the picture an <img> shows, best first: the one lazy loading puts in place,
 * then `src` (the placeholder, used when the real picture cannot be had), then `srcset`.
 */
export function imageCandidates(img: hast.Element): string[] {
  const urls: string[] = [];
  for (const name of LAZY_SOURCES) {
    const url = text(img, name);
    if (url) urls.push(url);
  }
  for (const name of LAZY_SOURCE_SETS) {
    const url = bestCandidate(text(img, name));
    if (url) urls.push(url);
  }
  const src = text(img, 'src');
  if (src) urls.push(src);
  const set = bestCandidate(text(img, 'srcSet'));
  if (set) urls.push(set);
  append(urls, placeholderSources.get(img) ?? []);
  return urls;
}

/**
 * The addresses a <picture> may show: its <img>'s first (every browser can show it, and the
 * <source>s often offer formats a DOCX cannot hold), then its <source>s of an embeddable (or
 * unstated) type.
 */
export function pictureCandidates(picture: hast.Element, img: hast.Element | undefined): string[] {
  const urls = img ? imageCandidates(img) : [];
  for (const child of picture.children) {
    if (child.type !== 'element' || child.tagName !== 'source') continue;
    const type = text(child, 'type')?.toLowerCase();
    if (type && !EMBEDDABLE_TYPES.has(type)) continue;
    const url = bestCandidate(text(child, 'srcSet') ?? text(child, 'dataSrcset')) ?? text(child, 'src') ?? text(child, 'dataSrc');
    if (url) urls.push(url);
  }
  return urls;
}

const isBlankText = (n: hast.Nodes) => n.type === 'comment' || (n.type === 'text' && n.value.trim() === '');

/** The one <img> an element is or wraps alone (ignoring whitespace), if so. */
function singleImage(el: hast.Element): hast.Element | undefined {
  let node: hast.Element = el;
  for (;;) {
    if (node.tagName === 'img') return node;
    const content = node.children.filter((n) => !isBlankText(n as hast.Nodes));
    if (content.length !== 1 || content[0].type !== 'element') return undefined;
    node = content[0];
  }
}

/**
 * Whether a <noscript> copy stands for this placeholder: the placeholder names no picture but
 * an inline (data:) one, or both name the same picture, or carry the same alt text.
 */
function sameImage(placeholder: hast.Element, copy: hast.Element): boolean {
  const own = imageCandidates(placeholder);
  if (own.every((url) => url.startsWith('data:'))) return true;
  const copied = imageCandidates(copy);
  if (own.some((url) => copied.includes(url))) return true;
  const alt = text(placeholder, 'alt');
  return alt !== undefined && alt === text(copy, 'alt');
}

/**
 * Replaces each placeholder image that a `<noscript>` copy follows by that copy, as a browser
 * shows it once scripts have swapped it in: a <noscript> holding a single image replaces the
 * previous element when that is (or wraps) a single image standing for the same picture; <img>s between them that name no
 * picture at all (filled in by scripts) are dropped. Other <noscript>s stay (and are not shown).
 */
export function unwrapNoscriptImages(root: hast.Root): void {
  const stack: (hast.Root | hast.Element)[] = [root];
  while (stack.length > 0) {
    const parent = stack.pop()!;
    const children = parent.children as hast.Nodes[];
    for (let i = 0; i < children.length; i++) {
      const child = children[i];
      if (child.type !== 'element') continue;
      if (child.tagName !== 'noscript') {
        stack.push(child);
        continue;
      }
      const copy = singleImage(child);
      if (!copy) continue;
      let previous = i - 1;
      let dropped = false;
      while (previous >= 0 && isBlankText(children[previous])) previous--;
      while (previous >= 0) {
        const candidate = children[previous];
        if (candidate.type !== 'element' || candidate.tagName !== 'img' || imageCandidates(candidate).length > 0) break;
        children.splice(previous, 1);
        dropped = true;
        i--;
        previous--;
        while (previous >= 0 && isBlankText(children[previous])) previous--;
      }
      const target = previous >= 0 ? children[previous] : undefined;
      const placeholder = target?.type === 'element' ? singleImage(target) : undefined;
      if (placeholder && sameImage(placeholder, copy)) {
        placeholderSources.set(copy, imageCandidates(placeholder));
        children.splice(previous, 1);
        i--;
      } else if (!dropped) {
        continue; // no placeholder: the noscript is a fallback a browser with scripts never shows
      }
      // The copy takes the placeholder's place.
      children[i] = copy;
    }
  }
}

/** Every image address a tree may show, for fetching up front. */
export function imageUrls(root: hast.Root): string[] {
  const urls: string[] = [];
  const stack: hast.Nodes[] = [root];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.type === 'element' && n.tagName === 'img') append(urls, imageCandidates(n));
    else if (n.type === 'element' && n.tagName === 'picture') append(urls, pictureCandidates(n, undefined));
    if ('children' in n) append(stack, n.children as hast.Nodes[]);
  }
  return urls;
}
