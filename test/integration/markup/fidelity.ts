import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Block-level fidelity against pandoc as an independent reader: the source is read by pandoc
 * (`-f gfm` for Markdown — our front end implements CommonMark + GFM, not pandoc's own
 * dialect — and `-f html`), our DOCX by `pandoc -f docx`; both ASTs are normalised for what
 * a DOCX cannot or pandoc's docx reader does not carry, cut into block units and aligned.
 *
 * The measure that counts is relative to pandoc's own round trip (source → pandoc's DOCX →
 * pandoc): of the source units that survive pandoc's own DOCX, the share that also survives
 * ours. What pandoc's docx reader cannot read back from any DOCX (it moves the later blocks of
 * a list item after the list, for instance) is thereby not held against us, and everything it
 * does read back is.
 */
type Json = any; // pandoc's JSON AST

export interface FidelityResult {
  sourceUnits: string[];
  ourUnits: string[];
  matched: number;
  share: number;
  missing: string[];
  /** Against pandoc's own round trip: the source units pandoc's DOCX keeps, and how many of them ours keeps. */
  relative?: { units: number; matched: number; share: number; missing: string[] };
}

export function pandocJson(args: string[], input?: Buffer, cwd?: string): Json {
  const out = execFileSync('pandoc', [...args, '-t', 'json'], { input, cwd, maxBuffer: 256 * 1024 * 1024, stdio: ['pipe', 'pipe', 'ignore'] });
  return JSON.parse(out.toString('utf8'));
}

/** Inline list → normalised text with formatting kept as light markers. */
function inlineText(inlines: Json[], opts: Opts): string {
  let s = '';
  for (const i of inlines) s += inline(i, opts);
  return s;
}

interface Opts {
  side: 'source' | 'ours';
}

/**
 * Word runs carry bold/italic/link as flags with no nesting order, so the reader's choice of
 * Strong-inside-Emph vs Emph-inside-Strong (and formatting inside vs around a link) is
 * canonicalised: Strong outermost, then Emph, then Link.
 */
const NEST_RANK: Record<string, number> = { Strong: 0, Emph: 1, Link: 2 };

function canonicalNesting(i: Json): Json {
  const inner = i.t === 'Link' ? i.c[1] : i.c;
  if (!(i.t in NEST_RANK) || !Array.isArray(inner) || inner.length !== 1) return i;
  const child = inner[0];
  if (!(child.t in NEST_RANK) || NEST_RANK[child.t] >= NEST_RANK[i.t]) return i;
  const childInner = child.t === 'Link' ? child.c[1] : child.c;
  const swappedInner = canonicalNesting(i.t === 'Link' ? { ...i, c: [i.c[0], childInner, i.c[2]] } : { ...i, c: childInner });
  return child.t === 'Link' ? { ...child, c: [child.c[0], [swappedInner], child.c[2]] } : { ...child, c: [swappedInner] };
}

function inline(raw: Json, opts: Opts): string {
  const i = canonicalNesting(raw);
  switch (i.t) {
    case 'Str': return i.c;
    case 'Space': case 'SoftBreak': return ' ';
    case 'LineBreak': return '\n';
    case 'Emph': return marked('_', inlineText(i.c, opts));
    case 'Strong': return marked('*', inlineText(i.c, opts));
    case 'Strikeout': return marked('~', inlineText(i.c, opts));
    case 'Superscript': return marked('^', inlineText(i.c, opts));
    case 'Subscript': return marked(',', inlineText(i.c, opts));
    case 'Underline': return marked('+', inlineText(i.c, opts));
    case 'SmallCaps': return inlineText(i.c, opts);
    case 'Code': return codeSpan(i.c[1]);
    // Pandoc's docx writer/reader round-trip smart quotes as characters; compare the text.
    case 'Quoted': return i.c[0].t === 'DoubleQuote' ? `\u201C${inlineText(i.c[1], opts)}\u201D` : `\u2018${inlineText(i.c[1], opts)}\u2019`;
    case 'Link': return `[${inlineText(i.c[1], opts)}](${i.c[2][0]})`;
    // Image targets differ by nature (source path vs. media/imageN in the package), and pandoc's
    // own writer replaces a figure's description by its caption: an image is compared by presence.
    case 'Image': return '![]';
    case 'Note': return `^[${units(i.c, opts).join(' | ')}]`;
    // Tracked changes (read with --track-changes=all) are shown by Word as underlined
    // insertions and struck-through deletions, which is how pandoc's HTML reader reads the
    // <ins>/<del> they come from.
    case 'Span':
      if (i.c[0][1].includes('insertion')) return marked('+', inlineText(i.c[1], opts));
      if (i.c[0][1].includes('deletion')) return marked('~', inlineText(i.c[1], opts));
      // Other spans carry only attributes (bookmarks from docx, classes from HTML): keep their text.
      return inlineText(i.c[1], opts);
    // Raw HTML/TeX cannot live in a DOCX (pandoc's own docx writer drops it too).
    case 'RawInline': return '';
    case 'Math': return i.c[1];
    case 'Cite': return inlineText(i.c[1], opts);
    default: return '';
  }
}

/** An empty formatted span has no run in Word and shows nothing in a browser: nothing to compare. */
const marked = (marker: string, text: string) => (text.trim() === '' ? text : `${marker}${text}${marker}`);

/**
 * Whitespace at the edge of a code span is compared as whitespace next to it: browsers collapse
 * it (white-space: normal) so where a space sits, inside or just outside the code, is not
 * visible, and pandoc's HTML reader keeps spaces a browser drops.
 */
function codeSpan(code: string): string {
  const trimmed = code.trim();
  if (!trimmed) return code ? ' ' : '';
  return `${/^\s/.test(code) ? ' ' : ''}\`${trimmed}\`${/\s$/.test(code) ? ' ' : ''}`;
}

const squash = (s: string) => s.replace(/[ \t\u00A0]+/g, ' ').replace(/ ?\n ?/g, '\n').trim();

function cellText(cell: Json, opts: Opts): string {
  // Cell: [attr, alignment, rowspan, colspan, blocks]
  return `${cell[2]}x${cell[3]}:${units(cell[4], opts).join(' / ')}`;
}

function tableUnits(t: Json, opts: Opts): string[] {
  // Table: [attr, caption, colspecs, head, bodies, foot]. Column alignment and widths are not
  // read back by pandoc 2.17's docx reader, so they are left out of the comparison.
  const [, caption, , head, bodies, foot] = t.c;
  const rows: string[] = [];
  const headRows = head[1];
  const bodyRows = bodies.flatMap((b: Json) => [...b[2], ...b[3]]);
  for (const row of headRows) rows.push(`TH| ${row[1].map((c: Json) => cellText(c, opts)).join(' | ')}`);
  for (const row of [...bodyRows, ...foot[1]]) rows.push(`TR| ${row[1].map((c: Json) => cellText(c, opts)).join(' | ')}`);
  const cap = units(caption[1], opts).join(' ');
  return [`Table ${headRows.length > 0 ? 'with' : 'without'} header${cap ? ` caption=${cap}` : ''}`, ...rows];
}

/**
 * Cuts blocks into comparable units; containers contribute a marker plus their children. Units
 * inside lists carry their nesting level (`L2 P …` is a paragraph in a list nested in a list), and
 * an ordered list's marker its numbering style, so a flattened or renumbered list does not match.
 */
export function units(blocks: Json[], opts: Opts, level = 0): string[] {
  const out: string[] = [];
  const at = (unit: string) => out.push(level > 0 ? `L${level} ${unit}` : unit);
  for (const b of blocks) {
    switch (b.t) {
      // DOCX has no tight/loose list distinction: Plain and Para compare equal.
      case 'Para': case 'Plain': {
        const text = squash(inlineText(b.c, opts));
        if (text) at(`P ${text}`);
        break;
      }
      case 'Header': at(`H${b.c[0]} ${squash(inlineText(b.c[2], opts))}`); break;
      case 'CodeBlock': at(`CODE ${b.c[1].replace(/\s+$/, '')}`); break;
      // Containers become a marker unit followed by their children's units.
      case 'BlockQuote': at('QUOTE'); out.push(...units(b.c, opts, level)); break;
      // An empty list (pandoc's HTML reader makes one of a <ul> holding no <li>) renders
      // nothing and has no form in a DOCX.
      case 'BulletList':
        if (b.c.length === 0) break;
        at(`UL ${b.c.length}`);
        b.c.forEach((item: Json[]) => out.push(...units(item, opts, level + 1)));
        break;
      case 'OrderedList': {
        if (b.c[1].length === 0) break;
        const [start, style] = b.c[0];
        // Browsers number a list without a type in decimal, as Word does a decimal level.
        const numbering = style.t === 'DefaultStyle' ? 'Decimal' : style.t;
        at(`OL ${b.c[1].length} start=${start} ${numbering}`);
        b.c[1].forEach((item: Json[]) => out.push(...units(item, opts, level + 1)));
        break;
      }
      case 'DefinitionList':
        for (const [term, defs] of b.c) {
          at(`DT ${squash(inlineText(term, opts))}`);
          for (const def of defs) out.push(...units(def, opts, level).map((u) => `DD ${u}`));
        }
        break;
      case 'Table': out.push(...tableUnits(b, opts).map((u) => (level > 0 ? `L${level} ${u}` : u))); break;
      case 'Div': out.push(...units(b.c[1], opts, level)); break;
      case 'LineBlock': for (const l of b.c) at(`P ${squash(inlineText(l, opts))}`); break;
      // pandoc 2.17's docx reader reads no horizontal rule form back (neither a bottom-border
      // paragraph nor the VML rule pandoc itself writes), so rules are checked by unit tests.
      case 'HorizontalRule': break;
      case 'RawBlock': break; // cannot live in a DOCX
      case 'Figure': out.push(...units(b.c[2], opts, level)); break;
      default: break;
    }
  }
  return out;
}

function lcsTable(a: string[], b: string[]): Uint32Array[] {
  const rows = [new Uint32Array(b.length + 1)];
  for (let i = 1; i <= a.length; i++) {
    const prev = rows[i - 1];
    const cur = new Uint32Array(b.length + 1);
    for (let j = 1; j <= b.length; j++) cur[j] = a[i - 1] === b[j - 1] ? prev[j - 1] + 1 : Math.max(prev[j], cur[j - 1]);
    rows.push(cur);
  }
  return rows;
}

/** The units of `a` that a longest common subsequence with `b` keeps, in order. */
function aligned(a: string[], b: string[]): string[] {
  const table = lcsTable(a, b);
  const kept: string[] = [];
  for (let i = a.length, j = b.length; i > 0 && j > 0;) {
    if (a[i - 1] === b[j - 1]) {
      kept.push(a[i - 1]);
      i--;
      j--;
    } else if (table[i - 1][j] >= table[i][j - 1]) i--;
    else j--;
  }
  return kept.reverse();
}

/**
 * pandoc's docx reader joins consecutive "Source Code" paragraphs into one code block (Word
 * has no boundary between them but the paragraph mark), so adjacent code units are joined on
 * both sides before comparing.
 */
function mergeAdjacentCode(list: string[]): string[] {
  const out: string[] = [];
  const codePrefix = (u: string | undefined) => (u === undefined ? undefined : /^(?:L\d+ )?CODE /.exec(u)?.[0]);
  for (const u of list) {
    const last = out[out.length - 1];
    const prefix = codePrefix(u);
    if (prefix && codePrefix(last) === prefix) out[out.length - 1] = `${last}\n${u.slice(prefix.length)}`;
    else out.push(u);
  }
  return out;
}

export function compare(sourceAst: Json, ourAst: Json, pandocAst?: Json): FidelityResult {
  const sourceUnits = mergeAdjacentCode(units(sourceAst.blocks, { side: 'source' }));
  const ourUnits = mergeAdjacentCode(units(ourAst.blocks, { side: 'ours' }));
  const matched = aligned(sourceUnits, ourUnits).length;
  const ours = new Set(ourUnits);
  const result: FidelityResult = {
    sourceUnits, ourUnits, matched,
    share: sourceUnits.length === 0 ? 1 : matched / sourceUnits.length,
    missing: sourceUnits.filter((u) => !ours.has(u)),
  };
  if (pandocAst) {
    const kept = aligned(sourceUnits, mergeAdjacentCode(units(pandocAst.blocks, { side: 'ours' })));
    const keptByUs = aligned(kept, ourUnits);
    result.relative = { units: kept.length, matched: keptByUs.length, share: kept.length === 0 ? 1 : keptByUs.length / kept.length, missing: without(kept, keptByUs) };
  }
  return result;
}

/** `all` less one occurrence of each unit of `some` (a subsequence of it). */
function without(all: string[], some: string[]): string[] {
  const out: string[] = [];
  let j = 0;
  for (const unit of all) {
    if (j < some.length && some[j] === unit) j++;
    else out.push(unit);
  }
  return out;
}

export type From = 'gfm' | 'html';

/**
 * Reads the source with pandoc, pandoc's own DOCX of it and our DOCX, and compares them. pandoc
 * runs in an empty directory, as the service gets the one file: relative image paths resolve to
 * nothing on either side (and there is no network for remote ones).
 */
export function roundTrip(source: Buffer, from: From, ourDocx: Buffer): FidelityResult {
  const work = mkdtempSync(join(tmpdir(), 'markup-roundtrip-'));
  try {
    const input = join(work, from === 'gfm' ? 'source.md' : 'source.html');
    writeFileSync(input, source);
    // --preserve-tabs: pandoc otherwise expands tabs in the source, while a DOCX keeps them.
    const sourceAst = pandocJson(['-f', from, '--preserve-tabs', input], undefined, work);
    execFileSync('pandoc', ['-f', from, '--preserve-tabs', '-t', 'docx', '-o', join(work, 'pandoc.docx'), input], { cwd: work, stdio: 'ignore' });
    const pandocAst = pandocJson(['-f', 'docx', '--track-changes=all', join(work, 'pandoc.docx')], undefined, work);
    writeFileSync(join(work, 'ours.docx'), ourDocx);
    const ourAst = pandocJson(['-f', 'docx', '--track-changes=all', join(work, 'ours.docx')], undefined, work); // throws if pandoc cannot read it
    return compare(sourceAst, ourAst, pandocAst);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
