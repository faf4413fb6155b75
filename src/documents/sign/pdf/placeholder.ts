import { DomainError, ErrorCode } from '../../../errors/domain-error.js';
import { PdfString, hexString } from '../../pdf/objects.js';
import type { IncrementalWriter, WrittenUpdate } from '../../pdf/writer.js';
import { assertUnambiguous } from './structure.js';

/**
 * A signature's two placeholders: /Contents, a hex string of zeros reserving room for the CMS or
 * time-stamp token, and /ByteRange, four numbers wide enough for any offset in a file we accept,
 * rewritten (same width, padded with spaces) once the writer has placed everything.
 */
export interface SignaturePlaceholders {
  contents: PdfString;
  byteRange: number[];
}

const WIDE = 9_999_999_999;

export const signaturePlaceholders = (contentsBytes: number): SignaturePlaceholders => ({
  contents: hexString(new Uint8Array(contentsBytes)),
  byteRange: [0, WIDE, WIDE, WIDE],
});

export interface SignedSpan {
  pdf: Buffer;
  /** Offset of the /Contents string's `<`. */
  contentsStart: number;
  /** Offset just after its `>`. */
  contentsEnd: number;
}

/**
 * Writes the update and fills in the /ByteRange: all of the file but the /Contents string. The
 * signature dictionary holding `placeholders` must be one of the writer's objects.
 */
export function writeWithByteRange(writer: IncrementalWriter, placeholders: SignaturePlaceholders): SignedSpan {
  assertUnambiguous(writer.view);
  const written: WrittenUpdate = writer.write([placeholders.contents, placeholders.byteRange]);
  const pdf = written.bytes;
  const contents = written.spans.get(placeholders.contents)!;
  const range = written.spans.get(placeholders.byteRange)!;
  const width = range.end - range.start;
  const byteRange = `[0 ${contents.start} ${contents.end} ${pdf.length - contents.end}]`;
  if (byteRange.length > width) throw new DomainError(ErrorCode.FILE_TOO_LARGE, 'The PDF is too large to sign.');
  pdf.write(byteRange.padEnd(width, ' '), range.start, 'latin1');
  return { pdf, contentsStart: contents.start, contentsEnd: contents.end };
}

/** The bytes a signature over `span` covers: everything but the /Contents string. */
export const signedBytes = ({ pdf, contentsStart, contentsEnd }: SignedSpan) => [pdf.subarray(0, contentsStart), pdf.subarray(contentsEnd)];
