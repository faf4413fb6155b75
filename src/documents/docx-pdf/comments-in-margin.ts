import { deflateSync } from 'node:zlib';
import { DomainError, ErrorCode } from '../../errors/domain-error.js';
import { PdfView } from '../pdf/document.js';
import { PdfDict, PdfRef, asNumber, asText, isName, pdfDict, pdfName, pdfStream, withEntries, type PdfValue } from '../pdf/objects.js';
import { walkPageTree, type PageNode } from '../pdf/structure.js';
import { IncrementalWriter, PdfWriteError } from '../pdf/writer.js';
import { RevisionFonts, printable, printableWidth, type FontKey } from '../sign/pdf/fonts.js';
import { formatNumber as f, wrapText } from '../sign/pdf/text.js';

/** White space and commas ending a text; the run must start after another character, else `[\s,]+$` rescans it from each of its positions. */
export const TRAILING_SEPARATORS = /(?<![\s,])[\s,]+$/;

/**
 * `commentsInMargin`: comments drawn in a margin beside each page, as Word and LibreOffice 7.5+
 * (ExportNotesInMargin) print them. LibreOffice 7.4 has no such export setting, so the PDF it
 * writes with ExportNotes (each comment a /Text annotation with its anchor as /Rect, its author in
 * /T and its text in /Contents) is read with the one PDF reader (documents/pdf) and extended by one
 * incremental update with the one writer:
 * - every page gets wider by a margin on its right (40 % of the page width, at least 180 pt and at
 *   most 400 pt): the page content is not scaled or moved, so links, form fields, outline
 *   destinations and the annotations keep their coordinates; it is clipped to its old box (a page
 *   with /Rotate, which LibreOffice does not write, gets it on the right of the unrotated page);
 * - each comment is a pale box in the margin with its author (bold) and its text, wrapped to the
 *   box, joined by a dotted line to a mark at its anchor; the drawing is marked as an artifact
 *   (/Artifact BMC) so a tagged PDF's structure is unchanged;
 * - the /Text annotations (and their /Popup) are removed from the pages, as LibreOffice 7.5 does
 *   when only the margin is asked for (viewers draw a note icon over the text at each anchor); with
 *   `keepAnnotations` (the caller also gave exportComments=true) they stay, so viewers list the
 *   comments and screen readers reach them.
 *
 * Layout of a page's comments (ordered by anchor, top to bottom, then left to right): each box
 * starts level with its anchor and is pushed down below the one before (4 pt apart); when the
 * column runs past the bottom margin, boxes move up just enough. When the comments do not fit the
 * page's height at 7 pt, the text is set at 6 pt, then 5 pt; when they do not fit at 5 pt, each
 * comment is cut to the same number of lines, ending with "…" (its whole text stays in its
 * annotation); when not even one line each fits, the last box says how many comments of the page
 * are not shown in the margin.
 *
 * Budget, counted from the page tree and annotations before anything is drawn:
 * MARGIN_LIMITS.pages pages, MARGIN_LIMITS.comments comments and MARGIN_LIMITS.characters
 * characters of comment text (each comment counted up to MARGIN_LIMITS.commentCharacters; longer
 * ones are cut there). Past one: 422 DOCUMENT_TOO_COMPLEX.
 */
export const MARGIN_LIMITS = { pages: 2000, comments: 1000, characters: 200_000, commentCharacters: 2000 } as const;

const FONT_NAMES: Record<FontKey, string> = { regular: 'DocprocMarginR', bold: 'DocprocMarginB' };
const TEXT_SIZES = [7, 6, 5];
const PAD = 3;
const GAP = 4;
const EDGE = 18;
const ELLIPSIS = '…';

export interface Comment {
  /** Anchor: left, bottom and top of the annotation's /Rect. */
  x: number;
  bottom: number;
  top: number;
  author: string;
  text: string;
}

export interface Box {
  comment: Comment;
  author: string;
  lines: string[];
  height: number;
  top: number;
}

/** The margin width for a page `width` points wide. */
export const marginWidth = (width: number): number => Math.min(400, Math.max(180, Math.round(width * 0.4)));

function inherited(view: PdfView, page: PdfDict, key: string): PdfValue | undefined {
  let node: PdfDict | undefined = page;
  for (let depth = 0; node && depth < 64; depth++) {
    const value = node.get(key);
    if (value !== undefined) return value;
    node = view.dict(node.get('Parent'));
  }
  return undefined;
}

function box(view: PdfView, value: PdfValue | undefined): [number, number, number, number] | undefined {
  const numbers = (view.array(value) ?? []).map((v) => asNumber(view.resolve(v)));
  if (numbers.length !== 4 || numbers.some((n) => n === undefined || !Number.isFinite(n))) return undefined;
  const [a, b, c, d] = numbers as number[];
  return [Math.min(a!, c!), Math.min(b!, d!), Math.max(a!, c!), Math.max(b!, d!)];
}

function commentsOf(view: PdfView, page: PdfDict): Comment[] {
  const out: Comment[] = [];
  for (const item of view.array(page.get('Annots')) ?? []) {
    const annot = view.dict(item);
    if (!annot || !isName(annot.get('Subtype'), 'Text')) continue;
    const rect = box(view, annot.get('Rect'));
    if (!rect) continue;
    let text = asText(view.resolve(annot.get('Contents'))) ?? '';
    if (text.length > MARGIN_LIMITS.commentCharacters) text = `${text.slice(0, MARGIN_LIMITS.commentCharacters)}${ELLIPSIS}`;
    // LibreOffice writes "author, date, " as the title.
    const author = (asText(view.resolve(annot.get('T'))) ?? '').replace(TRAILING_SEPARATORS, '').slice(0, 200);
    out.push({ x: rect[0], bottom: rect[1], top: rect[3], author, text });
  }
  return out.sort((a, b) => b.top - a.top || a.x - b.x);
}

const tooMany = (limit: keyof typeof MARGIN_LIMITS) => ({ extensions: { limit: { name: `convert.commentsInMargin.${limit}`, max: MARGIN_LIMITS[limit] } } });

/** The comments a PDF holds per page, counted within the budget; 422 past it. */
function readComments(view: PdfView, pages: PageNode[]): Comment[][] {
  if (pages.length > MARGIN_LIMITS.pages) {
    throw new DomainError(ErrorCode.DOCUMENT_TOO_COMPLEX, `commentsInMargin: the PDF has ${pages.length} pages; comments are drawn in the margin of at most ${MARGIN_LIMITS.pages}. Use exportComments (annotations) or convert fewer pages (pageRanges).`, tooMany('pages'));
  }
  let comments = 0;
  let characters = 0;
  return pages.map((page) => {
    const found = commentsOf(view, page.dict);
    comments += found.length;
    for (const comment of found) characters += comment.text.length + comment.author.length;
    if (comments > MARGIN_LIMITS.comments) {
      throw new DomainError(ErrorCode.DOCUMENT_TOO_COMPLEX, `commentsInMargin: the document has more than ${MARGIN_LIMITS.comments} comments; at most ${MARGIN_LIMITS.comments} are drawn in the margin. Use exportComments (annotations) instead.`, tooMany('comments'));
    }
    if (characters > MARGIN_LIMITS.characters) {
      throw new DomainError(ErrorCode.DOCUMENT_TOO_COMPLEX, `commentsInMargin: the comments hold more than ${MARGIN_LIMITS.characters} characters; at most that much comment text is drawn in the margin. Use exportComments (annotations) instead.`, tooMany('characters'));
    }
    return found;
  });
}

/** One line cut to `width` with an ellipsis. */
function fitLine(text: string, key: FontKey, size: number, width: number): string {
  const line = printable(text, key);
  if (printableWidth(line, key, size) <= width) return line;
  const chars = [...line];
  while (chars.length > 0 && printableWidth(`${chars.join('')}${ELLIPSIS}`, key, size) > width) chars.pop();
  return `${chars.join('')}${ELLIPSIS}`;
}

function wrapComment(text: string, size: number, width: number): string[] {
  return text.split(/\r\n|\r|\n/).flatMap((paragraph) => wrapText(paragraph, 'regular', size, width));
}

const lineHeight = (size: number) => size * 1.25;
const boxHeight = (lines: number, size: number) => 2 * PAD + lineHeight(size) * (1 + lines);

/**
 * The boxes of one page's comments, laid out in a column from `top` down to `bottom` by the rule
 * in the file comment; `hidden` is how many comments did not get a box.
 */
export function layoutMargin(comments: Comment[], width: number, top: number, bottom: number): { size: number; boxes: Box[]; hidden: number } {
  const available = top - bottom;
  const textWidth = width - 2 * PAD;
  const fits = (heights: number[]) => heights.reduce((a, b) => a + b, 0) + GAP * Math.max(0, heights.length - 1) <= available;
  let size = TEXT_SIZES[0]!;
  let wrapped: string[][] = [];
  for (size of TEXT_SIZES) {
    wrapped = comments.map((c) => wrapComment(c.text, size, textWidth));
    if (fits(wrapped.map((lines) => boxHeight(lines.length, size)))) break;
  }
  let shown = comments.length;
  if (!fits(wrapped.map((lines) => boxHeight(lines.length, size)))) {
    // The same number of lines for each: the most that fits; then as many boxes as fit at one line.
    let most = Math.max(...wrapped.map((l) => l.length));
    while (most > 1 && !fits(wrapped.map((l) => boxHeight(Math.min(l.length, most), size)))) most--;
    wrapped = wrapped.map((lines) => {
      if (lines.length <= most) return lines;
      const kept = lines.slice(0, most);
      kept[most - 1] = fitLine(`${kept[most - 1]}${ELLIPSIS}`, 'regular', size, textWidth);
      return kept;
    });
    while (shown > 1 && !fits(wrapped.slice(0, shown).map((l) => boxHeight(l.length, size)))) shown--;
  }
  const hidden = comments.length - shown;
  const boxes: Box[] = comments.slice(0, shown).map((comment, i) => {
    const author = fitLine(comment.author || 'Comment', 'bold', size, textWidth);
    let lines = wrapped[i]!;
    if (hidden > 0 && i === shown - 1) lines = [fitLine(`+ ${hidden} more comment${hidden === 1 ? '' : 's'} on this page (in the PDF annotations)`, 'regular', size, textWidth)];
    return { comment, author, lines, height: boxHeight(lines.length, size), top: 0 };
  });
  // Down from each anchor without overlap, then up from the bottom margin where the column overflows.
  let floor = top;
  for (const b of boxes) {
    b.top = Math.min(Math.min(b.comment.top, top), floor);
    floor = b.top - b.height - GAP;
  }
  let ceiling = bottom;
  for (let i = boxes.length - 1; i >= 0; i--) {
    const b = boxes[i]!;
    b.top = Math.max(b.top, ceiling + b.height);
    ceiling = b.top + GAP;
  }
  return { size, boxes, hidden };
}

/** The content stream that draws the margin of one page. */
function marginContent(comments: Comment[], page: [number, number, number, number], margin: number, fonts: RevisionFonts): string {
  const [, y0, x1, y1] = page;
  const left = x1 + 8;
  const width = margin - 16;
  const { size, boxes } = layoutMargin(comments, width, y1 - EDGE, y0 + EDGE);
  const ops: string[] = ['Q', '/Artifact BMC', 'q'];
  for (const b of boxes) {
    const { comment } = b;
    const anchorY = comment.bottom;
    // Anchor mark, then a dotted line to the box's first line.
    ops.push('0.85 0.55 0.1 RG 0.6 w [] 0 d');
    ops.push(`${f(comment.x)} ${f(comment.bottom)} m ${f(comment.x)} ${f(Math.max(comment.top, comment.bottom + 2))} l S`);
    ops.push(`[1 1.5] 0 d ${f(comment.x)} ${f(anchorY)} m ${f(x1 + 2)} ${f(anchorY)} l ${f(left)} ${f(b.top - PAD - lineHeight(size) / 2)} l S [] 0 d`);
    ops.push(`1 0.97 0.8 rg ${f(left)} ${f(b.top - b.height)} ${f(width)} ${f(b.height)} re B`);
    ops.push('0 0 0 rg BT');
    let y = b.top - PAD - size;
    ops.push(`/${FONT_NAMES.bold} ${f(size)} Tf 1 0 0 1 ${f(left + PAD)} ${f(y)} Tm ${fonts.show(b.author, 'bold')} Tj`);
    ops.push(`/${FONT_NAMES.regular} ${f(size)} Tf`);
    for (const line of b.lines) {
      y -= lineHeight(size);
      ops.push(`1 0 0 1 ${f(left + PAD)} ${f(y)} Tm ${fonts.show(line, 'regular')} Tj`);
    }
    ops.push('ET');
  }
  ops.push('Q', 'EMC');
  return `${ops.join('\n')}\n`;
}

/** The page's /Annots without its comments (/Text annotations and the /Popup of each). */
function withoutComments(view: PdfView, page: PdfDict): { Annots?: PdfValue } {
  const annots = view.array(page.get('Annots'));
  if (!annots) return {};
  const isComment = (item: PdfValue) => {
    const annot = view.dict(item);
    if (isName(annot?.get('Subtype'), 'Text')) return true;
    return isName(annot?.get('Subtype'), 'Popup') && isName(view.dict(annot?.get('Parent'))?.get('Subtype'), 'Text');
  };
  const kept = annots.filter((item) => !isComment(item));
  if (kept.length === annots.length) return {};
  return { Annots: kept.length > 0 ? kept : undefined };
}

/** A content stream, deflated unless it is a few operators. */
const stream = (content: string) => (content.length < 200
  ? pdfStream(pdfDict({}), Buffer.from(content, 'latin1'))
  : pdfStream(pdfDict({ Filter: pdfName('FlateDecode') }), deflateSync(Buffer.from(content, 'latin1'))));

/**
 * The PDF with every page widened by a margin and the comments drawn in it (see the file comment);
 * `pdf` is what LibreOffice wrote with ExportNotes. A PDF without pages or without a sound
 * cross-reference chain comes back as it is.
 */
export async function drawCommentsInMargin(pdf: Uint8Array, { keepAnnotations = false }: { keepAnnotations?: boolean } = {}): Promise<Buffer> {
  const view = new PdfView(pdf, pdf.length);
  const { pages } = walkPageTree(view);
  const comments = readComments(view, pages);
  if (view.reconstructed || view.recovery.length > 0 || view.encryption || pages.length === 0) return Buffer.from(pdf);
  const writer = new IncrementalWriter(view);
  const fonts = new RevisionFonts(writer);
  const resources = new Map<string, PdfRef>();
  // One object per distinct content: pages of one size share their clip, pages without comments their margin.
  const streams = new Map<string, PdfRef>();
  const shared = (content: string): PdfRef => {
    let ref = streams.get(content);
    if (!ref) {
      ref = writer.allocate();
      writer.set(ref, stream(content));
      streams.set(content, ref);
    }
    return ref;
  };
  pages.forEach((page, index) => {
    if (page.num === undefined) return;
    const media = box(view, inherited(view, page.dict, 'MediaBox'));
    if (!media) return;
    const crop = box(view, inherited(view, page.dict, 'CropBox'));
    const shown = crop ?? media;
    const margin = marginWidth(shown[2] - shown[0]);
    const widen = (b: [number, number, number, number]) => [b[0], b[1], Math.max(b[2], shown[2] + margin), b[3]];
    // Resources: the page's own (or inherited) with the margin fonts added, one copy per original.
    const original = inherited(view, page.dict, 'Resources');
    const key = original instanceof PdfRef ? original.key : `page ${page.num}`;
    let resourcesRef = resources.get(key);
    if (!resourcesRef) {
      const dict = view.dict(original) ?? pdfDict({});
      const fontDict = view.dict(dict.get('Font')) ?? pdfDict({});
      resourcesRef = writer.allocate();
      writer.set(resourcesRef, withEntries(dict, {
        Font: withEntries(fontDict, { [FONT_NAMES.regular]: fonts.ref('regular'), [FONT_NAMES.bold]: fonts.ref('bold') }),
      }));
      resources.set(key, resourcesRef);
    }
    const contents = view.resolve(page.dict.get('Contents'));
    const parts: PdfValue[] = Array.isArray(contents) ? contents : page.dict.get('Contents') === undefined ? [] : [page.dict.get('Contents')!];
    const clip = shared(`q ${f(shown[0])} ${f(shown[1])} ${f(shown[2] - shown[0])} ${f(shown[3] - shown[1])} re W n\n`);
    const drawn = shared(marginContent(comments[index]!, shown, margin, fonts));
    writer.set(view.refTo(page.num), withEntries(page.dict, {
      MediaBox: widen(media),
      CropBox: crop ? widen(crop) : undefined,
      TrimBox: undefined,
      BleedBox: undefined,
      ArtBox: undefined,
      Resources: resourcesRef,
      Contents: [clip, ...parts, drawn],
      ...(keepAnnotations ? {} : withoutComments(view, page.dict)),
    }));
  });
  await fonts.write();
  try {
    return writer.write().bytes;
  } catch (err) {
    if (!(err instanceof PdfWriteError)) throw err;
    throw new DomainError(ErrorCode.CONVERSION_FAILED, `commentsInMargin: the PDF LibreOffice wrote could not be extended (${err.message}); convert without commentsInMargin.`);
  }
}
