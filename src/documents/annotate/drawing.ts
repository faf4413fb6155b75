import type { Dimension } from './types.js';
import type { ImageAsset } from './images.js';
import { DomainError, ErrorCode } from '../../errors/domain-error.js';
import { NS } from '../ooxml/constants.js';

export const EMU_PER_PX = 9525; // 96 dpi
export const EMU_PER_TWIP = 635;
/** 6.5 inches: US Letter / A4 text width with 1-inch margins, when the template says nothing. */
export const DEFAULT_TEXT_WIDTH_TWIPS = 9360;

const NS_WP = NS.wordprocessingDrawing;
const NS_A = NS.drawingml;
const NS_PIC = NS.picture;
const NS_R = NS.officeRelationships;

export interface Extent {
  cx: number;
  cy: number;
}

const MAX_DIMENSION_PX = 20_000;

/** "120", "120px", 120 → 120 pixels; also accepts pt, in, cm, mm. */
export function parseDimension(value: Dimension | undefined, where: string): number | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  const match = /^\s*(\d+(?:\.\d+)?)\s*(?:(px|pt|in|cm|mm)\s*)?$/i.exec(String(value));
  const invalid = () =>
    new DomainError(ErrorCode.VALIDATION_ERROR, `${where}: "${value}" is not a size; use a number of pixels like 200 or "200px".`, {
      details: [{ field: where, issue: 'invalid dimension' }],
    });
  if (!match) throw invalid();
  const factor = { px: 1, pt: 96 / 72, in: 96, cm: 96 / 2.54, mm: 96 / 25.4 }[(match[2] ?? 'px').toLowerCase() as 'px'];
  const px = Number(match[1]) * factor;
  if (!(px > 0) || px > MAX_DIMENSION_PX) throw invalid();
  return px;
}

/**
 * Display size: the requested dimensions (one given → the other from the aspect ratio), else the
 * intrinsic size at 96 dpi scaled down to fit `maxWidthEmu` (cell or page text width).
 */
export function imageExtent(
  asset: Pick<ImageAsset, 'widthPx' | 'heightPx'>,
  dimensions: { width?: Dimension; height?: Dimension } | undefined,
  maxWidthEmu: number,
  where: string,
): Extent {
  const ratio = asset.heightPx / asset.widthPx;
  const width = parseDimension(dimensions?.width, `${where}.options.dimensions.width`);
  const height = parseDimension(dimensions?.height, `${where}.options.dimensions.height`);
  if (width !== undefined && height !== undefined) return { cx: Math.round(width * EMU_PER_PX), cy: Math.round(height * EMU_PER_PX) };
  if (width !== undefined) return { cx: Math.round(width * EMU_PER_PX), cy: Math.round(width * ratio * EMU_PER_PX) };
  if (height !== undefined) return { cx: Math.round((height / ratio) * EMU_PER_PX), cy: Math.round(height * EMU_PER_PX) };
  let cx = asset.widthPx * EMU_PER_PX;
  if (maxWidthEmu > 0 && cx > maxWidthEmu) cx = maxWidthEmu;
  return { cx: Math.round(cx), cy: Math.round(cx * ratio) };
}

/** Scales the image to fit inside an existing box (a picture content control), keeping its ratio. */
export function fitInside(asset: Pick<ImageAsset, 'widthPx' | 'heightPx'>, box: Extent): Extent {
  const scale = Math.min(box.cx / asset.widthPx, box.cy / asset.heightPx);
  return { cx: Math.round(asset.widthPx * scale), cy: Math.round(asset.heightPx * scale) };
}

const SVG_BLIP_EXTENSION_URI = '{96DAC541-7B7A-43D3-8B79-37D633B846F1}';
const NS_ASVG = NS.svgBlip;

/** The a:extLst that points Word 2016+ at the SVG original of a picture whose blip is its PNG fallback. */
export function svgBlipExtension(svgRId: string): string {
  return `<a:extLst xmlns:a="${NS_A}"><a:ext uri="${SVG_BLIP_EXTENSION_URI}"><asvg:svgBlip xmlns:asvg="${NS_ASVG}" xmlns:r="${NS_R}" r:embed="${svgRId}"/></a:ext></a:extLst>`;
}

export const isSvgBlipExtension = (uri: string | null) => uri === SVG_BLIP_EXTENSION_URI;

/** An inline picture (`<w:drawing>`) that goes inside a `<w:r>`. Namespaces are declared locally. */
export function inlineDrawingXml(embedded: { rId: string; svgRId?: string }, extent: Extent, drawingId: number, name: string): string {
  const { rId, svgRId } = embedded;
  const { cx, cy } = extent;
  return (
    `<w:drawing><wp:inline xmlns:wp="${NS_WP}" distT="0" distB="0" distL="0" distR="0">` +
    `<wp:extent cx="${cx}" cy="${cy}"/><wp:effectExtent l="0" t="0" r="0" b="0"/>` +
    `<wp:docPr id="${drawingId}" name="${name} ${drawingId}"/>` +
    `<wp:cNvGraphicFramePr><a:graphicFrameLocks xmlns:a="${NS_A}" noChangeAspect="1"/></wp:cNvGraphicFramePr>` +
    `<a:graphic xmlns:a="${NS_A}"><a:graphicData uri="${NS_PIC}"><pic:pic xmlns:pic="${NS_PIC}">` +
    `<pic:nvPicPr><pic:cNvPr id="${drawingId}" name="${name} ${drawingId}"/><pic:cNvPicPr/></pic:nvPicPr>` +
    `<pic:blipFill><a:blip xmlns:r="${NS_R}" r:embed="${rId}">${svgRId ? svgBlipExtension(svgRId) : ''}</a:blip><a:stretch><a:fillRect/></a:stretch></pic:blipFill>` +
    `<pic:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="${cx}" cy="${cy}"/></a:xfrm><a:prstGeom prst="rect"><a:avLst/></a:prstGeom></pic:spPr>` +
    `</pic:pic></a:graphicData></a:graphic></wp:inline></w:drawing>`
  );
}

const NS_WPS = NS.wordprocessingShape;

/**
 * An inline DrawingML shape (wps) holding a shallow S-curve stroked in `colorHex`: the signature
 * arc. The path is in the shape's own coordinates (w = cx, h = cy) with no fill.
 */
export function inlineCurveXml(extent: Extent, drawingId: number, colorHex: string, name: string): string {
  const { cx, cy } = extent;
  const pt = (x: number, y: number) => `<a:pt x="${Math.round(x)}" y="${Math.round(y)}"/>`;
  const path =
    `<a:moveTo>${pt(0, cy * 0.8)}</a:moveTo>` +
    `<a:cubicBezTo>${pt(cx * 0.3, cy * 0.05)}${pt(cx * 0.6, cy * 1.1)}${pt(cx, cy * 0.2)}</a:cubicBezTo>`;
  return (
    `<w:drawing><wp:inline xmlns:wp="${NS_WP}" distT="0" distB="0" distL="0" distR="0">` +
    `<wp:extent cx="${cx}" cy="${cy}"/><wp:effectExtent l="0" t="0" r="0" b="0"/>` +
    `<wp:docPr id="${drawingId}" name="${name} ${drawingId}"/><wp:cNvGraphicFramePr/>` +
    `<a:graphic xmlns:a="${NS_A}"><a:graphicData uri="${NS_WPS}"><wps:wsp xmlns:wps="${NS_WPS}"><wps:cNvSpPr/>` +
    `<wps:spPr><a:xfrm><a:off x="0" y="0"/><a:ext cx="${cx}" cy="${cy}"/></a:xfrm>` +
    `<a:custGeom><a:avLst/><a:gdLst/><a:ahLst/><a:cxnLst/><a:rect l="0" t="0" r="r" b="b"/>` +
    `<a:pathLst><a:path w="${cx}" h="${cy}" fill="none">${path}</a:path></a:pathLst></a:custGeom>` +
    `<a:noFill/><a:ln w="19050" cap="rnd"><a:solidFill><a:srgbClr val="${colorHex}"/></a:solidFill><a:round/></a:ln></wps:spPr>` +
    `<wps:bodyPr/></wps:wsp></a:graphicData></a:graphic></wp:inline></w:drawing>`
  );
}

/**
 * The last `<w:sectPr…</w:sectPr>` run of the text, each run from an opening to the first closing
 * after it (what a lazy regex match would give), found with indexOf so that openings without a
 * closing cost one scan in all rather than one each.
 */
function lastSection(xml: string): string | undefined {
  const open = '<w:sectPr';
  const close = '</w:sectPr>';
  let section: string | undefined;
  for (let start = xml.indexOf(open); start >= 0; ) {
    const end = xml.indexOf(close, start + open.length);
    if (end < 0) break;
    section = xml.slice(start, end + close.length);
    start = xml.indexOf(open, end + close.length);
  }
  return section;
}

/** Text width of the document's last section (page width minus left/right margins), in twips. */
export function pageTextWidthTwips(documentXml: string): number {
  const section = lastSection(documentXml);
  if (!section) return DEFAULT_TEXT_WIDTH_TWIPS;
  const pageWidth = Number(/<w:pgSz[^<>]*\sw:w="(\d+)"/.exec(section)?.[1] ?? NaN);
  const left = Number(/<w:pgMar[^<>]*\sw:left="(-?\d+)"/.exec(section)?.[1] ?? 1440);
  const right = Number(/<w:pgMar[^<>]*\sw:right="(-?\d+)"/.exec(section)?.[1] ?? 1440);
  const width = pageWidth - left - right;
  return Number.isFinite(width) && width > 0 ? width : DEFAULT_TEXT_WIDTH_TWIPS;
}

/** Width of a cell from its `<w:tcW w:type="dxa">`, minus default cell padding; null if not absolute. */
export function cellWidthTwips(cellXmlStart: string): number | null {
  const tcW = /<w:tcW\b[^<>]*>/.exec(cellXmlStart)?.[0];
  if (!tcW) return null;
  const width = Number(/w:w="(\d+)"/.exec(tcW)?.[1] ?? NaN);
  const type = /w:type="(\w+)"/.exec(tcW)?.[1] ?? 'dxa';
  if (type !== 'dxa' || !Number.isFinite(width) || width <= 0) return null;
  return Math.max(width - 216, width / 2); // Word's default left+right cell margins are 108 twips each
}
