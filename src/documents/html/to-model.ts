import type { Warning } from '../warnings.js';
import type * as hast from 'hast';
import { nestingTooDeep } from '../model/input.js';
import type { ResolvedImage } from '../model/images.js';
import type { Slugger } from '../model/slug.js';
import type { Alignment, Block, DocumentMetadata, Inline, ListItem, RunMarks, TableBlock, TableRow } from '../model/types.js';
import { listClassFormat, parseAlign, parseColor, parseFontSize, parseInlineStyle, parseListType } from './css.js';
import { append } from '../model/append.js';
import { imageCandidates, imageUrls, pictureCandidates } from './lazy-images.js';

/** Lowers a hast tree (from rehype-parse) onto the document model. */
export interface HtmlLoweringEnv {
  images: Map<string, ResolvedImage | undefined>;
  slugger: Slugger;
  maxDepth: number;
  warnings: Warning[];
  /** Ids that internal links point at; only these get bookmarks (headings always do). */
  linkTargets: Set<string>;
}

interface Revision {
  kind: 'insert' | 'delete';
  author: string;
  date?: string;
}

interface Ctx {
  marks: RunMarks;
  revision?: Revision;
  align?: Alignment;
  paraStyle?: string;
  depth: number;
  /** Inside a link or heading: block elements must not split the paragraph. */
  inlineOnly: boolean;
  inTable: boolean;
}

/** Collects blocks plus the paragraph being built from inline content. */
class Container {
  blocks: Block[] = [];
  pending: Inline[] = [];
  pendingAlign?: Alignment;
  pendingStyle?: string;
  pendingPageBreak = false;
  /** Whitespace collapsing: true when the last emitted character was (or acts as) a space. */
  afterSpace = true;
}

const SKIPPED = new Set([
  'script', 'style', 'template', 'noscript', 'head', 'meta', 'link', 'iframe', 'object', 'embed', 'video', 'audio',
  'canvas', 'svg', 'math', 'select', 'datalist', 'map', 'area', 'base', 'param', 'source', 'track', 'dialog', 'textarea',
]);

const BLOCKS = new Set([
  'p', 'div', 'section', 'article', 'header', 'footer', 'nav', 'main', 'aside', 'address', 'center', 'figure',
  'figcaption', 'form', 'fieldset', 'legend', 'details', 'summary', 'hgroup', 'body', 'html', 'dl', 'dt', 'dd',
  'blockquote', 'ul', 'ol', 'menu', 'dir', 'pre', 'table', 'hr', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'listing', 'xmp',
  'plaintext', 'frameset', 'frame', 'optgroup', 'option', 'search',
]);

const INLINE_MARKS: Record<string, RunMarks> = {
  b: { bold: true }, strong: { bold: true }, i: { italic: true }, em: { italic: true }, cite: { italic: true },
  var: { italic: true }, dfn: { italic: true }, u: { underline: true }, s: { strike: true }, strike: { strike: true },
  sup: { superscript: true }, sub: { subscript: true }, code: { code: true }, kbd: { code: true }, samp: { code: true },
  tt: { code: true }, mark: { background: 'FFFF00' },
};

const FONT_SIZES = [0, 16, 20, 24, 28, 36, 48, 72];

const prop = (el: hast.Element, name: string): string | undefined => {
  const value = el.properties?.[name];
  if (value === undefined || value === null || value === false) return undefined;
  return Array.isArray(value) ? value.join(' ') : String(value);
};

const elementChildren = (el: hast.Element | hast.Root): hast.Element[] =>
  (el.children as hast.Nodes[]).filter((c): c is hast.Element => c.type === 'element');

function textOf(node: hast.Nodes, preserveBreaks = false): string {
  let text = '';
  const stack: hast.Nodes[] = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.type === 'text') text += n.value;
    else if (n.type === 'element' && n.tagName === 'br' && preserveBreaks) text += '\n';
    else if (n.type === 'element' && SKIPPED.has(n.tagName)) continue;
    if ('children' in n) for (let i = n.children.length - 1; i >= 0; i--) stack.push(n.children[i] as hast.Nodes);
  }
  return text;
}

export class HtmlLowering {
  readonly metadata: DocumentMetadata = {};

  constructor(private readonly env: HtmlLoweringEnv) {}

  root(tree: hast.Root): Block[] {
    this.readMetadata(tree);
    const container = new Container();
    this.children(tree, { marks: {}, depth: 0, inlineOnly: false, inTable: false }, container);
    return this.finish(container);
  }

  private finish(c: Container): Block[] {
    this.flush(c);
    if (c.pending.length > 0) c.blocks.push({ type: 'paragraph', inlines: c.pending });
    return joinAdjacentTerms(c.blocks);
  }

  private readMetadata(tree: hast.Root): void {
    const stack: hast.Nodes[] = [tree];
    while (stack.length > 0) {
      const n = stack.pop()!;
      if (n.type !== 'element' && n.type !== 'root') continue;
      if (n.type === 'element' && n.tagName === 'body') continue;
      if (n.type === 'element' && n.tagName === 'title' && !this.metadata.title) {
        this.metadata.title = textOf(n).replace(/\s+/g, ' ').trim() || undefined;
      }
      if (n.type === 'element' && n.tagName === 'meta') {
        const name = prop(n, 'name')?.toLowerCase();
        const content = prop(n, 'content');
        if (content && name === 'author') this.metadata.author = content;
        if (content && (name === 'description' || name === 'subject')) this.metadata.subject ??= content;
        if (content && name === 'description') this.metadata.description = content;
        if (content && name === 'keywords') this.metadata.keywords = content.split(',').map((k) => k.trim()).filter(Boolean);
        if (content && (name === 'date' || name === 'dcterms.created')) this.metadata.date = content;
      }
      append(stack, n.children as hast.Nodes[]);
    }
  }

  // ---- paragraph assembly ----

  private push(inline: Inline, ctx: Ctx, c: Container): void {
    if (c.pending.length === 0 || c.pending.every((i) => i.type === 'bookmark')) {
      c.pendingAlign = ctx.align;
      c.pendingStyle = ctx.paraStyle;
    }
    c.pending.push(ctx.revision ? { type: 'revision', ...ctx.revision, children: [inline] } : inline);
  }

  private text(value: string, ctx: Ctx, c: Container): void {
    let text = value.replace(/[ \t\n\r\f]+/g, ' ');
    if (c.afterSpace) text = text.replace(/^ /, '');
    if (!text) return;
    c.afterSpace = text.endsWith(' ');
    this.push({ type: 'text', text, marks: ctx.marks }, ctx, c);
  }

  private flush(c: Container): void {
    const hasContent = c.pending.some((i) => i.type !== 'bookmark' && !(i.type === 'text' && i.text.trim() === ''));
    if (!hasContent) {
      c.afterSpace = true;
      return;
    }
    trimTrailingSpace(c.pending);
    c.blocks.push({
      type: 'paragraph', inlines: c.pending, align: c.pendingAlign, style: c.pendingStyle, pageBreakBefore: c.pendingPageBreak || undefined,
    });
    c.pending = [];
    c.pendingPageBreak = false;
    c.afterSpace = true;
  }

  // ---- tree walk ----

  private children(node: hast.Element | hast.Root, ctx: Ctx, c: Container): void {
    for (const child of node.children) {
      if (child.type === 'text') this.text(child.value, ctx, c);
      else if (child.type === 'element') this.element(child, ctx, c);
    }
  }

  private element(el: hast.Element, parent: Ctx, c: Container): void {
    const tag = el.tagName;
    if (SKIPPED.has(tag)) return;
    const depth = parent.depth + 1;
    if (depth > this.env.maxDepth) throw nestingTooDeep(this.env.maxDepth, 'HTML elements');
    const style = parseInlineStyle(prop(el, 'style'));
    const hidden = style.hidden || Boolean(el.properties?.hidden);
    if (hidden && !parent.marks.hidden && !hideableAsText(el)) return;
    const ctx: Ctx = { ...parent, depth, marks: { ...parent.marks, ...INLINE_MARKS[tag], ...style.marks } };
    if (hidden) ctx.marks.hidden = true;
    if (style.background && !BLOCKS.has(tag) && tag !== 'td' && tag !== 'th') ctx.marks.background = style.background;
    const align = style.align ?? parseAlign(prop(el, 'align')) ?? (tag === 'center' ? 'center' : undefined);
    if (align) ctx.align = align;

    const id = prop(el, 'id');
    if (tag !== 'a' && !/^h[1-6]$/.test(tag) && id && this.env.linkTargets.has(id)) {
      this.push({ type: 'bookmark', name: id }, ctx, c);
    }

    if (!BLOCKS.has(tag) || parent.inlineOnly) {
      if (BLOCKS.has(tag) && c.pending.length > 0) this.text(' ', ctx, c);
      this.inlineElement(el, ctx, c);
      return;
    }
    this.flush(c);
    if (style.pageBreakBefore) c.pendingPageBreak = true;
    this.blockElement(el, ctx, c);
    this.flush(c);
    if (style.pageBreakAfter) c.pendingPageBreak = true;
  }

  private inlineElement(el: hast.Element, ctx: Ctx, c: Container): void {
    switch (el.tagName) {
      case 'br':
        this.push({ type: 'break', marks: ctx.marks }, ctx, c);
        c.afterSpace = true;
        return;
      case 'img':
        return this.image(el, imageCandidates(el), ctx, c);
      case 'picture': {
        const img = elementChildren(el).find((e) => e.tagName === 'img');
        return this.image(img ?? el, pictureCandidates(el, img), ctx, c);
      }
      case 'a':
        return this.anchor(el, ctx, c);
      case 'ins':
      case 'del':
        return this.children(el, {
          ...ctx,
          revision: {
            kind: el.tagName === 'ins' ? 'insert' : 'delete',
            author: prop(el, 'title') ?? prop(el, 'cite') ?? 'Unknown',
            date: prop(el, 'dateTime'),
          },
        }, c);
      case 'font':
        return this.children(el, { ...ctx, marks: { ...ctx.marks, ...fontMarks(el) } }, c);
      case 'q':
        this.text('\u201C', ctx, c);
        this.children(el, ctx, c);
        this.text('\u201D', ctx, c);
        return;
      case 'input':
        if (prop(el, 'type')?.toLowerCase() === 'checkbox') this.text(el.properties?.checked ? '\u2612 ' : '\u2610 ', ctx, c);
        return;
      default:
        if (/^h[1-6]$/.test(el.tagName) || el.tagName === 'pre' || el.tagName === 'hr') {
          // Block-only constructs met inside a link or heading keep just their text.
          this.text(textOf(el), ctx, c);
          return;
        }
        return this.children(el, ctx, c);
    }
  }

  private anchor(el: hast.Element, ctx: Ctx, c: Container): void {
    const name = prop(el, 'name') ?? prop(el, 'id');
    if (name) this.push({ type: 'bookmark', name }, ctx, c);
    const href = prop(el, 'href');
    if (!href || /^\s*javascript:/i.test(href)) {
      this.children(el, ctx, c);
      return;
    }
    // A link wrapping blocks (a teaser card: title, summary) keeps its inline start linked; from
    // its first block on, its content is laid out as the blocks a browser draws (and pandoc reads).
    const split = ctx.inlineOnly ? -1 : el.children.findIndex((n) => n.type === 'element' && holdsBlock(n));
    const saved = c.pending;
    c.pending = [];
    this.children(split < 0 ? el : { ...el, children: el.children.slice(0, split) }, { ...ctx, inlineOnly: true, revision: undefined }, c);
    const children = c.pending;
    c.pending = saved;
    if (children.length > 0) {
      const title = prop(el, 'title');
      const link: Inline = href.startsWith('#')
        ? { type: 'link', anchor: safeDecode(href.slice(1)), title, children }
        : { type: 'link', url: href, title, children };
      this.push(link, ctx, c);
    }
    if (split >= 0) this.children({ ...el, children: el.children.slice(split) }, ctx, c);
  }

  /** The first of the image's addresses that could be had; its alt text when none could. */
  private image(el: hast.Element, candidates: string[], ctx: Ctx, c: Container): void {
    const alt = prop(el, 'alt') ?? '';
    const resolved = candidates.map((url) => this.env.images.get(url)).find((image) => image !== undefined);
    if (resolved) {
      this.push({ ...resolved, ...displaySize(el, resolved), alt, title: prop(el, 'title') }, ctx, c);
      c.afterSpace = false;
    } else if (alt) {
      this.text(alt, ctx, c);
    }
  }

  private blockElement(el: hast.Element, ctx: Ctx, c: Container): void {
    const tag = el.tagName;
    switch (tag) {
      case 'h1': case 'h2': case 'h3': case 'h4': case 'h5': case 'h6':
        return this.heading(el, ctx, c);
      case 'ul': case 'ol': case 'menu': case 'dir':
        append(c.blocks, this.list(el, ctx));
        return;
      case 'blockquote':
        c.blocks.push({ type: 'quote', blocks: this.sub(el, ctx) });
        return;
      case 'pre': case 'listing': case 'xmp': case 'plaintext':
        c.blocks.push(codeBlock(el));
        return;
      case 'table':
        append(c.blocks, this.table(el, ctx));
        return;
      case 'hr':
        c.blocks.push({ type: 'rule' });
        return;
      case 'dt':
        return this.children(el, { ...ctx, paraStyle: 'DefinitionTerm' }, c);
      case 'dd':
        return this.children(el, { ...ctx, paraStyle: 'Definition' }, c);
      case 'figcaption': case 'legend':
        return this.children(el, { ...ctx, paraStyle: 'Caption' }, c);
      case 'address':
        return this.children(el, { ...ctx, marks: { ...ctx.marks, italic: true } }, c);
      default:
        return this.children(el, ctx, c);
    }
  }

  /** Lowers an element's children into their own block list. */
  private sub(el: hast.Element, ctx: Ctx, extra: Partial<Ctx> = {}): Block[] {
    const container = new Container();
    this.children(el, { ...ctx, paraStyle: undefined, align: undefined, ...extra }, container);
    return this.finish(container);
  }

  private heading(el: hast.Element, ctx: Ctx, c: Container): void {
    const container = new Container();
    this.children(el, { ...ctx, inlineOnly: true, paraStyle: undefined }, container);
    trimTrailingSpace(container.pending);
    const id = prop(el, 'id');
    if (id) this.env.slugger.reserve(id);
    const slug = this.env.slugger.slug(textOf(el).replace(/\s+/g, ' ').trim());
    const ids = [id, slug].filter((x): x is string => Boolean(x));
    const level = Number(el.tagName.slice(1)) as 1 | 2 | 3 | 4 | 5 | 6;
    c.blocks.push({ type: 'heading', level, inlines: container.pending, ids, align: ctx.align, pageBreakBefore: c.pendingPageBreak || undefined });
    c.pendingPageBreak = false;
  }

  /**
   * Content of a list that is not in an <li> (browsers render it indented, without a marker)
   * joins the preceding item, or stands before the list when no item precedes it.
   */
  private list(el: hast.Element, ctx: Ctx): Block[] {
    const items: ListItem[] = [];
    const before: Block[] = [];
    let tight = true;
    let stray: hast.ElementContent[] = [];
    const flushStray = () => {
      if (stray.some((n) => n.type === 'element' || (n.type === 'text' && n.value.trim()))) {
        const blocks = this.sub({ type: 'element', tagName: 'div', properties: {}, children: stray }, ctx);
        if (items.length > 0) append(items[items.length - 1].blocks, blocks);
        else append(before, blocks);
      }
      stray = [];
    };
    for (const child of el.children) {
      if (child.type !== 'element' || child.tagName !== 'li') {
        stray.push(child as hast.ElementContent);
        continue;
      }
      flushStray();
      if (elementChildren(child).some((e) => e.tagName === 'p')) tight = false;
      const checkbox = elementChildren(child).find((e) => e.tagName === 'input' && prop(e, 'type')?.toLowerCase() === 'checkbox');
      const contentEl = checkbox ? { ...child, children: child.children.filter((n) => n !== checkbox) } : child;
      const depth = ctx.depth + 1;
      if (depth > this.env.maxDepth) throw nestingTooDeep(this.env.maxDepth, 'HTML elements');
      items.push({ blocks: this.sub(contentEl, { ...ctx, depth }), checked: checkbox ? Boolean(checkbox.properties?.checked) : undefined });
    }
    flushStray();
    const ordered = el.tagName === 'ol';
    const start = Number.parseInt(prop(el, 'start') ?? '1', 10);
    if (items.length === 0) return before;
    // The style attribute wins over the type attribute, as in a browser, then a class named after
    // a list style; decimal when none says.
    const format = ordered
      ? parseInlineStyle(prop(el, 'style')).numberFormat ?? parseListType(prop(el, 'type')) ?? listClassFormat(prop(el, 'className')) ?? 'decimal'
      : undefined;
    return [...before, { type: 'list', ordered, start: Number.isFinite(start) ? start : 1, format, tight, items }];
  }

  private table(el: hast.Element, ctx: Ctx): Block[] {
    const rows: TableRow[] = [];
    let caption: Inline[] | undefined;
    const tableBackground = parseInlineStyle(prop(el, 'style')).background ?? parseColor(prop(el, 'bgColor') ?? '');
    const inner: Ctx = { ...ctx, inTable: true, marks: {}, align: undefined, paraStyle: undefined };
    const addRow = (tr: hast.Element, header: boolean) => {
      const rowStyle = parseInlineStyle(prop(tr, 'style'));
      const rowBackground = rowStyle.background ?? parseColor(prop(tr, 'bgColor') ?? '') ?? tableBackground;
      const rowAlign = rowStyle.align ?? parseAlign(prop(tr, 'align'));
      const cells = elementChildren(tr)
        .filter((cell) => cell.tagName === 'td' || cell.tagName === 'th')
        .map((cell) => {
          const cellStyle = parseInlineStyle(prop(cell, 'style'));
          const align = cellStyle.align ?? parseAlign(prop(cell, 'align')) ?? rowAlign;
          return {
            blocks: this.sub(cell, { ...inner, depth: ctx.depth + 2 }, { align }),
            colSpan: clampInt(prop(cell, 'colSpan'), 1, 63),
            rowSpan: clampInt(prop(cell, 'rowSpan'), 1, 1000),
            align,
            background: cellStyle.background ?? parseColor(prop(cell, 'bgColor') ?? '') ?? rowBackground,
            header: cell.tagName === 'th',
          };
        });
      rows.push({ cells, header });
    };
    // Whether the first row sits in a <tbody> the author wrote (the parser also implies one,
    // without a source position): such a row is body content even when made of <th> cells.
    let firstRowInExplicitBody: boolean | undefined;
    const visit = (parent: hast.Element, section: 'thead' | 'body') => {
      for (const child of elementChildren(parent)) {
        if (child.tagName === 'tr') {
          firstRowInExplicitBody ??= parent.tagName === 'tbody' && parent.position !== undefined;
          addRow(child, section === 'thead');
        } else if (child.tagName === 'thead') visit(child, 'thead');
        else if (child.tagName === 'tbody' || child.tagName === 'tfoot') visit(child, 'body');
        else if (child.tagName === 'caption' && !caption) {
          const container = new Container();
          this.children(child, { ...inner, inlineOnly: true }, container);
          trimTrailingSpace(container.pending);
          caption = container.pending;
        }
      }
    };
    visit(el, 'body');
    // Without <thead>, a first row of <th> cells is the header row (as HTML readers such as
    // pandoc take it); later <th> rows stay body rows with bold header cells.
    const first = rows[0];
    if (!rows.some((r) => r.header) && first && !firstRowInExplicitBody && first.cells.length > 0 && first.cells.every((cell) => cell.header)) {
      first.header = true;
    }
    if (rows.length === 0) return [];
    const layout = prop(el, 'role') === 'presentation' || ctx.inTable || containsTable(el);
    const table: TableBlock = { type: 'table', rows, caption, layout };
    return [table];
  }
}

/**
 * Consecutive <dt>s name one description (several terms, one <dd>): they become one term
 * paragraph with line breaks, so the description stays attached to all of them.
 */
function joinAdjacentTerms(blocks: Block[]): Block[] {
  const out: Block[] = [];
  for (const block of blocks) {
    const last = out[out.length - 1];
    if (block.type === 'paragraph' && block.style === 'DefinitionTerm' && last?.type === 'paragraph' && last.style === 'DefinitionTerm') {
      out[out.length - 1] = { ...last, inlines: [...last.inlines, { type: 'break' }, ...block.inlines] };
    } else out.push(block);
  }
  return out;
}

function codeBlock(el: hast.Element): Block {
  // The HTML parser already drops the newline right after <pre>; one inside <code> is a visible blank line.
  const text = textOf(el, true).replace(/\r\n?/g, '\n').replace(/\n$/, '');
  const code = elementChildren(el).find((e) => e.tagName === 'code');
  const language = /(?:^|\s)(?:language|lang)-(\S+)/.exec(prop(code ?? el, 'className') ?? '')?.[1];
  return { type: 'code', text, language };
}

/** Elements whose drawing (borders, pictures, fields) hidden text cannot hide. */
const NOT_HIDEABLE = new Set(['table', 'img', 'hr', 'svg', 'video', 'audio', 'iframe', 'object', 'embed', 'canvas', 'input', 'select', 'textarea', 'button']);

/**
 * Hidden content (display:none, visibility:hidden, the hidden attribute) is kept as Word hidden
 * text when it is only text, as an e-mail preheader is: Word hides it as a browser does, and
 * it stays in the document. Hidden structures (tables, images, controls) are left out.
 */
function hideableAsText(el: hast.Element): boolean {
  const stack: hast.ElementContent[] = [el];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.type !== 'element') continue;
    if (NOT_HIDEABLE.has(n.tagName)) return false;
    append(stack, n.children);
  }
  return true;
}

/** Whether an element is, or holds, a block-level element. */
function holdsBlock(el: hast.Element): boolean {
  const stack: hast.Element[] = [el];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (BLOCKS.has(n.tagName)) return true;
    if (SKIPPED.has(n.tagName)) continue;
    for (const child of n.children) if (child.type === 'element') stack.push(child);
  }
  return false;
}

function containsTable(el: hast.Element): boolean {
  const stack: hast.ElementContent[] = [...el.children];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.type !== 'element') continue;
    if (n.tagName === 'table') return true;
    append(stack, n.children);
  }
  return false;
}

function fontMarks(el: hast.Element): RunMarks {
  const marks: RunMarks = {};
  const color = parseColor(prop(el, 'color') ?? '');
  if (color) marks.color = color;
  const face = prop(el, 'face')?.split(',')[0]?.trim().replace(/^["']|["']$/g, '');
  if (face) marks.font = face;
  const size = prop(el, 'size');
  if (size) {
    const n = Number.parseInt(size, 10);
    const level = /^[+-]/.test(size) ? 3 + n : n;
    if (level >= 1 && level <= 7) marks.halfPoints = FONT_SIZES[level];
    else marks.halfPoints = parseFontSize(size);
  }
  return marks;
}

/** The size the width/height attributes give an image (one of them keeps its proportions). */
function displaySize(el: hast.Element, image: { widthPx: number; heightPx: number }): { widthPx: number; heightPx: number } {
  const width = clampInt(prop(el, 'width'), 0, 20_000);
  const height = clampInt(prop(el, 'height'), 0, 20_000);
  if (width > 0 && height > 0) return { widthPx: width, heightPx: height };
  if (width > 0 && image.widthPx > 0) return { widthPx: width, heightPx: Math.max(1, Math.round((image.heightPx * width) / image.widthPx)) };
  if (height > 0 && image.heightPx > 0) return { widthPx: Math.max(1, Math.round((image.widthPx * height) / image.heightPx)), heightPx: height };
  return { widthPx: image.widthPx, heightPx: image.heightPx };
}

function clampInt(value: string | undefined, min: number, max: number): number {
  const n = Number.parseInt(value ?? '', 10);
  if (!Number.isFinite(n) || n < min) return min;
  return Math.min(n, max);
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}

/** Spaces ending a text; the run must start after a non-space, else ` +$` rescans it from each of its positions. */
export const TRAILING_SPACES = /(?<! ) +$/;

function trimTrailingSpace(inlines: Inline[]): void {
  for (let i = inlines.length - 1; i >= 0; i--) {
    const inline = inlines[i];
    const target = inline.type === 'revision' && inline.children.length === 1 ? inline.children[0] : inline;
    if (target.type === 'bookmark') continue;
    if (target.type === 'text') {
      target.text = target.text.replace(TRAILING_SPACES, '');
      if (target.text === '') {
        inlines.splice(i, 1);
        continue;
      }
    }
    return;
  }
}

/** Internal link targets (`href="#id"`) and image sources found in the tree. */
export function scanHtml(tree: hast.Root): { linkTargets: Set<string>; imageSources: string[] } {
  const linkTargets = new Set<string>();
  const stack: hast.Nodes[] = [tree];
  while (stack.length > 0) {
    const n = stack.pop()!;
    if (n.type === 'element') {
      const href = prop(n, 'href');
      if (n.tagName === 'a' && href?.startsWith('#')) linkTargets.add(safeDecode(href.slice(1)));
    }
    if ('children' in n) append(stack, n.children as hast.Nodes[]);
  }
  return { linkTargets, imageSources: imageUrls(tree) };
}
