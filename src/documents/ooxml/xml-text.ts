/** Text into XML: the one escaper for everything docproc writes as XML text (element content and attribute values). */

// What XML 1.0 forbids: C0 controls but tab, LF and CR; U+FFFE, U+FFFF; lone surrogates. (Listed
// positively: measured faster than the negated /u class of what it allows, on the writer's hot path.)
const INVALID_XML_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

// A plain class (no lookaround) over every character INVALID_XML_CHARS can match, surrogates all
// taken: text without any, nearly all text, is returned as it is without running the replace
// (the lookbehind made that ~10 % of writing a DOCX).
const MAYBE_INVALID = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/;

export function stripInvalidXmlChars(text: string): string {
  return MAYBE_INVALID.test(text) ? text.replace(INVALID_XML_CHARS, '') : text;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;', '\t': '&#9;', '\n': '&#10;', '\r': '&#13;' };

const TO_ESCAPE = /[&<>"'\t\n\r]/;
const TO_ESCAPE_ALL = /[&<>"'\t\n\r]/g;

/**
 * Escapes text for element content or an attribute value (either quote), dropping characters XML
 * cannot hold; tabs and line breaks become character references, so attribute values keep them.
 */
export function escapeXml(text: string): string {
  const valid = stripInvalidXmlChars(text);
  return TO_ESCAPE.test(valid) ? valid.replace(TO_ESCAPE_ALL, (c) => ESCAPES[c]!) : valid;
}
