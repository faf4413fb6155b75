import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { initWasm, Resvg } from '@resvg/resvg-wasm';
import { DomainError, ErrorCode, fileTooLarge } from '../../errors/domain-error.js';

/**
 * SVG → PNG rasterisation for the PNG fallback Word and LibreOffice need beside an SVG picture
 * (Word 2016+ shows the SVG through the asvg:svgBlip extension, everything else the PNG).
 * resvg runs as WebAssembly: no native library, and no file or network access, so an SVG
 * that references /etc/… or an http URL simply renders without it.
 */
export const SVG_LIMITS = {
  maxBytes: 2 * 1024 * 1024,
  /** Longest side of the PNG fallback, in pixels. */
  maxRasterSide: 2048,
  /** The fallback is drawn at twice the display size (for print), within maxRasterSide. */
  rasterScale: 2,
  /** Largest raster (width × height) an SVG may embed as a data: URI; the renderer decodes it whole. */
  maxEmbeddedPixels: 25_000_000,
};

/** Fonts for <text> in SVGs: the WASM build cannot see system fonts, so a few are passed in. */
const FONT_FILES = [
  '/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf',
  '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf',
  '/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf',
  '/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf',
];

let loading: Promise<void> | null = null;
let ready = false;
let fonts: Uint8Array[] | null = null;

/** Loads the resvg WebAssembly module once per thread; later calls return at once. */
export function loadSvgRenderer(): Promise<void> {
  loading ??= (async () => {
    const require = createRequire(import.meta.url);
    await initWasm(readFileSync(require.resolve('@resvg/resvg-wasm/index_bg.wasm')));
    ready = true;
  })().catch((error) => {
    loading = null;
    throw error;
  });
  return loading;
}

function svgFonts(): Uint8Array[] {
  fonts ??= FONT_FILES.filter((file) => existsSync(file)).map((file) => readFileSync(file));
  return fonts;
}

export interface RasterisedSvg {
  png: Buffer;
  /** The SVG's own size in CSS pixels (its display size when no dimensions are given). */
  widthPx: number;
  heightPx: number;
}

const badSvg = (where: string, issue: string) =>
  new DomainError(ErrorCode.VALIDATION_ERROR, `${where}: ${issue}`, { details: [{ field: where, issue }] });

export function assertSvgSize(svg: Buffer, where: string): void {
  if (svg.length > SVG_LIMITS.maxBytes) {
    throw fileTooLarge(`${where}: the SVG image is larger than ${SVG_LIMITS.maxBytes / 1024 / 1024} MB; send a smaller image or a PNG.`);
  }
}

/** Renders the SVG to a PNG fallback; throws 400 for an SVG resvg cannot read or that has no size. */
export function rasteriseSvg(svg: Buffer, where: string): RasterisedSvg {
  if (!ready) throw new DomainError(ErrorCode.INTERNAL_ERROR, 'The SVG renderer was not loaded; call loadSvgRenderer() first.');
  assertSvgSize(svg, where);
  const text = svg.toString('utf8');
  const fontOptions = /<text[\s>]/.test(text)
    ? { fontBuffers: svgFonts(), loadSystemFonts: false, defaultFontFamily: 'DejaVu Sans', sansSerifFamily: 'DejaVu Sans', serifFamily: 'DejaVu Serif', monospaceFamily: 'DejaVu Sans Mono' }
    : { fontBuffers: [], loadSystemFonts: false };
  let probe: InstanceType<typeof Resvg>;
  try {
    probe = new Resvg(text, { font: fontOptions });
  } catch (error) {
    throw badSvg(where, `the SVG image could not be read (${String((error as Error)?.message ?? error).slice(0, 200)}); send a valid SVG or a PNG.`);
  }
  try {
    return renderFallback(probe, text, fontOptions, where);
  } catch (error) {
    if (error instanceof DomainError) throw error;
    throw badSvg(where, `the SVG image could not be rendered (${String((error as Error)?.message ?? error).slice(0, 200)}); send a PNG instead.`);
  } finally {
    probe.free();
  }
}

type FontOptions = NonNullable<ConstructorParameters<typeof Resvg>[1]>['font'];

/** Draws the PNG at twice the SVG's size (crisp in print), the longest side capped. */
function renderFallback(probe: InstanceType<typeof Resvg>, text: string, fontOptions: FontOptions, where: string): RasterisedSvg {
  const widthPx = probe.width;
  const heightPx = probe.height;
  if (!(widthPx >= 1 && heightPx >= 1)) throw badSvg(where, 'the SVG image has no width or height; give it width/height or a viewBox.');
  const scale = Math.min(SVG_LIMITS.rasterScale, SVG_LIMITS.maxRasterSide / Math.max(widthPx, heightPx));
  const fitTo = widthPx >= heightPx
    ? { mode: 'width' as const, value: Math.max(1, Math.round(widthPx * scale)) }
    : { mode: 'height' as const, value: Math.max(1, Math.round(heightPx * scale)) };
  const renderer = new Resvg(text, { font: fontOptions, fitTo });
  try {
    const image = renderer.render();
    try {
      return { png: Buffer.from(image.asPng()), widthPx, heightPx };
    } finally {
      image.free();
    }
  } finally {
    renderer.free();
  }
}
