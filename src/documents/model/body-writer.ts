import type {
  Alignment, Block, CodeBlock, HeadingBlock, ImageInline, Inline, ListBlock, ParagraphBlock, RunMarks, TableBlock, TableCell,
} from './types.js';
import { NumberingRegistry, MAX_LIST_LEVELS, listIndent } from './numbering.js';
import { MONO_FONT } from './styles.js';
import { NS } from '../ooxml/constants.js';
import { escapeXml as esc } from '../ooxml/xml-text.js';

/**
 * Serialises model blocks into WordprocessingML body XML (document.xml and footnotes.xml).
 * It also collects what those parts need: relationships, media, footnotes and numbering.
 */
export const TEXT_WIDTH_TWIPS = 9026; // A4 with 1" margins
const TWIP_TO_EMU = 635;
const PX_TO_EMU = 9525;
const QUOTE_INDENT = 720;
const CELL_MARGINS_TWIPS = 216;
const HYPERLINK_COLOR = '0563C1'; // the Hyperlink style's colour (styles.ts)

export type PartName = 'document' | 'footnotes';

export interface Relationship {
  id: string;
  type: 'hyperlink' | 'image';
  target: string;
}

export interface MediaFile {
  path: string;
  data: Uint8Array;
  format: ImageInline['format'];
}

interface BlockContext {
  part: PartName;
  /** Left indent (twips) of ordinary paragraphs here, from enclosing lists and quotes. */
  indent: number;
  quoteDepth: number;
  listLevel: number;
  /** Width from `indent` to the right margin, in twips. */
  width: number;
  inFootnote: boolean;
  /** Paragraph style for plain paragraphs (Compact in tight lists, FootnoteText in notes). */
  plainStyle?: string;
  align?: Alignment;
  /** Inside a list item after its first paragraph: the numbering that continues the item. */
  continuation?: { ilvl: number };
}

interface RunContext {
  part: PartName;
  marks: RunMarks;
  rStyle?: string;
  revision?: { kind: 'insert' | 'delete'; author: string; date?: string };
  inFootnote: boolean;
  width: number;
}

interface ParagraphProps {
  style?: string;
  numbering?: { numId: number; ilvl: number };
  indent?: { left: number; hanging?: number; firstLine?: number };
  align?: Alignment;
  pageBreakBefore?: boolean;
  bottomBorder?: boolean;
  /** Hides the paragraph mark too, so a paragraph of hidden text leaves no empty line. */
  hidden?: boolean;
}

/** Word's limit on the columns of one table. */
const MAX_WORD_COLUMNS = 63;

interface GridSlot {
  cell?: TableCell;
  span: number;
  vMerge?: 'restart' | 'continue';
}

/**
 * The columns [from, to) of a laid-out table. A cell that starts left of `from` and spans into
 * the slice leaves an empty cell there (with its vertical merge), so every row stays full width.
 */
function sliceColumns(rows: GridSlot[][], from: number, to: number): GridSlot[][] {
  return rows.map((slots) => {
    const out: GridSlot[] = [];
    let col = 0;
    for (const slot of slots) {
      const start = col;
      col += slot.span;
      const span = Math.min(col, to) - Math.max(start, from);
      if (span <= 0) continue;
      out.push(start >= from ? { ...slot, span } : { span, vMerge: slot.vMerge });
    }
    return out;
  });
}

/** w:date must be an xsd:dateTime; anything unparseable is left out rather than written. */
function revisionDate(date: string | undefined): string {
  if (!date) return '';
  const time = Date.parse(date);
  if (Number.isNaN(time)) return '';
  return ` w:date="${new Date(time).toISOString().replace(/\.\d{3}Z$/, 'Z')}"`;
}

/**
 * A relationship target must be a URI reference: characters URIs do not allow (spaces,
 * non-ASCII, stray `%`) are percent-encoded, as browsers do with such an href; valid escapes stay.
 */
const NOT_URI_CHAR = /%(?![0-9A-Fa-f]{2})|[^A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]/gu;
function uriReference(url: string): string {
  return url.trim().replace(NOT_URI_CHAR, (c) => {
    try {
      return encodeURIComponent(c);
    } catch {
      return ''; // a lone surrogate cannot be encoded
    }
  });
}

/** True when every inline is hidden text (and there is at least one). */
function allHidden(inlines: Inline[]): boolean {
  let any = false;
  for (const inline of inlines) {
    if (inline.type === 'bookmark') continue;
    if (inline.type === 'text' || inline.type === 'break') {
      if (!inline.marks?.hidden) return false;
    } else if (inline.type === 'link' || inline.type === 'revision') {
      if (!allHidden(inline.children)) return false;
    } else return false;
    any = true;
  }
  return any;
}

const JC: Record<Alignment, string> = { left: 'left', center: 'center', right: 'right', justify: 'both' };
const isPlainStyle = (style?: string) => style === undefined || style === 'Normal';

export class BodyWriter {
  readonly numbering = new NumberingRegistry();
  readonly rels: Record<PartName, Relationship[]> = { document: [], footnotes: [] };
  readonly media: MediaFile[] = [];
  readonly footnotes: string[] = [];
  private readonly usedBookmarks = new Set<string>();
  /** Bookmarks and revisions share Word's annotation id space. */
  private nextAnnotationId = 0;
  private nextDrawingId = 1;
  private nextRelId: number;
  /** Runs to put at the start of the next paragraph written (a footnote's reference mark). */
  private pendingPrefix = '';

  constructor(firstFreeRelId: number) {
    this.nextRelId = firstFreeRelId;
  }

  body(blocks: Block[]): string {
    return this.blocks(blocks, {
      part: 'document', indent: 0, quoteDepth: 0, listLevel: -1, width: TEXT_WIDTH_TWIPS, inFootnote: false,
    });
  }

  private blocks(blocks: Block[], ctx: BlockContext): string {
    let xml = '';
    for (const block of blocks) xml += this.block(block, ctx);
    return xml;
  }

  private block(block: Block, ctx: BlockContext): string {
    switch (block.type) {
      case 'paragraph': return this.paragraphBlock(block, ctx);
      case 'heading': return this.heading(block, ctx);
      case 'list': return this.list(block, ctx);
      case 'table': return this.table(block, ctx);
      case 'quote':
        return this.blocks(block.blocks, {
          ...ctx, indent: ctx.indent + QUOTE_INDENT, width: ctx.width - QUOTE_INDENT, quoteDepth: ctx.quoteDepth + 1,
        });
      case 'code': return this.code(block, ctx);
      case 'rule': return this.paragraph('', { bottomBorder: true, indent: this.plainIndent(ctx) });
      case 'pageBreak': return this.paragraph('<w:r><w:br w:type="page"/></w:r>', {});
    }
  }

  private plainIndent(ctx: BlockContext): ParagraphProps['indent'] {
    return ctx.indent > 0 ? { left: ctx.indent } : undefined;
  }

  /** A later block of a list item keeps the item's level (and its own indent). */
  private itemProps(ctx: BlockContext, props: ParagraphProps): ParagraphProps {
    if (!ctx.continuation || props.numbering) return props;
    const { ilvl } = ctx.continuation;
    // The continuation numbering indents to the item's text at each level; only a deeper
    // indent (a quote in the item) is written out.
    const indent = ctx.indent !== listIndent(ilvl).left ? { left: ctx.indent, firstLine: 0 } : undefined;
    return { ...props, numbering: { numId: this.numbering.continuation(), ilvl }, indent };
  }

  private paragraphBlock(block: ParagraphBlock, ctx: BlockContext): string {
    let style = block.style;
    let indent = this.plainIndent(ctx);
    if (isPlainStyle(style) && ctx.quoteDepth > 0) {
      style = 'Quote';
      // The Quote style already indents one step; explicit indent only when nested deeper.
      indent = ctx.indent !== QUOTE_INDENT ? { left: ctx.indent } : undefined;
    } else if (isPlainStyle(style)) {
      style = ctx.plainStyle;
    }
    const runs = this.inlines(block.inlines, this.runContext(ctx));
    return this.paragraph(runs, this.itemProps(ctx, { style, indent, align: block.align ?? ctx.align, pageBreakBefore: block.pageBreakBefore, hidden: allHidden(block.inlines) }));
  }

  private runContext(ctx: BlockContext): RunContext {
    return { part: ctx.part, marks: {}, inFootnote: ctx.inFootnote, width: ctx.width };
  }

  /** `item`: the heading starts a list item, with the item's numbering (and task checkbox). */
  private heading(block: HeadingBlock, ctx: BlockContext, item?: { numbering: ParagraphProps['numbering']; indent: ParagraphProps['indent']; prefix: string }): string {
    let starts = '';
    let ends = '';
    for (const name of block.ids) {
      const bookmark = this.bookmark(name);
      if (!bookmark) continue;
      starts += bookmark.start;
      ends = bookmark.end + ends;
    }
    const runs = this.inlines(block.inlines, this.runContext(ctx));
    const props: ParagraphProps = {
      style: `Heading${block.level}`, align: block.align, pageBreakBefore: block.pageBreakBefore, indent: this.plainIndent(ctx), hidden: allHidden(block.inlines),
    };
    if (item) return this.paragraph(`${item.prefix}${starts}${runs}${ends}`, { ...props, numbering: item.numbering, indent: item.indent });
    return this.paragraph(`${starts}${runs}${ends}`, this.itemProps(ctx, props));
  }

  private bookmark(name: string): { start: string; end: string } | undefined {
    if (!name || this.usedBookmarks.has(name)) return undefined;
    this.usedBookmarks.add(name);
    const id = this.nextAnnotationId++;
    return { start: `<w:bookmarkStart w:id="${id}" w:name="${esc(name)}"/>`, end: `<w:bookmarkEnd w:id="${id}"/>` };
  }

  private code(block: CodeBlock, ctx: BlockContext): string {
    const lines = block.text.split('\n');
    const runs = lines.map((line) => (line ? this.textRun(line, {}, undefined) : '')).join('<w:r><w:br/></w:r>');
    return this.paragraph(runs, this.itemProps(ctx, { style: 'SourceCode', indent: this.plainIndent(ctx) }));
  }

  private list(block: ListBlock, ctx: BlockContext): string {
    const level = Math.min(ctx.listLevel + 1, MAX_LIST_LEVELS - 1);
    const numId = this.numbering.add(block.ordered, level, block.start, block.format);
    const itemIndent = ctx.indent + listIndent(0).left;
    const defaultLeft = listIndent(level).left;
    let xml = '';
    for (const item of block.items) {
      const itemCtx: BlockContext = {
        ...ctx, listLevel: level, indent: itemIndent, width: ctx.width - listIndent(0).left,
        quoteDepth: 0, plainStyle: block.tight ? 'Compact' : ctx.plainStyle,
        continuation: { ilvl: level },
      };
      const [first, ...rest] = item.blocks;
      const checkbox = item.checked === undefined ? '' : this.checkbox(item.checked);
      const numbering = { numId, ilvl: level };
      const indent = itemIndent !== defaultLeft ? { left: itemIndent, hanging: listIndent(0).hanging } : undefined;
      if (first?.type === 'heading') {
        xml += this.heading(first, itemCtx, { numbering, indent, prefix: checkbox });
        xml += this.blocks(rest, itemCtx);
      } else if (first?.type === 'paragraph') {
        const runs = this.inlines(first.inlines, this.runContext(itemCtx));
        const style = !isPlainStyle(first.style) ? first.style : itemCtx.plainStyle ?? 'ListParagraph';
        const hidden = item.checked === undefined && item.blocks.every((b) => (b.type === 'paragraph' || b.type === 'heading') && allHidden(b.inlines));
        xml += this.paragraph(checkbox + runs, { style, numbering, indent, align: first.align, hidden });
        xml += this.blocks(rest, itemCtx);
      } else {
        xml += this.paragraph(checkbox, { style: itemCtx.plainStyle ?? 'ListParagraph', numbering, indent });
        xml += this.blocks(item.blocks, itemCtx);
      }
    }
    return xml;
  }

  /** A Word checkbox content control, showing ☒/☐ like Word's own. */
  private checkbox(checked: boolean): string {
    const glyph = checked ? '\u2612' : '\u2610';
    return (
      `<w:sdt><w:sdtPr><w14:checkbox><w14:checked w14:val="${checked ? 1 : 0}"/>` +
      `<w14:checkedState w14:val="2612" w14:font="MS Gothic"/><w14:uncheckedState w14:val="2610" w14:font="MS Gothic"/>` +
      `</w14:checkbox></w:sdtPr><w:sdtContent><w:r><w:rPr><w:rFonts w:ascii="MS Gothic" w:eastAsia="MS Gothic" w:hAnsi="MS Gothic" w:hint="eastAsia"/></w:rPr>` +
      `<w:t>${glyph}</w:t></w:r></w:sdtContent></w:sdt><w:r><w:t xml:space="preserve"> </w:t></w:r>`
    );
  }

  private paragraph(content: string, props: ParagraphProps): string {
    let pPr = '';
    if (props.style) pPr += `<w:pStyle w:val="${esc(props.style)}"/>`;
    if (props.pageBreakBefore) pPr += '<w:pageBreakBefore/>';
    if (props.numbering) pPr += `<w:numPr><w:ilvl w:val="${props.numbering.ilvl}"/><w:numId w:val="${props.numbering.numId}"/></w:numPr>`;
    if (props.bottomBorder) pPr += '<w:pBdr><w:bottom w:val="single" w:sz="6" w:space="1" w:color="auto"/></w:pBdr>';
    if (props.indent) {
      const hanging = props.indent.hanging ? ` w:hanging="${props.indent.hanging}"` : props.indent.firstLine !== undefined ? ` w:firstLine="${props.indent.firstLine}"` : '';
      pPr += `<w:ind w:left="${props.indent.left}"${hanging}/>`;
    }
    if (props.align) pPr += `<w:jc w:val="${JC[props.align]}"/>`;
    if (props.hidden) pPr += '<w:rPr><w:vanish/></w:rPr>';
    const prefix = this.pendingPrefix;
    this.pendingPrefix = '';
    return `<w:p>${pPr ? `<w:pPr>${pPr}</w:pPr>` : ''}${prefix}${content}</w:p>`;
  }

  // ---- tables ----

  private layoutGrid(table: TableBlock): { rows: GridSlot[][]; columns: number } {
    const merges: ({ remaining: number; span: number } | undefined)[] = [];
    const rows: GridSlot[][] = [];
    let columns = 0;
    const flushMerges = (slots: GridSlot[], col: number, until: number): number => {
      while (col < until && merges[col] && merges[col]!.remaining > 0) {
        const merge = merges[col]!;
        merge.remaining--;
        slots.push({ span: merge.span, vMerge: 'continue' });
        col += merge.span;
      }
      return col;
    };
    for (const row of table.rows) {
      const slots: GridSlot[] = [];
      let col = 0;
      for (const cell of row.cells) {
        col = flushMerges(slots, col, Number.MAX_SAFE_INTEGER);
        const span = Math.max(1, Math.min(cell.colSpan, MAX_WORD_COLUMNS));
        const rowSpan = Math.max(1, cell.rowSpan);
        slots.push({ cell, span, vMerge: rowSpan > 1 ? 'restart' : undefined });
        merges[col] = rowSpan > 1 ? { remaining: rowSpan - 1, span } : undefined;
        for (let c = col + 1; c < col + span; c++) merges[c] = undefined;
        col += span;
      }
      // Columns still covered by row spans to the right of the last cell.
      for (let c = col; c < merges.length; c++) {
        if (merges[c] && merges[c]!.remaining > 0) {
          for (let gap = col; gap < c; gap++) slots.push({ span: 1 });
          col = flushMerges(slots, c, c + 1);
          c = col - 1;
        }
      }
      columns = Math.max(columns, col);
      rows.push(slots);
    }
    for (const slots of rows) {
      const used = slots.reduce((n, s) => n + s.span, 0);
      for (let c = used; c < columns; c++) slots.push({ span: 1 });
    }
    return { rows, columns };
  }

  private table(table: TableBlock, ctx: BlockContext): string {
    if (table.rows.length === 0) return '';
    const { rows, columns } = this.layoutGrid(table);
    if (columns === 0) return '';
    let xml = '';
    if (table.caption && table.caption.length > 0) {
      xml += this.paragraph(this.inlines(table.caption, this.runContext(ctx)), { style: 'Caption', indent: this.plainIndent(ctx) });
    }
    // Word refuses tables wider than 63 columns: wider ones become side-by-side slices of at
    // most 63 columns, one after the other, each keeping the header rows.
    const slices: string[] = [];
    for (let from = 0; from < columns; from += MAX_WORD_COLUMNS) {
      const to = Math.min(columns, from + MAX_WORD_COLUMNS);
      slices.push(this.tableXml(table, sliceColumns(rows, from, to), to - from, from, ctx));
    }
    return xml + slices.join('<w:p/>');
  }

  private tableXml(table: TableBlock, rows: GridSlot[][], columns: number, firstColumn: number, ctx: BlockContext): string {
    const width = Math.max(columns * 200, ctx.width);
    const colWidth = Math.floor(width / columns);
    const headerRows = table.rows.findIndex((r) => !r.header);
    const headerCount = headerRows < 0 ? table.rows.length : headerRows;
    const style = table.layout ? 'LayoutTable' : 'TableGrid';
    const look = `<w:tblLook w:val="${headerCount > 0 ? '04A0' : '0480'}" w:firstRow="${headerCount > 0 ? 1 : 0}" w:lastRow="0" w:firstColumn="0" w:lastColumn="0" w:noHBand="1" w:noVBand="1"/>`;
    const tblInd = ctx.indent > 0 ? `<w:tblInd w:w="${ctx.indent}" w:type="dxa"/>` : '';
    let xml = `<w:tbl><w:tblPr><w:tblStyle w:val="${style}"/><w:tblW w:w="${colWidth * columns}" w:type="dxa"/>${tblInd}<w:tblLayout w:type="fixed"/>${look}</w:tblPr>`;
    xml += `<w:tblGrid>${`<w:gridCol w:w="${colWidth}"/>`.repeat(columns)}</w:tblGrid>`;
    rows.forEach((slots, r) => {
      const trPr = r < headerCount ? '<w:trPr><w:tblHeader/></w:trPr>' : '';
      xml += `<w:tr>${trPr}`;
      let col = firstColumn;
      for (const slot of slots) {
        xml += this.tableCell(slot, colWidth, table.columnAlign?.[col], ctx);
        col += slot.span;
      }
      xml += '</w:tr>';
    });
    return `${xml}</w:tbl>`;
  }

  private tableCell(slot: GridSlot, colWidth: number, columnAlign: Alignment | undefined, ctx: BlockContext): string {
    const width = colWidth * slot.span;
    let tcPr = `<w:tcW w:w="${width}" w:type="dxa"/>`;
    if (slot.span > 1) tcPr += `<w:gridSpan w:val="${slot.span}"/>`;
    if (slot.vMerge === 'restart') tcPr += '<w:vMerge w:val="restart"/>';
    if (slot.vMerge === 'continue') tcPr += '<w:vMerge/>';
    if (slot.cell?.background) tcPr += `<w:shd w:val="clear" w:color="auto" w:fill="${slot.cell.background}"/>`;
    let content = '';
    if (slot.cell) {
      content = this.blocks(slot.cell.blocks, {
        part: ctx.part, indent: 0, quoteDepth: 0, listLevel: -1, inFootnote: ctx.inFootnote,
        width: Math.max(400, width - CELL_MARGINS_TWIPS), align: slot.cell.align ?? columnAlign,
        plainStyle: ctx.inFootnote ? 'FootnoteText' : 'Compact',
      });
    }
    if (!content.endsWith('</w:p>')) content += '<w:p/>';
    return `<w:tc><w:tcPr>${tcPr}</w:tcPr>${content}</w:tc>`;
  }

  // ---- inlines ----

  private inlines(inlines: Inline[], rc: RunContext): string {
    let xml = '';
    for (const inline of inlines) xml += this.inline(inline, rc);
    return xml;
  }

  private inline(inline: Inline, rc: RunContext): string {
    switch (inline.type) {
      case 'text': return this.textRun(inline.text, { ...rc.marks, ...inline.marks }, rc.rStyle, rc);
      case 'break': return this.wrapRevision(`<w:r>${this.runProps({ ...rc.marks, ...inline.marks }, rc.rStyle)}<w:br/></w:r>`, rc);
      case 'link': return this.link(inline, rc);
      case 'image': return this.wrapRevision(`<w:r>${this.runProps(rc.marks, rc.rStyle)}${this.drawing(inline, rc)}</w:r>`, rc);
      case 'footnote': return this.footnote(inline.blocks, rc);
      case 'bookmark': {
        const bookmark = this.bookmark(inline.name);
        return bookmark ? bookmark.start + bookmark.end : '';
      }
      case 'revision':
        return this.inlines(inline.children, { ...rc, revision: { kind: inline.kind, author: inline.author, date: inline.date } });
    }
  }

  private link(inline: Extract<Inline, { type: 'link' }>, rc: RunContext): string {
    const runs = this.inlines(inline.children, { ...rc, rStyle: 'Hyperlink' });
    const tooltip = inline.title ? ` w:tooltip="${esc(inline.title)}"` : '';
    if (inline.anchor !== undefined) return `<w:hyperlink w:anchor="${esc(inline.anchor)}"${tooltip} w:history="1">${runs}</w:hyperlink>`;
    if (!inline.url) return runs;
    const id = this.addRel(rc.part, 'hyperlink', inline.url);
    return `<w:hyperlink r:id="${id}"${tooltip} w:history="1">${runs}</w:hyperlink>`;
  }

  private addRel(part: PartName, type: Relationship['type'], target: string): string {
    const id = `rId${this.nextRelId++}`;
    this.rels[part].push({ id, type, target: type === 'hyperlink' ? uriReference(target) : target });
    return id;
  }

  private footnote(blocks: Block[], rc: RunContext): string {
    if (rc.inFootnote) {
      // Word has no notes inside notes: keep the text inline, in parentheses.
      const inner = blocks.flatMap((b) => (b.type === 'paragraph' ? b.inlines : []));
      return this.textRun(' (', rc.marks, rc.rStyle, rc) + this.inlines(inner, rc) + this.textRun(')', rc.marks, rc.rStyle, rc);
    }
    const id = this.footnotes.length + 1;
    this.footnotes.push(''); // reserve the id before rendering (notes may contain links/images)
    const ref = '<w:r><w:rPr><w:rStyle w:val="FootnoteReference"/></w:rPr><w:footnoteRef/></w:r><w:r><w:t xml:space="preserve"> </w:t></w:r>';
    const ctx: BlockContext = {
      part: 'footnotes', indent: 0, quoteDepth: 0, listLevel: -1, width: TEXT_WIDTH_TWIPS, inFootnote: true, plainStyle: 'FootnoteText',
    };
    const saved = this.pendingPrefix;
    let content: string;
    if (blocks[0]?.type === 'paragraph') {
      this.pendingPrefix = ref;
      content = this.blocks(blocks, ctx);
    } else {
      this.pendingPrefix = '';
      content = this.paragraph(ref, { style: 'FootnoteText' }) + this.blocks(blocks, ctx);
    }
    this.pendingPrefix = saved;
    this.footnotes[id - 1] = `<w:footnote w:id="${id}">${content}</w:footnote>`;
    return this.wrapRevision(`<w:r><w:rPr><w:rStyle w:val="FootnoteReference"/></w:rPr><w:footnoteReference w:id="${id}"/></w:r>`, rc);
  }

  private drawing(image: ImageInline, rc: RunContext): string {
    const index = this.media.length + 1;
    const ext = image.format === 'jpeg' ? 'jpeg' : image.format;
    const path = `media/image${index}.${ext}`;
    this.media.push({ path, data: image.data, format: image.format });
    const relId = this.addRel(rc.part, 'image', path);
    const maxEmu = Math.max(1, rc.width) * TWIP_TO_EMU;
    let cx = image.widthPx * PX_TO_EMU;
    let cy = image.heightPx * PX_TO_EMU;
    if (cx > maxEmu) {
      cy = Math.round((cy * maxEmu) / cx);
      cx = maxEmu;
    }
    const id = this.nextDrawingId++;
    const descr = esc(image.alt);
    const title = image.title ? ` title="${esc(image.title)}"` : '';
    return (
      `<w:drawing><wp:inline distT="0" distB="0" distL="0" distR="0"><wp:extent cx="${cx}" cy="${cy}"/>` +
      `<wp:effectExtent l="0" t="0" r="0" b="0"/><wp:docPr id="${id}" name="Picture ${id}" descr="${descr}"${title}/>` +
      `<wp:cNvGraphicFramePr><a:graphicFrameLocks noChangeAspect="1"/></wp:cNvGraphicFramePr>` +
      `<a:graphic><a:graphicData uri="${NS.picture}"><pic:pic>` +
      `<pic:nvPicPr><pic:cNvPr id="${id}" name="image${index}.${ext}" descr="${descr}"/><pic:cNvPicPr><a:picLocks noChangeAspect="1" noChangeArrowheads="1"/></pic:cNvPicPr></pic:nvPicPr>` +
      `<pic:blipFill><a:blip r:embed="${relId}"/><a:stretch><a:fillRect/></a:stretch></pic:blipFill>` +
      `<pic:spPr bwMode="auto"><a:xfrm><a:off x="0" y="0"/><a:ext cx="${cx}" cy="${cy}"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr>` +
      `</pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing>`
    );
  }

  private runProps(marks: RunMarks, rStyle?: string): string {
    let rPr = '';
    // Code inside a link keeps the code character style (readers such as pandoc take code
    // from it) and gets the hyperlink look as direct formatting.
    const codeLink = marks.code && rStyle === 'Hyperlink';
    const style = codeLink ? 'VerbatimChar' : rStyle ?? (marks.code ? 'VerbatimChar' : undefined);
    if (style) rPr += `<w:rStyle w:val="${style}"/>`;
    if (marks.code && rStyle && !codeLink) rPr += `<w:rFonts w:ascii="${MONO_FONT}" w:hAnsi="${MONO_FONT}" w:cs="${MONO_FONT}"/>`;
    else if (marks.font && !marks.code) rPr += `<w:rFonts w:ascii="${esc(marks.font)}" w:hAnsi="${esc(marks.font)}" w:cs="${esc(marks.font)}"/>`;
    if (marks.bold) rPr += '<w:b/><w:bCs/>';
    if (marks.italic) rPr += '<w:i/><w:iCs/>';
    if (marks.strike) rPr += '<w:strike/>';
    if (marks.color) rPr += `<w:color w:val="${marks.color}"/>`;
    else if (codeLink) rPr += `<w:color w:val="${HYPERLINK_COLOR}"/>`;
    if (marks.halfPoints) rPr += `<w:sz w:val="${marks.halfPoints}"/><w:szCs w:val="${marks.halfPoints}"/>`;
    if (marks.underline || codeLink) rPr += '<w:u w:val="single"/>';
    if (marks.background) rPr += `<w:shd w:val="clear" w:color="auto" w:fill="${marks.background}"/>`;
    if (marks.hidden) rPr += '<w:vanish/>';
    if (marks.superscript) rPr += '<w:vertAlign w:val="superscript"/>';
    else if (marks.subscript) rPr += '<w:vertAlign w:val="subscript"/>';
    return rPr ? `<w:rPr>${rPr}</w:rPr>` : '';
  }

  private textRun(text: string, marks: RunMarks, rStyle: string | undefined, rc?: RunContext): string {
    if (!text) return '';
    const deleted = rc?.revision?.kind === 'delete';
    const textTag = deleted ? 'w:delText' : 'w:t';
    let content = '';
    const pieces = text.split(/(\t|\n)/);
    for (const piece of pieces) {
      if (piece === '\t') content += '<w:tab/>';
      else if (piece === '\n') content += '<w:br/>';
      else if (piece) content += `<${textTag} xml:space="preserve">${esc(piece)}</${textTag}>`;
    }
    const run = `<w:r>${this.runProps(marks, rStyle)}${content}</w:r>`;
    return rc ? this.wrapRevision(run, rc) : run;
  }

  private wrapRevision(run: string, rc: RunContext): string {
    if (!rc.revision) return run;
    const tag = rc.revision.kind === 'insert' ? 'w:ins' : 'w:del';
    const date = revisionDate(rc.revision.date);
    return `<${tag} w:id="${this.nextAnnotationId++}" w:author="${esc(rc.revision.author)}"${date}>${run}</${tag}>`;
  }
}
