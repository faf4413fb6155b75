import type { PDFRef } from 'pdf-lib';
import { AppError, ErrorCode } from '../../../errors/app-error.js';
import type { WrittenUpdate } from './incremental.js';

/** Room for the final /ByteRange, written once the file's length is known. */
export const BYTE_RANGE_PLACEHOLDER = '[0 0000000000 0000000000 0000000000]';

/** `/Contents <00…00>` reserving `bytes` bytes. */
export const contentsPlaceholder = (bytes: number) => `/Contents <${'0'.repeat(bytes * 2)}>`;

export interface SignedSpan {
  pdf: Buffer;
  /** Offset of the /Contents string's `<`. */
  contentsStart: number;
  /** Offset just after its `>`. */
  contentsEnd: number;
}

/**
 * Writes the /ByteRange of the signature dictionary `dictionary` (object `ref` of `written`): all
 * of the file but its /Contents string, which reserves `contentsBytes` bytes.
 */
export function fillByteRange(written: WrittenUpdate, ref: PDFRef, dictionary: string, contentsBytes: number): SignedSpan {
  const pdf = written.bytes;
  const body = written.bodyOffsets.get(ref.objectNumber)!;
  const contentsStart = body + dictionary.indexOf('/Contents <') + '/Contents '.length;
  const contentsEnd = contentsStart + contentsBytes * 2 + 2;
  const byteRange = `[0 ${contentsStart} ${contentsEnd} ${pdf.length - contentsEnd}]`.padEnd(BYTE_RANGE_PLACEHOLDER.length, ' ');
  if (byteRange.length !== BYTE_RANGE_PLACEHOLDER.length) throw new AppError(413, ErrorCode.FILE_TOO_LARGE, 'The PDF is too large to sign.');
  pdf.write(byteRange, body + dictionary.indexOf(BYTE_RANGE_PLACEHOLDER), 'latin1');
  return { pdf, contentsStart, contentsEnd };
}

/** The bytes a signature over `span` covers: everything but the /Contents string. */
export const signedBytes = ({ pdf, contentsStart, contentsEnd }: SignedSpan) => [pdf.subarray(0, contentsStart), pdf.subarray(contentsEnd)];
