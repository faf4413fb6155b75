import { execFileSync } from 'node:child_process';

/**
 * Block-level fidelity against pandoc as an independent reader: the source is read by pandoc
 * (`-f gfm` for Markdown — our front end implements CommonMark + GFM, not pandoc's own
 * dialect — and `-f html`), our DOCX by `pandoc -f docx`; both ASTs are normalised for what
 * a DOCX cannot or pandoc's docx reader does not carry, cut into block units and aligned.
 */
type Json = any; // pandoc's JSON AST

export interface FidelityResult {
  sourceUnits: string[];
  ourUnits: string[];
  matched: number;
  share: number;
  missing: string[];
}

export function pandocJson(args: string[], input?: Buffer): Json {
  const out = execFileSync('pandoc', [...args, '-t', 'json'], { input, maxBuffer: 256 * 1024 * 1024 });
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
    // Image targets differ by nature (source path vs. media/imageN in the package).
    case 'Image': return `![${inlineText(i.c[1], opts)}]`;
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

/** Cuts blocks into comparable units; containers contribute a marker plus their children. */
export function units(blocks: Json[], opts: Opts): string[] {
  const out: string[] = [];
  for (const b of blocks) {
    switch (b.t) {
      // DOCX has no tight/loose list distinction: Plain and Para compare equal.
      case 'Para': case 'Plain': {
        const text = squash(inlineText(b.c, opts));
        if (text) out.push(`P ${text}`);
        break;
      }
      case 'Header': out.push(`H${b.c[0]} ${squash(inlineText(b.c[2], opts))}`); break;
      case 'CodeBlock': out.push(`CODE ${b.c[1].replace(/\s+$/, '')}`); break;
      // Containers become a marker unit followed by their children's units, unprefixed:
      // pandoc 2.17's docx reader turns the indented non-first blocks of a list item into a
      // block quote after the list (it does so for pandoc's own DOCX output too), so nesting
      // below the marker is not compared; the markers (with item counts) still are.
      case 'BlockQuote': out.push('QUOTE', ...units(b.c, opts)); break;
      // An empty list (pandoc's HTML reader makes one of a <ul> holding no <li>) renders
      // nothing and has no form in a DOCX.
      case 'BulletList':
        if (b.c.length === 0) break;
        out.push(`UL ${b.c.length}`);
        b.c.forEach((item: Json[]) => out.push(...units(item, opts)));
        break;
      case 'OrderedList':
        if (b.c[1].length === 0) break;
        out.push(`OL ${b.c[1].length} start=${b.c[0][0]}`);
        b.c[1].forEach((item: Json[]) => out.push(...units(item, opts)));
        break;
      case 'DefinitionList':
        for (const [term, defs] of b.c) {
          out.push(`DT ${squash(inlineText(term, opts))}`);
          for (const def of defs) out.push(...units(def, opts).map((u) => `DD ${u}`));
        }
        break;
      case 'Table': out.push(...tableUnits(b, opts)); break;
      case 'Div': out.push(...units(b.c[1], opts)); break;
      case 'LineBlock': out.push(...b.c.map((l: Json[]) => `P ${squash(inlineText(l, opts))}`)); break;
      // pandoc 2.17's docx reader reads no horizontal rule form back (neither a bottom-border
      // paragraph nor the VML rule pandoc itself writes), so rules are checked by unit tests.
      case 'HorizontalRule': break;
      case 'RawBlock': break; // cannot live in a DOCX
      case 'Figure': out.push(...units(b.c[2], opts)); break;
      default: break;
    }
  }
  return out;
}

function lcs(a: string[], b: string[]): number {
  let prev = new Uint32Array(b.length + 1);
  let cur = new Uint32Array(b.length + 1);
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      cur[j] = a[i - 1] === b[j - 1] ? prev[j - 1] + 1 : Math.max(prev[j], cur[j - 1]);
    }
    [prev, cur] = [cur, prev];
  }
  return prev[b.length];
}

/**
 * pandoc's docx reader joins consecutive "Source Code" paragraphs into one code block (Word
 * has no boundary between them but the paragraph mark), so adjacent code units are joined on
 * both sides before comparing.
 */
function mergeAdjacentCode(list: string[]): string[] {
  const out: string[] = [];
  for (const u of list) {
    const last = out[out.length - 1];
    if (u.startsWith('CODE ') && last?.startsWith('CODE ')) out[out.length - 1] = `${last}\n${u.slice(5)}`;
    else out.push(u);
  }
  return out;
}

export function compare(sourceAst: Json, ourAst: Json): FidelityResult {
  const sourceUnits = mergeAdjacentCode(units(sourceAst.blocks, { side: 'source' }));
  const ourUnits = mergeAdjacentCode(units(ourAst.blocks, { side: 'ours' }));
  const matched = lcs(sourceUnits, ourUnits);
  const ours = new Set(ourUnits);
  return {
    sourceUnits, ourUnits, matched,
    share: sourceUnits.length === 0 ? 1 : matched / sourceUnits.length,
    missing: sourceUnits.filter((u) => !ours.has(u)),
  };
}
