import type { Warning } from '../warnings.js';
import type { StageTimes } from './stages.js';

/**
 * The one document model both front ends (Markdown, HTML) lower onto and the DOCX writer
 * reads. It only holds what a Word document can express; layout is the writer's business.
 */
export type Alignment = 'left' | 'center' | 'right' | 'justify';

export interface RunMarks {
  bold?: boolean;
  italic?: boolean;
  strike?: boolean;
  underline?: boolean;
  code?: boolean;
  superscript?: boolean;
  subscript?: boolean;
  /** RRGGBB, no '#'. */
  color?: string;
  /** RRGGBB background shading of the run. */
  background?: string;
  /** Font size in half-points (Word's unit). */
  halfPoints?: number;
  font?: string;
  /** Hidden text (w:vanish), for content the source hides (CSS display:none). */
  hidden?: boolean;
}

export interface TextInline {
  type: 'text';
  text: string;
  marks?: RunMarks;
}

export interface BreakInline {
  type: 'break';
  /** Formatting of the break's run, so formatting spanning a line break stays one span. */
  marks?: RunMarks;
}

export interface LinkInline {
  type: 'link';
  /** External URL, or undefined when the link points inside the document. */
  url?: string;
  /** Bookmark name for internal links (`#anchor`). */
  anchor?: string;
  title?: string;
  children: Inline[];
}

export interface ImageInline {
  type: 'image';
  data: Uint8Array;
  format: 'png' | 'jpeg' | 'gif';
  widthPx: number;
  heightPx: number;
  alt: string;
  title?: string;
}

export interface FootnoteInline {
  type: 'footnote';
  blocks: Block[];
}

export interface BookmarkInline {
  type: 'bookmark';
  name: string;
}

export interface RevisionInline {
  type: 'revision';
  kind: 'insert' | 'delete';
  author: string;
  /** ISO 8601 date-time, when known. */
  date?: string;
  children: Inline[];
}

export type Inline = TextInline | BreakInline | LinkInline | ImageInline | FootnoteInline | BookmarkInline | RevisionInline;

export interface ParagraphBlock {
  type: 'paragraph';
  inlines: Inline[];
  /** Paragraph style id; Normal when absent. */
  style?: string;
  align?: Alignment;
  pageBreakBefore?: boolean;
}

export interface HeadingBlock {
  type: 'heading';
  level: 1 | 2 | 3 | 4 | 5 | 6;
  inlines: Inline[];
  /** Bookmark names placed on the heading (slug first, then explicit ids). */
  ids: string[];
  align?: Alignment;
  pageBreakBefore?: boolean;
}

export interface ListItem {
  blocks: Block[];
  /** GFM task state; undefined for ordinary items. */
  checked?: boolean;
}

/** How an ordered list numbers its items (Word's w:numFmt values). */
export type NumberFormat = 'decimal' | 'lowerLetter' | 'upperLetter' | 'lowerRoman' | 'upperRoman';

export interface ListBlock {
  type: 'list';
  ordered: boolean;
  start: number;
  /** Ordered lists: the numbering the source asks for (decimal when it names none, as browsers do). */
  format?: NumberFormat;
  /** Tight lists use the Compact paragraph style. */
  tight: boolean;
  items: ListItem[];
}

export interface TableCell {
  blocks: Block[];
  colSpan: number;
  rowSpan: number;
  align?: Alignment;
  /** RRGGBB shading. */
  background?: string;
  header?: boolean;
}

export interface TableRow {
  cells: TableCell[];
  header: boolean;
}

export interface TableBlock {
  type: 'table';
  rows: TableRow[];
  /** Per-column default alignment (GFM). */
  columnAlign?: (Alignment | undefined)[];
  caption?: Inline[];
  /** Layout tables (HTML e-mail, presentation tables) are drawn without borders. */
  layout?: boolean;
}

export interface QuoteBlock {
  type: 'quote';
  blocks: Block[];
}

export interface CodeBlock {
  type: 'code';
  text: string;
  language?: string;
}

export interface RuleBlock {
  type: 'rule';
}

export interface PageBreakBlock {
  type: 'pageBreak';
}

export type Block =
  | ParagraphBlock
  | HeadingBlock
  | ListBlock
  | TableBlock
  | QuoteBlock
  | CodeBlock
  | RuleBlock
  | PageBreakBlock;

export interface DocumentMetadata {
  title?: string;
  author?: string;
  subject?: string;
  keywords?: string[];
  description?: string;
  /** ISO 8601 or free text as given; the writer only keeps parseable dates. */
  date?: string;
}

export interface DocumentModel {
  metadata: DocumentMetadata;
  blocks: Block[];
}

export interface ConversionLimits {
  maxBytes: number;
  maxNestingDepth: number;
}

export interface MarkupOptions {
  /** A DOCX whose styles replace ours (like pandoc --reference-doc). */
  reference?: Uint8Array;
  limits: ConversionLimits;
  /**
   * The http(s) images, fetched by the operation under the one remote-input policy
   * (src/inputs/remote-inputs.ts); the engine does no network I/O. Absent: none is fetched.
   */
  remoteImages?: RemoteImageSource;
  /** Files sent with the document, by normalised name (model/attached-files.ts). */
  files?: [string, Uint8Array][];
  /** Filled with the time each stage took (the benchmark's profile); the service passes none. */
  stages?: StageTimes;
}

/** A remote image as the engine receives it: its bytes, or why the operation's policy did not fetch it. */
export type RemoteImage = { bytes: Uint8Array } | { refused: string };

/**
 * Remote images for one conversion: `fetch` gets every http(s) image URL of the document at once (in
 * order, without repeats) and answers for each, in the same order.
 */
export interface RemoteImageSource {
  fetch(urls: string[]): Promise<RemoteImage[]>;
  /**
   * Set when the policy refuses every URL for this reason (no image host allowed): `fetch` answers
   * each with it, and a worker can answer without a port back to the operation.
   */
  readonly refusedAll?: string;
}

export interface ConversionResult {
  docx: Buffer;
  warnings: Warning[];
}
