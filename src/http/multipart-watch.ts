/**
 * Measures a multipart body as it arrives, beside busboy (which parses it for the route): the bytes of
 * each part and of the whole body. busboy cuts a text field at its limit silently and reads the rest
 * of the part anyway, and reads a file past its limit to the part's end; a 1.5 GB field was read
 * whole (61 s) before its 413. The watch calls `exceeded` as soon as a part passes its limit or the
 * body its budget, so the request can be stopped there.
 *
 * It reads only what it needs: the delimiter lines (`\r\n--boundary`) and each part's header block,
 * to tell a file part (its Content-Disposition has a filename) from a text field.
 */
export interface MultipartLimits {
  fileBytes: number;
  /** A text field must stay below this (at it, busboy has cut the value). */
  fieldBytes: number;
  bodyBytes: number;
}

export interface LimitExceeded {
  kind: 'file' | 'field' | 'body';
  /** The part's name, when a part passed its limit. */
  name?: string;
  limit: number;
}

/** A part's header block larger than this is busboy's to refuse; the watch stops looking. */
const MAX_HEADER_BYTES = 16 * 1024;
const HEADER_END = Buffer.from('\r\n\r\n');

export class MultipartWatch {
  private readonly delimiter: Buffer;
  /** Bytes kept from the previous chunk: a delimiter or header block cut in two. Starts with the CRLF the first delimiter lacks. */
  private pending = Buffer.from('\r\n');
  private state: 'preamble' | 'headers' | 'body' | 'done' = 'preamble';
  private part = { name: '', file: false, bytes: 0 };
  private total = 0;

  constructor(boundary: string, private readonly limits: MultipartLimits, private readonly exceeded: (what: LimitExceeded) => void) {
    this.delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  }

  push(chunk: Buffer): void {
    if (this.state === 'done') return;
    this.total += chunk.length;
    if (this.total > this.limits.bodyBytes) return this.stop({ kind: 'body', limit: this.limits.bodyBytes });
    const buffer = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = Buffer.alloc(0);
    let at = 0;
    for (;;) {
      if (this.state === 'headers') {
        if (buffer.length - at < 2) return this.keep(buffer, at);
        if (buffer[at] === 0x2d && buffer[at + 1] === 0x2d) return void (this.state = 'done'); // "--": the closing delimiter
        const end = buffer.indexOf(HEADER_END, at);
        if (end < 0) {
          if (buffer.length - at > MAX_HEADER_BYTES) return void (this.state = 'done');
          return this.keep(buffer, at);
        }
        const headers = buffer.toString('latin1', at, end);
        const disposition = /^content-disposition:([^\r\n]*)/im.exec(headers)?.[1] ?? '';
        this.part = { name: /\bname="([^"]*)"/i.exec(disposition)?.[1] ?? '', file: /\bfilename\*?=/i.test(disposition), bytes: 0 };
        this.state = 'body';
        at = end + HEADER_END.length;
        continue;
      }
      const found = buffer.indexOf(this.delimiter, at);
      // Without a delimiter, all but a possible start of one is the part's.
      const stop = found >= 0 ? found : Math.max(at, buffer.length - (this.delimiter.length - 1));
      if (this.state === 'body') {
        this.part.bytes += stop - at;
        const over = this.part.file ? this.part.bytes > this.limits.fileBytes : this.part.bytes >= this.limits.fieldBytes;
        if (over) return this.stop({ kind: this.part.file ? 'file' : 'field', name: this.part.name, limit: this.part.file ? this.limits.fileBytes : this.limits.fieldBytes });
      }
      if (found < 0) return this.keep(buffer, stop);
      this.state = 'headers';
      at = found + this.delimiter.length;
    }
  }

  private keep(buffer: Buffer, from: number): void {
    this.pending = Buffer.from(buffer.subarray(from));
  }

  private stop(what: LimitExceeded): void {
    this.state = 'done';
    this.pending = Buffer.alloc(0);
    this.exceeded(what);
  }
}

/** The boundary of a multipart Content-Type, or undefined. */
export function multipartBoundary(contentType: string | undefined): string | undefined {
  const match = /;\s*boundary=(?:"([^"]{1,200})"|([^\s;]{1,200}))/i.exec(contentType ?? '');
  return match ? (match[1] ?? match[2]) : undefined;
}
