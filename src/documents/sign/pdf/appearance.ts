import { textWidth, type ShowText } from './fonts.js';
import { formatNumber } from './text.js';

/**
 * The visible signature's normal appearance (/AP /N): a thin frame and the signer's name,
 * signing time and reason in the revision's regular font, scaled down to fit the box.
 */
export interface AppearanceText {
  signerName: string;
  signedAt: Date;
  reason?: string;
  location?: string;
}

export function appearanceLines(text: AppearanceText): string[] {
  return [
    `Digitally signed by ${text.signerName}`,
    `Date: ${text.signedAt.toISOString().replace('T', ' ').replace(/\.\d+Z$/, ' UTC')}`,
    ...(text.reason ? [`Reason: ${text.reason}`] : []),
    ...(text.location ? [`Location: ${text.location}`] : []),
  ];
}

/** An image XObject to draw, by its resource name and pixel size. */
export interface AppearanceImage {
  name: string;
  width: number;
  height: number;
}

/** The image's place: at the left, as tall as the box allows, at most 40 % of its width, aspect kept. */
export function imagePlacement(image: AppearanceImage, width: number, height: number, padding: number): { x: number; y: number; width: number; height: number } {
  const scale = Math.max(0, Math.min((height - 2 * padding) / image.height, (width * 0.4 - padding) / image.width));
  const w = image.width * scale;
  const h = image.height * scale;
  return { x: padding, y: (height - h) / 2, width: w, height: h };
}

/**
 * Content stream for a form XObject with BBox [0 0 width height]; font resource /F1, and the image
 * (when given) under its resource name, left of the text.
 */
export function appearanceContent(text: AppearanceText, width: number, height: number, showText: ShowText, image?: AppearanceImage): string {
  const lines = appearanceLines(text);
  const padding = Math.min(4, width / 10, height / 10);
  const ops = [`0.2 0.3 0.6 RG 0.8 w 0.4 0.4 ${formatNumber(width - 0.8)} ${formatNumber(height - 0.8)} re S`];
  let left = padding;
  if (image) {
    const place = imagePlacement(image, width, height, padding);
    if (place.width > 0 && place.height > 0) {
      ops.push(`q ${formatNumber(place.width)} 0 0 ${formatNumber(place.height)} ${formatNumber(place.x)} ${formatNumber(place.y)} cm /${image.name} Do Q`);
      left = place.x + place.width + padding;
    }
  }
  const widest = Math.max(...lines.map((l) => textWidth(l, 'regular', 1)));
  const byHeight = (height - 2 * padding) / (lines.length * 1.2);
  const byWidth = (width - left - padding) / Math.max(widest, 1);
  const size = Math.max(1, Math.min(11, byHeight, byWidth));
  let y = height - padding - size;
  for (const line of lines) {
    ops.push(`BT /F1 ${formatNumber(size)} Tf 0 g ${formatNumber(left)} ${formatNumber(y)} Td ${showText(line, 'regular')} Tj ET`);
    y -= size * 1.2;
  }
  return ops.join('\n');
}
