import { warning, type Warning } from '../warnings.js';
import { DomainError, ErrorCode, fileTooLarge } from '../../errors/domain-error.js';
import type { ConversionLimits } from './types.js';

/** Input checks and text decoding shared by the Markdown and HTML front ends. */
export function assertInputSize(source: Uint8Array, limits: ConversionLimits, what: string): void {
  if (source.byteLength > limits.maxBytes) {
    throw fileTooLarge(`The ${what} document is ${source.byteLength} bytes; the limit is ${limits.maxBytes} bytes. Split it or send a smaller file.`);
  }
}

export function nestingTooDeep(limit: number, what: string): DomainError {
  return new DomainError(ErrorCode.DOCUMENT_TOO_COMPLEX,
    `The document nests ${what} more than ${limit} levels deep; flatten the structure and send it again.`,
  );
}

/**
 * Decodes text: a byte-order mark wins (UTF-8, UTF-16LE/BE), then `fallbackLabel` (an HTML meta
 * charset), then UTF-8. Bytes that are invalid in the chosen encoding become U+FFFD and a
 * warning says so; conversion never fails on encoding.
 */
export function decodeText(source: Uint8Array, warnings: Warning[], fallbackLabel?: string): string {
  let encoding = 'utf-8';
  let start = 0;
  if (source[0] === 0xef && source[1] === 0xbb && source[2] === 0xbf) start = 3;
  else if (source[0] === 0xff && source[1] === 0xfe) [encoding, start] = ['utf-16le', 2];
  else if (source[0] === 0xfe && source[1] === 0xff) [encoding, start] = ['utf-16be', 2];
  else if (fallbackLabel) {
    try {
      encoding = new TextDecoder(fallbackLabel).encoding;
    } catch {
      warnings.push(warning('TEXT_ENCODING', `Unknown character set "${fallbackLabel}" declared; the document was read as UTF-8.`));
    }
  }
  const text =
    encoding === 'windows-1252'
      ? decodeWindows1252(source.subarray(start))
      : new TextDecoder(encoding, { ignoreBOM: true }).decode(source.subarray(start));
  if (encoding === 'utf-8' && text.includes('\uFFFD') && !hasEncodedReplacementChar(source)) {
    warnings.push(warning('TEXT_ENCODING', 'The document is not valid UTF-8; invalid bytes were replaced by U+FFFD. Send UTF-8 text.'));
  }
  return text;
}

/** True when the source itself contains U+FFFD (EF BF BD), so replacement chars are not ours. */
function hasEncodedReplacementChar(source: Uint8Array): boolean {
  return Buffer.from(source.buffer, source.byteOffset, source.byteLength).includes(Buffer.from([0xef, 0xbf, 0xbd]));
}

// Node 20's TextDecoder decodes windows-1252 (which WHATWG also uses for latin1/ascii labels)
// as ISO-8859-1, turning 0x80-0x9F into C1 controls; those bytes map to these characters.
const CP1252_HIGH =
  '\u20AC\u0081\u201A\u0192\u201E\u2026\u2020\u2021\u02C6\u2030\u0160\u2039\u0152\u008D\u017D\u008F' +
  '\u0090\u2018\u2019\u201C\u201D\u2022\u2013\u2014\u02DC\u2122\u0161\u203A\u0153\u009D\u017E\u0178';

function decodeWindows1252(bytes: Uint8Array): string {
  const latin1 = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('latin1');
  return latin1.replace(/[\u0080-\u009F]/g, (c) => CP1252_HIGH[c.charCodeAt(0) - 0x80]);
}
