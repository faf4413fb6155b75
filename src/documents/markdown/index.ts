import type * as hast from 'hast';
import type * as md from 'mdast';
import rehypeParse from 'rehype-parse';
import remarkFrontmatter from 'remark-frontmatter';
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

/**
 * Markdown (CommonMark + GFM: tables, task lists, strikethrough, autolinks, footnotes; YAML
 * front matter) → DOCX, natively. Raw HTML blocks go through the HTML front end.
 */
const markdownParser = unified().use(remarkParse).use(remarkGfm).use(remarkFrontmatter, ['yaml']).freeze();

/**
 * Pandoc-style front matter may close with `...`. remark-frontmatter's asymmetric fences
 * break block quote parsing, so the closing `...` is rewritten to `---` before parsing
 * (same length: positions are unchanged).
 */
function normaliseFrontMatterFence(text: string): string {
  if (!/^---[ \t]*\r?\n/.test(text)) return text;
  const fence = /^(---|\.\.\.)[ \t]*$/m;
  const rest = text.slice(text.indexOf('\n') + 1);
  const m = fence.exec(rest);
  if (!m || m[1] !== '...') return text;
  const at = text.indexOf('\n') + 1 + m.index;
  return `${text.slice(0, at)}---${text.slice(at + 3)}`;
}
const fragmentParser = unified().use(rehypeParse, { fragment: true }).freeze();

function parseMarkdown(text: string, maxDepth: number): md.Root {
  try {
    const [first, ...rest] = splitMarkdown(text);
    const root = markdownParser.parse(first);
    for (const chunk of rest) append(root.children, markdownParser.parse(chunk).children.filter((n) => n.type !== 'yaml'));
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
  const { limits } = options;
  assertInputSize(source, limits, 'Markdown');
  const warnings: string[] = [];
  const text = decodeText(source, warnings);
  assertMarkdownNesting(text, limits.maxNestingDepth);
  const tree = parseMarkdown(normaliseFrontMatterFence(text), limits.maxNestingDepth);

  const frontMatter = tree.children.find((n): n is md.Yaml => n.type === 'yaml');
  const metadata: DocumentMetadata = frontMatter ? readFrontMatter(frontMatter.value, warnings) : {};

  const htmlTrees = new Map<md.Html, hast.Root>();
  const imageSources = collectImageUrls(tree);
  const linkTargets = new Set<string>();
  for (const node of htmlBlocksOf(tree)) {
    const fragment = fragmentParser.parse(node.value);
    unwrapNoscriptImages(fragment);
    htmlTrees.set(node, fragment);
    const scan = scanHtml(fragment);
    append(imageSources, scan.imageSources);
    scan.linkTargets.forEach((t) => linkTargets.add(t));
  }
  const images = await resolveImages(imageSources, { allowHosts: options.remoteImages?.allowHosts ?? [], allowPrivateAddresses: options.remoteImages?.allowPrivateAddresses }, warnings);
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
  const blocks: Block[] = lowering.root(tree);
  if (metadata.title) blocks.unshift({ type: 'paragraph', style: 'Title', inlines: [{ type: 'text', text: metadata.title }] });
  const docx = writeDocx({ metadata, blocks }, { reference: options.reference });
  return { docx, warnings: dedupe(warnings) };
}

function dedupe(warnings: string[]): string[] {
  return [...new Set(warnings)];
}
