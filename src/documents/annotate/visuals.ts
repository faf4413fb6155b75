import type { ImageAsset } from './images.js';
import type { FieldOptions } from './types.js';
import type { MediaRegistry } from './media.js';
import { imageExtent, inlineCurveXml, inlineDrawingXml, EMU_PER_TWIP, type Extent } from './drawing.js';
import { escapeXml, stripInvalidXmlChars } from '../ooxml/xml-text.js';
import { textRun, toHexColor } from './xml-text.js';

/** An image or signature field, decoded and ready to be placed in any part of the document. */
export class PreparedVisual {
  constructor(
    readonly kind: 'image' | 'signature',
    readonly where: string,
    readonly options: FieldOptions,
    /** The drawn image; null for a typed (text) signature. */
    readonly image: ImageAsset | null,
    /** Typed signature text, when `image` is null. */
    readonly typedName: string,
  ) {}
}

export interface PlacementContext {
  partPath: string;
  media: MediaRegistry;
  /** Width available for the image (cell or page text width), in twips. */
  maxWidthTwips: number;
  /** `<w:rPr>…</w:rPr>` of the run the field sits in, or ''. */
  runProps: string;
}

export function pictureRun(visual: PreparedVisual, context: PlacementContext, extent?: Extent): string {
  const image = visual.image!;
  const size = extent ?? imageExtent(image, visual.options.dimensions, context.maxWidthTwips * EMU_PER_TWIP, visual.where);
  const embedded = context.media.embed(context.partPath, image);
  return `<w:r>${context.runProps}${inlineDrawingXml(embedded, size, context.media.nextDrawingId(), visual.kind === 'signature' ? 'Signature' : 'Picture')}</w:r>`;
}

const SIGNATURE_FONT = 'Brush Script MT';
const LINE_BREAK_RUN = '<w:r><w:br/></w:r>';

function labelRun(text: string, color: string): string {
  return textRun(text, `<w:rPr><w:color w:val="${color}"/><w:sz w:val="16"/><w:szCs w:val="16"/></w:rPr>`);
}

const EMU_PER_POINT = 12_700;
const EMU_PER_INCH = 914_400;
const ARC_HEIGHT_EMU = 114_300; // 1/8 inch
const TYPED_SIGNATURE_POINTS = 20;

/** Width of the arc: the drawn signature's width, or an estimate of the typed name's width. */
function arcWidthEmu(visual: PreparedVisual, imageWidthEmu: number | null, maxWidthEmu: number): number {
  const width = imageWidthEmu ?? Math.max(stripInvalidXmlChars(visual.typedName).length * TYPED_SIGNATURE_POINTS * 0.5 * EMU_PER_POINT, 1.5 * EMU_PER_INCH);
  return Math.round(maxWidthEmu > 0 ? Math.min(width, maxWidthEmu) : width);
}

/**
 * A signature block as a sequence of runs (so it fits inline in a paragraph or a content control):
 * optional top label, the drawn image or the typed name in a script font, a coloured arc (an inline
 * DrawingML curve as wide as the signature), and an optional bottom label, separated by line breaks.
 */
export function signatureRuns(visual: PreparedVisual, context: PlacementContext): string {
  const { topLabel, bottomLabel, arcElement } = visual.options;
  const parts: string[] = [];
  if (topLabel) {
    parts.push(labelRun(topLabel.text ?? 'Signed by:', toHexColor(topLabel.color, '555555')), LINE_BREAK_RUN);
  }
  let widthEmu: number | null = null;
  if (visual.image) {
    const size = imageExtent(visual.image, visual.options.dimensions, context.maxWidthTwips * EMU_PER_TWIP, visual.where);
    widthEmu = size.cx;
    parts.push(pictureRun(visual, { ...context, runProps: '' }, size));
  } else {
    const font = escapeXml(SIGNATURE_FONT);
    parts.push(
      textRun(
        visual.typedName,
        `<w:rPr><w:rFonts w:ascii="${font}" w:hAnsi="${font}" w:cs="${font}"/><w:i/><w:iCs/><w:sz w:val="40"/><w:szCs w:val="40"/></w:rPr>`,
      ),
    );
  }
  const arcColor = toHexColor(arcElement?.color, '1F3A93');
  const arcExtent = { cx: arcWidthEmu(visual, widthEmu, context.maxWidthTwips * EMU_PER_TWIP), cy: ARC_HEIGHT_EMU };
  parts.push(LINE_BREAK_RUN, `<w:r>${inlineCurveXml(arcExtent, context.media.nextDrawingId(), arcColor, 'Signature line')}</w:r>`);
  if (bottomLabel?.text) {
    parts.push(LINE_BREAK_RUN, labelRun(bottomLabel.text, toHexColor(bottomLabel.color, '555555')));
  }
  return parts.join('');
}

/** Runs for an image or signature field. */
export function visualRuns(visual: PreparedVisual, context: PlacementContext): string {
  return visual.kind === 'signature' ? signatureRuns(visual, context) : pictureRun(visual, context);
}
