import { uniqueWarnings, type Warning } from '../warnings.js';
import type * as hast from 'hast';
import type * as md from 'mdast';
import rehypeParse from 'rehype-parse';
import remarkGfm from 'remark-gfm';
import remarkParse from 'remark-parse';
import { unified } from 'unified';
import { unwrapNoscriptImages } from '../html/lazy-images.js';
import { HtmlLowering, scanHtml } from '../html/to-model.js';
import { readFrontMatter } from '../model/front-matter.js';
import { resolveImages } from '../model/images.js';
import { assertInputSize, decodeText, nestingTooDeep } from '../model/input.js';
import { writeDocx } from '../model/package.js';
import { Slugger } from '../model/slug.js';
import type { Block, ConversionResult, DocumentMetadata, MarkupOptions } from '../model/types.js';
import { splitMarkdown } from './chunks.js';
import { assertMarkdownNesting } from './prescan.js';
import { MarkdownLowering, collectImageUrls } from './to-model.js';
import { append } from '../model/append.js';
import { timed, timedAsync } from '../model/stages.js';

/**
 * Markdown (CommonMark + GFM: tables, task lists, strikethrough, autolinks, footnotes; YAML
 * front matter) → DOCX, natively. Raw HTML blocks go through the HTML front end. The parser is
 * exactly remark-parse + remark-gfm (the user's stack); front matter is cut off before it runs.
 */
const markdownParser = unified().use(remarkParse).use(remarkGfm).freeze();

const OPENING_FENCE = /^---[ \t]*\r?\n/;
const CLOSING_FENCE = /^(?:---|\.\.\.)[ \t]*$/m;

/**
 * YAML front matter: a `---` line opening the document, closed by a `---` (or pandoc's `...`)
 * line. Returns the YAML and the Markdown after it (the text unchanged when there is none).
 */
export function splitFrontMatter(text: string): { yaml?: string; markdown: string } {
  const opening = OPENING_FENCE.exec(text);
  if (!opening) return { markdown: text };
  const rest = text.slice(opening[0].length);
  const closing = CLOSING_FENCE.exec(rest);
  if (!closing) return { markdown: text };
  const yaml = rest.slice(0, closing.index).replace(/\r?\n$/, '');
  const after = closing.index + closing[0].length;
  return { yaml, markdown: rest.slice(rest.startsWith('\r\n', after) ? after + 2 : after + 1) };
}
const fragmentParser = unified().use(rehypeParse, { fragment: true }).freeze();

function parseMarkdown(text: string, maxDepth: number): md.Root {
  try {
    const [first, ...rest] = splitMarkdown(text);
    const root = markdownParser.parse(first);
    for (const chunk of rest) append(root.children, markdownParser.parse(chunk).children);
    return root;
  } catch (err) {
    if (err instanceof RangeError) throw nestingTooDeep(maxDepth, 'block quotes, lists or inline formatting');
    throw err;
  }
}

function htmlBlocksOf(tree: md.Root): md.Html[] {
  const found: md.Html[] = [];
  const stack: md.Nodes[] = [tree];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.type === 'paragraph' || node.type === 'heading' || node.type === 'tableCell') continue; // inline HTML
    if (node.type === 'html') found.push(node);
    if ('children' in node) append(stack, node.children as md.Nodes[]);
  }
  return found;
}

export async function markdownToDocx(source: Uint8Array, options: MarkupOptions): Promise<ConversionResult> {
  const { limits, stages } = options;
  assertInputSize(source, limits, 'Markdown');
  const warnings: Warning[] = [];
  const text = timed(stages, 'prescan', () => {
    const decoded = decodeText(source, warnings);
    assertMarkdownNesting(decoded, limits.maxNestingDepth);
    return decoded;
  });
  const { yaml, markdown } = splitFrontMatter(text);
  const tree = timed(stages, 'parse', () => parseMarkdown(markdown, limits.maxNestingDepth));
  const metadata: DocumentMetadata = yaml !== undefined ? readFrontMatter(yaml, warnings) : {};

  const htmlTrees = new Map<md.Html, hast.Root>();
  const linkTargets = new Set<string>();
  const imageSources = timed(stages, 'model', () => {
    const urls = collectImageUrls(tree);
    for (const node of htmlBlocksOf(tree)) {
      const fragment = fragmentParser.parse(node.value);
      unwrapNoscriptImages(fragment);
      htmlTrees.set(node, fragment);
      const scan = scanHtml(fragment);
      append(urls, scan.imageSources);
      scan.linkTargets.forEach((t) => linkTargets.add(t));
    }
    return urls;
  });
  const images = await timedAsync(stages, 'images', () => resolveImages(imageSources, { remote: options.remoteImages, files: options.files && new Map(options.files) }, warnings));
  const slugger = new Slugger();
  const html = new HtmlLowering({ images, slugger, maxDepth: limits.maxNestingDepth, warnings, linkTargets });
  const lowering = new MarkdownLowering({
    images,
    slugger,
    maxDepth: limits.maxNestingDepth,
    warnings,
    htmlBlock: (node) => {
      const fragment = htmlTrees.get(node);
      return fragment ? html.root(fragment) : [];
    },
  });
  const blocks: Block[] = timed(stages, 'model', () => lowering.root(tree));
  if (metadata.title) blocks.unshift({ type: 'paragraph', style: 'Title', inlines: [{ type: 'text', text: metadata.title }] });
  const docx = timed(stages, 'docx', () => writeDocx({ metadata, blocks }, { reference: options.reference }));
  return { docx, warnings: uniqueWarnings(warnings) };
}

