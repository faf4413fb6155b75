/** Text into XML: the one escaper for everything docproc writes as XML text (element content and attribute values). */

// What XML 1.0 forbids: C0 controls but tab, LF and CR; U+FFFE, U+FFFF; lone surrogates. (Listed
// positively: measured faster than the negated /u class of what it allows, on the writer's hot path.)
const INVALID_XML_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

export function stripInvalidXmlChars(text: string): string {
  return text.replace(INVALID_XML_CHARS, '');
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;', '\t': '&#9;', '\n': '&#10;', '\r': '&#13;' };

/**
 * Escapes text for element content or an attribute value (either quote), dropping characters XML
 * cannot hold; tabs and line breaks become character references, so attribute values keep them.
 */
export function escapeXml(text: string): string {
  return stripInvalidXmlChars(text).replace(/[&<>"'\t\n\r]/g, (c) => ESCAPES[c]!);
}
