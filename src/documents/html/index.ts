import { uniqueWarnings, type Warning } from '../warnings.js';
import type * as hast from 'hast';
import { fromParse5 } from 'hast-util-from-parse5';
import { parse as parseDocument, type DefaultTreeAdapterMap } from 'parse5';
import { resolveImages } from '../model/images.js';
import { assertInputSize, decodeText, nestingTooDeep } from '../model/input.js';
import { writeDocx } from '../model/package.js';
import { Slugger } from '../model/slug.js';
import { timed, timedAsync } from '../model/stages.js';
import type { ConversionResult, MarkupOptions } from '../model/types.js';
import { assertHtmlNesting } from './prescan.js';
import { unwrapNoscriptImages } from './lazy-images.js';
import { applyStylesheets } from './stylesheets.js';
import { HtmlLowering, scanHtml } from './to-model.js';

/**
 * HTML → DOCX, natively. Encoding: a byte-order mark wins, then a <meta charset> (or
 * http-equiv content-type) in the first 1024 bytes, else UTF-8; invalid bytes become U+FFFD.
 */
/**
 * `<meta … charset=NAME`. The white space around an optional quote is one run or two, never both ways:
 * `\s*["']?\s*` split a quote-less run every way from every `<meta` (~40 ms on 1 KB, the bound).
 */
export const META_CHARSET = /<meta[^>]+charset\s*=\s*(?:["']\s*)?([a-zA-Z0-9_:.-]+)/i;

function declaredCharset(source: Uint8Array): string | undefined {
  const head = Buffer.from(source.buffer, source.byteOffset, Math.min(1024, source.byteLength)).toString('latin1');
  return META_CHARSET.exec(head)?.[1];
}

type Parse5Node = DefaultTreeAdapterMap['node'];
type Parse5Element = DefaultTreeAdapterMap['element'];

/** Every <tbody> of a tree in one fixed order (the same walk over parse5's tree and over hast's). */
function bodiesOf<T>(root: T, children: (node: T) => readonly T[] | undefined, isBody: (node: T) => boolean): T[] {
  const found: T[] = [];
  const stack = [root];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (isBody(node)) found.push(node);
    const kids = children(node);
    if (kids) for (const kid of kids) stack.push(kid);
  }
  return found;
}

/**
 * The tree rehype-parse builds (parse5 with scripting off, then hast-util-from-parse5, the two
 * libraries it calls), without source positions: rehype-parse always has parse5 track locations
 * and turns every node's offsets into lines and columns, which was ~3/4 of parsing a page
 * (pandoc-html-reader.html: 6.4 → 1.9 ms CPU). The one position the lowering reads — whether a
 * <tbody> was written or implied by the parser (to-model.ts: a first row of <th> cells is a header
 * row unless it sits in a written <tbody>) — is set from parse5's location of each written
 * <tbody>. Locations (~2 ms of a 17 KB page) are tracked only when that question can arise: the
 * text has both a `<tbody` and a `<th` tag (the parser never implies a <th>).
 */
function parseHtml(text: string, maxDepth: number): hast.Root {
  try {
    const withBodies = /<tbody/i.test(text) && /<th[\s/>]/i.test(text);
    const document = parseDocument(text, { sourceCodeLocationInfo: withBodies, scriptingEnabled: false });
    const tree = fromParse5(document) as hast.Root;
    if (withBodies) {
      const written = bodiesOf<Parse5Node>(document, (n) => ('childNodes' in n ? n.childNodes : undefined), (n) => n.nodeName === 'tbody');
      const bodies = bodiesOf<hast.Root | hast.RootContent>(tree, (n) => ('children' in n ? n.children : undefined), (n) => n.type === 'element' && n.tagName === 'tbody');
      // hast-util-from-parse5 maps node for node, so the walks pair up. Were they ever not to, no
      // <tbody> is taken as written (a first <th> row may then head its table) rather than fail.
      if (written.length === bodies.length) written.forEach((body, i) => {
        const location = (body as Parse5Element).sourceCodeLocation;
        if (!location) return;
        (bodies[i] as hast.Element).position = {
          start: { line: location.startLine, column: location.startCol, offset: location.startOffset },
          end: { line: location.endLine, column: location.endCol, offset: location.endOffset },
        };
      });
    }
    return tree;
  } catch (err) {
    if (err instanceof RangeError) throw nestingTooDeep(maxDepth, 'HTML elements');
    throw err;
  }
}

export async function htmlToDocx(source: Uint8Array, options: MarkupOptions): Promise<ConversionResult> {
  const { limits, stages } = options;
  assertInputSize(source, limits, 'HTML');
  const warnings: Warning[] = [];
  const text = timed(stages, 'prescan', () => {
    const decoded = decodeText(source, warnings, declaredCharset(source));
    assertHtmlNesting(decoded, limits.maxNestingDepth);
    return decoded;
  });
  const tree = timed(stages, 'parse', () => parseHtml(text, limits.maxNestingDepth));
  const files = options.files && new Map(options.files);
  const { linkTargets, imageSources } = timed(stages, 'model', () => {
    applyStylesheets(tree, files, warnings);
    unwrapNoscriptImages(tree);
    return scanHtml(tree);
  });
  const images = await timedAsync(stages, 'images', () => resolveImages(imageSources, { remote: options.remoteImages, files }, warnings));
  const lowering = new HtmlLowering({ images, slugger: new Slugger(), maxDepth: limits.maxNestingDepth, warnings, linkTargets });
  const blocks = timed(stages, 'model', () => {
    try {
      return lowering.root(tree);
    } catch (err) {
      if (err instanceof RangeError) throw nestingTooDeep(limits.maxNestingDepth, 'HTML elements');
      throw err;
    }
  });
  const docx = timed(stages, 'docx', () => writeDocx({ metadata: lowering.metadata, blocks }, { reference: options.reference }));
  return { docx, warnings: uniqueWarnings(warnings) };
}
