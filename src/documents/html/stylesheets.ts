import type * as hast from 'hast';
import { DomainError, ErrorCode } from '../../errors/domain-error.js';
import { findAttached, normaliseReference } from '../model/attached-files.js';
import { warning, type Warning } from '../warnings.js';

/**
 * An HTML document's own stylesheets — `<style>` elements, and `<link rel="stylesheet" href=NAME>`
 * whose NAME is among the files sent with it (attached-files.ts; never a file system or the network)
 * — applied as if each matching declaration had been written in the element's `style` attribute,
 * which the lowering (to-model.ts, css.ts) already maps onto Word: bold, italic, underline, strike,
 * colour, background, font size, vertical align, text-align, page breaks, display/visibility, list
 * numbering.
 *
 * Selectors: type (`p`), universal (`*`), `.class`, `#id`, compounds of them (`p.note#x`), the
 * descendant combinator (`div p`) and selector lists (`h1, .title`). Others (`>`, `+`, `~`,
 * attribute selectors, pseudo-classes and -elements) and at-rules (`@media`, `@import`, …) are left
 * out, with one STYLESHEET_NOT_APPLIED warning counting them. Cascade: declarations of matching
 * rules by specificity (ids, classes, types), then source order; the element's own `style` after
 * them; `!important` sheet declarations after that, the style attribute's own `!important` last.
 *
 * Work is counted: each compound selector tested against an element is one step, and past
 * STYLESHEET_BUDGET.maxMatchSteps the document is refused with 422 DOCUMENT_TOO_COMPLEX
 * (`convert.maxStyleMatchSteps`). Rules are indexed by the id, class or type of their rightmost
 * compound, so an element is tested only against rules that can match it.
 */
export interface StylesheetBudget {
  /** Selectors in all the document's stylesheets together. */
  maxSelectors: number;
  /** Compound selectors tested against elements, all elements together. */
  maxMatchSteps: number;
}

export const STYLESHEET_BUDGET: Readonly<StylesheetBudget> = { maxSelectors: 10_000, maxMatchSteps: 5_000_000 };

interface Compound {
  tag?: string;
  id?: string;
  classes: string[];
}

interface Rule {
  /** Compounds from left to right; the last matches the element itself, the others its ancestors. */
  compounds: Compound[];
  specificity: number;
  order: number;
  normal: string[];
  important: string[];
}

const COMPOUND = /^(\*|[a-zA-Z][a-zA-Z0-9-]*)?((?:[.#]-?[_a-zA-Z][\w-]*)*)$/;

function parseCompound(text: string): Compound | undefined {
  const m = COMPOUND.exec(text);
  if (!m || text === '') return undefined;
  const compound: Compound = { classes: [] };
  if (m[1] && m[1] !== '*') compound.tag = m[1].toLowerCase();
  for (const [, kind, name] of m[2]!.matchAll(/([.#])(-?[_a-zA-Z][\w-]*)/g)) {
    if (kind === '#') {
      if (compound.id !== undefined && compound.id !== name) return undefined; // #a#b never matches
      compound.id = name;
    } else compound.classes.push(name!);
  }
  return compound;
}

/** Compounds of a selector, or undefined when it uses anything but the descendant combinator. */
function parseSelector(text: string): Compound[] | undefined {
  const parts = text.trim().split(/\s+/);
  const compounds: Compound[] = [];
  for (const part of parts) {
    const compound = parseCompound(part);
    if (!compound) return undefined;
    compounds.push(compound);
  }
  return compounds.length > 0 ? compounds : undefined;
}

const specificityOf = (compounds: Compound[]) =>
  compounds.reduce((sum, c) => sum + (c.id ? 1_000_000 : 0) + c.classes.length * 1_000 + (c.tag ? 1 : 0), 0);

/** Splits declarations, the `!important` ones apart (their marker removed). */
function declarations(block: string): { normal: string[]; important: string[] } {
  const normal: string[] = [];
  const important: string[] = [];
  for (const declaration of block.split(';')) {
    if (!declaration.includes(':')) continue;
    if (/!\s*important\s*$/i.test(declaration)) important.push(declaration.replace(/!\s*important\s*$/i, ''));
    else normal.push(declaration);
  }
  return { normal, important };
}

interface ParsedSheet {
  rules: Rule[];
  /** Selectors and at-rules left out. */
  ignored: number;
}

/**
 * The rules of a stylesheet's text. One pass: a prelude runs to `{` or `;`, a block to its matching
 * `}` (quotes and nested braces followed); each step moves past at least one character.
 */
export function parseStylesheet(css: string, firstOrder = 0): ParsedSheet {
  const text = css.replace(/\/\*[\s\S]*?(?:\*\/|$)/g, ' ');
  const rules: Rule[] = [];
  let ignored = 0;
  let order = firstOrder;
  let i = 0;
  while (i < text.length) {
    const open = indexOutsideQuotes(text, i, '{;');
    if (open < 0) break;
    const prelude = text.slice(i, open).trim();
    if (text[open] === ';') {
      if (prelude) ignored++; // @import, @charset, stray text
      i = open + 1;
      continue;
    }
    const close = blockEnd(text, open);
    const block = text.slice(open + 1, close);
    i = close + 1;
    if (prelude.startsWith('@')) {
      ignored++;
      continue;
    }
    const { normal, important } = declarations(block);
    for (const selector of prelude.split(',')) {
      const compounds = parseSelector(selector);
      if (!compounds) {
        ignored++;
        continue;
      }
      rules.push({ compounds, specificity: specificityOf(compounds), order: order++, normal, important });
    }
  }
  return { rules, ignored };
}

/** First index at or after `from` of one of `chars`, outside quoted strings; -1 when none. */
function indexOutsideQuotes(text: string, from: number, chars: string): number {
  let quote = '';
  for (let i = from; i < text.length; i++) {
    const ch = text[i]!;
    if (quote) {
      if (ch === '\\') i++;
      else if (ch === quote) quote = '';
    } else if (ch === '"' || ch === "'") quote = ch;
    else if (chars.includes(ch)) return i;
  }
  return -1;
}

/** Index of the `}` closing the block opened at `open` (nested blocks followed), or the text's end. */
function blockEnd(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; ) {
    const next = indexOutsideQuotes(text, i, '{}');
    if (next < 0) return text.length;
    depth += text[next] === '{' ? 1 : -1;
    if (depth === 0) return next;
    i = next + 1;
  }
  return text.length;
}

const textContent = (el: hast.Element): string =>
  el.children.map((c) => (c.type === 'text' ? c.value : '')).join('');

const prop = (el: hast.Element, name: string): string | undefined => {
  const value = el.properties?.[name];
  if (value === undefined || value === null || value === false) return undefined;
  return Array.isArray(value) ? value.join(' ') : String(value);
};

const classesOf = (el: hast.Element): string[] => {
  const value: unknown = el.properties?.className;
  return Array.isArray(value) ? value.map(String) : typeof value === 'string' ? value.split(/\s+/).filter(Boolean) : [];
};

const describe = (href: string) => `"${href.length > 200 ? `${href.slice(0, 200)}…` : href}"`;

/** The stylesheets of the document in document order: `<style>` text and linked files that were sent. */
function collectStylesheets(tree: hast.Root, files: ReadonlyMap<string, Uint8Array> | undefined, warnings: Warning[]): string[] {
  const sheets: string[] = [];
  const stack: hast.Nodes[] = [tree];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (node.type === 'element' && node.tagName === 'style') {
      const type = prop(node, 'type')?.trim().toLowerCase();
      if (!type || type === 'text/css') sheets.push(textContent(node));
      continue;
    }
    if (node.type === 'element' && node.tagName === 'link' && (prop(node, 'rel') ?? '').toLowerCase().split(/\s+/).includes('stylesheet')) {
      const href = prop(node, 'href') ?? '';
      const name = normaliseReference(href);
      const file = name === undefined || !files ? undefined : findAttached(files, name);
      if (file) sheets.push(new TextDecoder('utf-8').decode(file));
      else {
        warnings.push(
          warning(
            'STYLESHEET_NOT_APPLIED',
            name === undefined
              ? `Stylesheet ${describe(href)} was not applied: only stylesheets sent with the document as files are read (never fetched).`
              : `Stylesheet ${describe(href)} refers to the file "${name.slice(0, 200)}", which was not sent with the document (send it as a \`files\` part with that file name); it was not applied.`,
            href.slice(0, 200),
          ),
        );
      }
      continue;
    }
    if ('children' in node) for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i] as hast.Nodes);
  }
  return sheets;
}

const matchesCompound = (el: hast.Element, compound: Compound, classes: string[]) =>
  (compound.tag === undefined || compound.tag === el.tagName) &&
  (compound.id === undefined || prop(el, 'id') === compound.id) &&
  compound.classes.every((c) => classes.includes(c));

export function styleTooComplex(limit: keyof StylesheetBudget, budget: StylesheetBudget = STYLESHEET_BUDGET): DomainError {
  const message =
    limit === 'maxSelectors'
      ? `The document's stylesheets have more than ${budget.maxSelectors.toLocaleString('en')} selectors; send a smaller stylesheet.`
      : `Matching the document's stylesheets to its elements takes more than ${budget.maxMatchSteps.toLocaleString('en')} selector tests; simplify the stylesheets (fewer descendant selectors) or the document.`;
  const name = limit === 'maxSelectors' ? 'convert.maxStyleSelectors' : 'convert.maxStyleMatchSteps';
  return new DomainError(ErrorCode.DOCUMENT_TOO_COMPLEX, message, { extensions: { limit: { name, max: budget[limit] } } });
}

/**
 * Applies the document's stylesheets to its elements (see the module comment) by rewriting their
 * `style` property; returns how many elements got declarations. Warns about linked stylesheets that
 * were not sent and about selectors and at-rules left out.
 */
export function applyStylesheets(tree: hast.Root, files: ReadonlyMap<string, Uint8Array> | undefined, warnings: Warning[], budget: StylesheetBudget = STYLESHEET_BUDGET): number {
  const sheets = collectStylesheets(tree, files, warnings);
  if (sheets.length === 0) return 0;
  const rules: Rule[] = [];
  let ignored = 0;
  for (const css of sheets) {
    const parsed = parseStylesheet(css, rules.length);
    rules.push(...parsed.rules);
    ignored += parsed.ignored;
    if (rules.length > budget.maxSelectors) throw styleTooComplex('maxSelectors', budget);
  }
  if (ignored > 0) {
    warnings.push(warning('STYLESHEET_NOT_APPLIED', `${ignored} selector(s) or at-rule(s) of the document's stylesheets were left out: only type, class, id and descendant selectors (and lists of them) are applied, no @media, @import, >, +, ~, [attribute] or :pseudo.`));
  }
  // Index by the rightmost compound's most selective part.
  const index = new Map<string, Rule[]>();
  for (const rule of rules) {
    const last = rule.compounds[rule.compounds.length - 1]!;
    const key = last.id !== undefined ? `#${last.id}` : last.classes.length > 0 ? `.${last.classes[0]}` : last.tag ?? '*';
    const list = index.get(key);
    if (list) list.push(rule);
    else index.set(key, [rule]);
  }
  let steps = 0;
  const step = () => {
    if (++steps > budget.maxMatchSteps) throw styleTooComplex('maxMatchSteps', budget);
  };
  let styled = 0;
  const ancestors: { el: hast.Element; classes: string[] }[] = [];
  const visit = (el: hast.Element) => {
    const classes = classesOf(el);
    const id = prop(el, 'id');
    const candidates = new Set<Rule>([...(index.get('*') ?? []), ...(index.get(el.tagName) ?? []), ...(id === undefined ? [] : index.get(`#${id}`) ?? []), ...classes.flatMap((c) => index.get(`.${c}`) ?? [])]);
    const matched: Rule[] = [];
    for (const rule of candidates) {
      const { compounds } = rule;
      step();
      if (!matchesCompound(el, compounds[compounds.length - 1]!, classes)) continue;
      // Descendant combinators only: matching each compound to the nearest ancestor that has it is exact.
      let a = ancestors.length - 1;
      let k = compounds.length - 2;
      for (; k >= 0 && a >= 0; a--) {
        step();
        if (matchesCompound(ancestors[a]!.el, compounds[k]!, ancestors[a]!.classes)) k--;
      }
      if (k < 0) matched.push(rule);
    }
    if (matched.length > 0) {
      matched.sort((x, y) => x.specificity - y.specificity || x.order - y.order);
      const inline = prop(el, 'style') ?? '';
      const own = declarations(inline);
      const style = [...matched.flatMap((r) => r.normal), ...own.normal, ...matched.flatMap((r) => r.important), ...own.important].join(';');
      el.properties = { ...el.properties, style };
      styled++;
    }
    ancestors.push({ el, classes });
    for (const child of el.children) if (child.type === 'element') visit(child);
    ancestors.pop();
  };
  for (const child of tree.children) if (child.type === 'element') visit(child);
  return styled;
}
