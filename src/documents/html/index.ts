import { uniqueWarnings, type Warning } from '../warnings.js';
import type * as hast from 'hast';
import rehypeParse from 'rehype-parse';
import { unified } from 'unified';
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
const htmlParser = unified().use(rehypeParse);

function declaredCharset(source: Uint8Array): string | undefined {
  const head = Buffer.from(source.buffer, source.byteOffset, Math.min(1024, source.byteLength)).toString('latin1');
  return /<meta[^>]+charset\s*=\s*["']?\s*([a-zA-Z0-9_:.-]+)/i.exec(head)?.[1];
}

function parseHtml(text: string, maxDepth: number): hast.Root {
  try {
    return htmlParser.parse(text);
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
