import type { Warning } from '../warnings.js';
import type * as md from 'mdast';
import { plainText } from '../model/plain-text.js';
import { nestingTooDeep } from '../model/input.js';
import type { ResolvedImage } from '../model/images.js';
import type { Slugger } from '../model/slug.js';
import type { Alignment, Block, Inline, ListBlock, RunMarks, TableBlock } from '../model/types.js';
import { append } from '../model/append.js';

/** Lowers an mdast tree (CommonMark + GFM) onto the document model. */
export interface MarkdownLoweringEnv {
  images: Map<string, ResolvedImage | undefined>;
  slugger: Slugger;
  maxDepth: number;
  warnings: Warning[];
  /** Lowers a raw HTML block (Markdown allows them) through the HTML front end. */
  htmlBlock: (node: md.Html) => Block[];
}

type InlineMark = 'bold' | 'italic' | 'strike' | 'underline' | 'superscript' | 'subscript' | 'code';

/**
 * A line break with the blanks around it. A match starts after a non-blank or at the break itself: from
 * inside a run of blanks not followed by a break, `[ \t]*\r?\n` rescanned the run at each position.
 */
export const LINE_BREAK_WITH_BLANKS = /(?<![ \t])[ \t]*\r?\n[ \t]*|\r?\n[ \t]*/g;

const INLINE_HTML_MARKS: Record<string, InlineMark> = {
  b: 'bold', strong: 'bold', i: 'italic', em: 'italic', s: 'strike', del: 'strike', strike: 'strike',
  u: 'underline', ins: 'underline', sup: 'superscript', sub: 'subscript', code: 'code', kbd: 'code', tt: 'code',
};

export class MarkdownLowering {
  private readonly definitions = new Map<string, md.Definition>();
  private readonly footnoteDefinitions = new Map<string, md.FootnoteDefinition>();
  private readonly openFootnotes = new Set<string>();

  constructor(private readonly env: MarkdownLoweringEnv) {}

  root(tree: md.Root): Block[] {
    this.collectDefinitions(tree);
    return this.blocks(tree.children, 0);
  }

  private collectDefinitions(tree: md.Root): void {
    const stack: md.Nodes[] = [tree];
    while (stack.length > 0) {
      const node = stack.pop()!;
      if (node.type === 'definition' && !this.definitions.has(node.identifier)) this.definitions.set(node.identifier, node);
      if (node.type === 'footnoteDefinition' && !this.footnoteDefinitions.has(node.identifier)) {
        this.footnoteDefinitions.set(node.identifier, node);
      }
      if ('children' in node) append(stack, node.children as md.Nodes[]);
    }
  }

  private blocks(nodes: md.Nodes[], depth: number): Block[] {
    const out: Block[] = [];
    for (const node of nodes) append(out, this.block(node, depth));
    return out;
  }

  private block(node: md.Nodes, depth: number): Block[] {
    switch (node.type) {
      case 'paragraph':
        return [{ type: 'paragraph', inlines: this.inlines(node.children, {}, 0) }];
      case 'heading': {
        const slug = this.env.slugger.slug(plainText(node));
        return [{ type: 'heading', level: node.depth, inlines: this.inlines(node.children, {}, 0), ids: slug ? [slug] : [] }];
      }
      case 'blockquote':
        this.checkDepth(depth + 1, 'block quotes or lists');
        return [{ type: 'quote', blocks: this.blocks(node.children, depth + 1) }];
      case 'list':
        this.checkDepth(depth + 1, 'block quotes or lists');
        return [this.list(node, depth + 1)];
      case 'code':
        return [{ type: 'code', text: node.value, language: node.lang ?? undefined }];
      case 'thematicBreak':
        return [{ type: 'rule' }];
      case 'table':
        return [this.table(node)];
      case 'html':
        return this.env.htmlBlock(node);
      default:
        // definition, footnoteDefinition and front matter are consumed elsewhere.
        return [];
    }
  }

  private checkDepth(depth: number, what: string): void {
    if (depth > this.env.maxDepth) throw nestingTooDeep(this.env.maxDepth, what);
  }

  private list(node: md.List, depth: number): ListBlock {
    const tight = !node.spread && node.children.every((item) => !item.spread);
    return {
      type: 'list',
      ordered: Boolean(node.ordered),
      start: node.ordered ? node.start ?? 1 : 1,
      // Markdown lists are numbered 1. 2. 3. at every level (as CommonMark renders them).
      format: node.ordered ? 'decimal' : undefined,
      tight,
      items: node.children.map((item) => ({
        blocks: this.blocks(item.children, depth),
        checked: typeof item.checked === 'boolean' ? item.checked : undefined,
      })),
    };
  }

  private table(node: md.Table): TableBlock {
    const columnAlign = (node.align ?? []).map((a): Alignment | undefined => a ?? undefined);
    // GFM: the header row fixes the column count; longer rows are cut, shorter ones padded.
    const columns = node.children[0]?.children.length ?? 0;
    return {
      type: 'table',
      columnAlign,
      rows: node.children.map((row, index) => ({
        header: index === 0,
        cells: Array.from({ length: columns }, (_, col) => {
          const cell = row.children[col];
          return {
            blocks: cell && cell.children.length > 0 ? [{ type: 'paragraph' as const, inlines: this.inlines(cell.children, {}, 0) }] : [],
            colSpan: 1,
            rowSpan: 1,
            header: index === 0,
          };
        }),
      })),
    };
  }

  private inlines(nodes: md.PhrasingContent[], marks: RunMarks, depth: number): Inline[] {
    if (depth > this.env.maxDepth) throw nestingTooDeep(this.env.maxDepth, 'inline formatting');
    const out: Inline[] = [];
    const htmlMarks = new Map<InlineMark, number>();
    const current = (): RunMarks => {
      const active: RunMarks = { ...marks };
      for (const [mark, count] of htmlMarks) if (count > 0) active[mark] = true;
      return active;
    };
    for (const node of nodes) {
      if (node.type === 'html') {
        this.inlineHtml(node.value, htmlMarks, out);
        continue;
      }
      append(out, this.inline(node, current(), depth));
    }
    return out;
  }

  /** Inline HTML tags toggle formatting for the following siblings; <br> breaks; others vanish. */
  private inlineHtml(value: string, htmlMarks: Map<InlineMark, number>, out: Inline[]): void {
    const tag = /^<(\/?)([a-zA-Z][a-zA-Z0-9]*)\b[^>]*?(\/?)>$/.exec(value.trim());
    if (!tag) return;
    const [, closing, rawName, selfClosing] = tag;
    const name = rawName.toLowerCase();
    if (name === 'br') {
      out.push({ type: 'break' });
      return;
    }
    const mark = INLINE_HTML_MARKS[name];
    if (!mark || selfClosing) return;
    htmlMarks.set(mark, Math.max(0, (htmlMarks.get(mark) ?? 0) + (closing ? -1 : 1)));
  }

  private inline(node: md.PhrasingContent, marks: RunMarks, depth: number): Inline[] {
    switch (node.type) {
      case 'text':
        return [{ type: 'text', text: node.value.replace(LINE_BREAK_WITH_BLANKS, ' '), marks }];
      case 'emphasis':
        return this.inlines(node.children, { ...marks, italic: true }, depth + 1);
      case 'strong':
        return this.inlines(node.children, { ...marks, bold: true }, depth + 1);
      case 'delete':
        return this.inlines(node.children, { ...marks, strike: true }, depth + 1);
      case 'inlineCode':
        return [{ type: 'text', text: node.value, marks: { ...marks, code: true } }];
      case 'break':
        return [{ type: 'break', marks }];
      case 'link':
        return [this.link(node.url, node.title ?? undefined, this.inlines(node.children, marks, depth + 1))];
      case 'linkReference': {
        const definition = this.definitions.get(node.identifier);
        const children = this.inlines(node.children, marks, depth + 1);
        if (!definition) return [{ type: 'text', text: '[', marks }, ...children, { type: 'text', text: ']', marks }];
        return [this.link(definition.url, definition.title ?? undefined, children)];
      }
      case 'image':
        return this.image(node.url, node.alt ?? '', node.title ?? undefined, marks);
      case 'imageReference': {
        const definition = this.definitions.get(node.identifier);
        if (!definition) return [{ type: 'text', text: `![${node.alt ?? ''}]`, marks }];
        return this.image(definition.url, node.alt ?? '', definition.title ?? undefined, marks);
      }
      case 'footnoteReference':
        return this.footnote(node, marks);
      default:
        return [];
    }
  }

  private link(url: string, title: string | undefined, children: Inline[]): Inline {
    if (url.startsWith('#')) {
      let anchor = url.slice(1);
      try {
        anchor = decodeURIComponent(anchor);
      } catch {
        // keep the raw fragment
      }
      return { type: 'link', anchor, title, children };
    }
    return { type: 'link', url, title, children };
  }

  private image(url: string, alt: string, title: string | undefined, marks: RunMarks): Inline[] {
    const resolved = this.env.images.get(url);
    if (resolved) return [{ ...resolved, alt, title }];
    return alt ? [{ type: 'text', text: alt, marks }] : [];
  }

  private footnote(node: md.FootnoteReference, marks: RunMarks): Inline[] {
    const definition = this.footnoteDefinitions.get(node.identifier);
    if (!definition || this.openFootnotes.has(node.identifier)) {
      return [{ type: 'text', text: `[^${node.label ?? node.identifier}]`, marks }];
    }
    this.openFootnotes.add(node.identifier);
    try {
      return [{ type: 'footnote', blocks: this.blocks(definition.children, 0) }];
    } finally {
      this.openFootnotes.delete(node.identifier);
    }
  }
}

/** Image URLs the tree refers to (directly or through definitions), for resolving up front. */
export function collectImageUrls(tree: md.Root): string[] {
  const definitions = new Map<string, string>();
  const references: string[] = [];
  const urls: string[] = [];
  const stack: md.Nodes[] = [tree];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.type === 'image') urls.push(node.url);
    else if (node.type === 'imageReference') references.push(node.identifier);
    else if (node.type === 'definition') definitions.set(node.identifier, node.url);
    if ('children' in node) append(stack, node.children as md.Nodes[]);
  }
  for (const id of references) {
    const url = definitions.get(id);
    if (url) urls.push(url);
  }
  return urls;
}
