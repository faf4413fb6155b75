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

/** Content stream for a form XObject with BBox [0 0 width height]; font resource /F1. */
export function appearanceContent(text: AppearanceText, width: number, height: number, showText: ShowText): string {
  const lines = appearanceLines(text);
  const padding = Math.min(4, width / 10, height / 10);
  const widest = Math.max(...lines.map((l) => textWidth(l, 'regular', 1)));
  const byHeight = (height - 2 * padding) / (lines.length * 1.2);
  const byWidth = (width - 2 * padding) / Math.max(widest, 1);
  const size = Math.max(1, Math.min(11, byHeight, byWidth));
  const ops = [`0.2 0.3 0.6 RG 0.8 w 0.4 0.4 ${formatNumber(width - 0.8)} ${formatNumber(height - 0.8)} re S`];
  let y = height - padding - size;
  for (const line of lines) {
    ops.push(`BT /F1 ${formatNumber(size)} Tf 0 g ${formatNumber(padding)} ${formatNumber(y)} Td ${showText(line, 'regular')} Tj ET`);
    y -= size * 1.2;
  }
  return ops.join('\n');
}
