/**
 * What a response head may hold. Load balancers read the whole head into one buffer (nginx's
 * proxy_buffer_size, 4 or 8 KB by default) and answer 502 when it does not fit, so no request may
 * make the head grow with its input. Every header docproc writes is bounded: the request id (128
 * bytes), rate-limit numbers, Content-Disposition (a file name of at most 255 UTF-8 bytes, twice)
 * and the engine warnings, capped here; test/integration/platform/response-head.test.ts measures
 * the largest heads each route can give.
 */
export const MAX_RESPONSE_HEAD_BYTES = 8 * 1024;

/** At most this many warnings in the header, each at most WARNING_BYTES once URI-encoded (under 2 KB in all). */
export const MAX_HEADER_WARNINGS = 8;
export const WARNING_BYTES = 240;

const ELLIPSIS = encodeURIComponent('…');
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** The warning URI-encoded, cut (at a character boundary, with "…") to WARNING_BYTES. */
function encodeWarning(text: string): string {
  const warning = text.replace(LONE_SURROGATE, '\uFFFD'); // encodeURIComponent throws on one
  const whole = encodeURIComponent(warning);
  if (whole.length <= WARNING_BYTES) return whole;
  let kept = '';
  for (const character of warning) {
    const encoded = encodeURIComponent(character);
    if (kept.length + encoded.length + ELLIPSIS.length > WARNING_BYTES) break;
    kept += encoded;
  }
  return kept + ELLIPSIS;
}

/**
 * The X-Docproc-Warnings value: each warning URI-encoded (so any text makes a valid header) and
 * joined by ", "; past MAX_HEADER_WARNINGS the rest are counted in a last entry "and N more".
 */
export function warningsHeader(warnings: readonly string[]): string | undefined {
  if (warnings.length === 0) return undefined;
  const shown = warnings.length > MAX_HEADER_WARNINGS ? warnings.slice(0, MAX_HEADER_WARNINGS - 1) : warnings;
  const entries = shown.map(encodeWarning);
  if (shown.length < warnings.length) entries.push(encodeURIComponent(`and ${warnings.length - shown.length} more`));
  return entries.join(', ');
}
