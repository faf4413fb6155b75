/** Input formats POST /v1/convert accepts, told apart by content when the caller does not say. */
export type SourceFormat = 'docx' | 'md' | 'html';

const HTML_START = /^(?:<!--[\s\S]*?-->\s*)*<(?:!doctype\s+html|html|head|body|meta|title|div|p|table|h[1-6]|section|article|main|span|ul|ol|br|hr|img|a|style|link|script|header|footer|nav|center|font|pre|blockquote)\b/i;

/**
 * docx: a ZIP package; html: text starting with an HTML tag (after a BOM, whitespace, an XML
 * prolog or comments); md: any other text. Undefined for other binary content.
 */
export function detectSourceFormat(data: Buffer): SourceFormat | undefined {
  if (data.length >= 4 && data.readUInt32LE(0) === 0x04034b50) return 'docx';
  const head = data.subarray(0, 4096);
  if (head.includes(0)) return undefined;
  const text = head.toString('utf8').replace(/^\uFEFF/, '').trimStart().replace(/^<\?xml[^>]*\?>\s*/i, '');
  if (text.startsWith('%PDF-')) return undefined;
  return HTML_START.test(text) ? 'html' : 'md';
}
