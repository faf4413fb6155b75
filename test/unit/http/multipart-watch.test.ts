import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { multipartBoundary, MultipartWatch, type LimitExceeded } from '../../../src/http/multipart-watch.js';

/** The watch, fed a body cut into arbitrary chunks, reports a part past its limit exactly when one is. */
type Part = { name: string; file: boolean; size: number };

function body(boundary: string, parts: Part[], terminated = true): Buffer {
  const chunks: Buffer[] = [Buffer.from('preamble ignored\r\n')];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.file ? `; filename="${part.name}.bin"` : ''}`;
    chunks.push(Buffer.from(`--${boundary}\r\nContent-Disposition: ${disposition}\r\n${part.file ? 'Content-Type: application/octet-stream\r\n' : ''}\r\n`));
    // Content that looks like delimiters without being one, and CRLFs.
    const unit = `-- ${boundary}\r\n`;
    chunks.push(Buffer.from(unit.repeat(Math.ceil(part.size / unit.length)).slice(0, part.size), 'latin1'), Buffer.from('\r\n'));
  }
  if (terminated) chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(chunks);
}

function expected(parts: Part[], limits: { fileBytes: number; fieldBytes: number }): LimitExceeded | undefined {
  const over = parts.find((p) => (p.file ? p.size > limits.fileBytes : p.size >= limits.fieldBytes));
  return over && { kind: over.file ? 'file' : 'field', name: over.name, limit: over.file ? limits.fileBytes : limits.fieldBytes };
}

function feed(data: Buffer, cuts: number[], boundary: string, limits: { fileBytes: number; fieldBytes: number; bodyBytes: number }) {
  const reports: { what: LimitExceeded; before: number }[] = [];
  let before = 0;
  const watch = new MultipartWatch(boundary, limits, (what) => reports.push({ what, before }));
  const points = [...new Set(cuts.map((c) => c % (data.length + 1)))].sort((a, b) => a - b);
  let from = 0;
  for (const to of [...points, data.length]) {
    if (to <= from) continue;
    before = from;
    watch.push(data.subarray(from, to));
    from = to;
  }
  return reports;
}

describe('MultipartWatch', () => {
  it('property: reports the first part past its limit, once, while that part arrives; never a part within it', () => {
    const partArb = fc.record({ name: fc.stringMatching(/^[a-z]{1,8}$/), file: fc.boolean(), size: fc.integer({ min: 0, max: 3000 }) });
    fc.assert(
      fc.property(fc.array(partArb, { maxLength: 6 }), fc.array(fc.nat(), { maxLength: 30 }), fc.stringMatching(/^[A-Za-z0-9'()+_,-]{1,40}$/), (parts, cuts, boundary) => {
        const limits = { fileBytes: 2000, fieldBytes: 1000, bodyBytes: Number.MAX_SAFE_INTEGER };
        const data = body(boundary, parts);
        const reports = feed(data, cuts, boundary, limits);
        const over = expected(parts, limits);
        expect(reports.map((r) => r.what)).toEqual(over ? [over] : []);
        if (over) {
          // Reported by the push that brought the part's first byte past its limit (or the few after
          // it a delimiter could still begin with), not at the part's end.
          const index = parts.findIndex((p) => p.name === over.name && p.file === (over.kind === 'file') && (p.file ? p.size > limits.fileBytes : p.size >= limits.fieldBytes));
          const contentStart = body(boundary, parts.slice(0, index + 1), false).length - parts[index]!.size - 2;
          const crossing = contentStart + over.limit + (over.kind === 'file' ? 1 : 0);
          expect(reports[0]!.before).toBeLessThan(crossing + boundary.length + 4);
        }
      }),
      { seed: 1026, numRuns: 400 },
    );
  });

  it('stops a body past its budget, and a 1.5 GB field after its limit rather than at its end', () => {
    const reports: LimitExceeded[] = [];
    const watch = new MultipartWatch('b', { fileBytes: 25 << 20, fieldBytes: 4 << 20, bodyBytes: 40 << 20 }, (what) => reports.push(what));
    watch.push(Buffer.from('--b\r\nContent-Disposition: form-data; name="signer"\r\n\r\n'));
    let sent = 0;
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    while (reports.length === 0 && sent < 1.5 * 1024 ** 3) {
      watch.push(chunk);
      sent += chunk.length;
    }
    expect(reports).toEqual([{ kind: 'field', name: 'signer', limit: 4 << 20 }]);
    expect(sent).toBeLessThanOrEqual((4 << 20) + chunk.length);
    const body = new MultipartWatch('b', { fileBytes: 25 << 20, fieldBytes: 4 << 20, bodyBytes: 1000 }, (what) => reports.push(what));
    body.push(Buffer.alloc(1001));
    expect(reports.at(-1)).toEqual({ kind: 'body', limit: 1000 });
  });

  it('reads the boundary parameter, quoted or not', () => {
    expect(multipartBoundary('multipart/form-data; boundary=----abc123')).toBe('----abc123');
    expect(multipartBoundary('multipart/form-data; charset=utf-8; boundary="a b:c"')).toBe('a b:c');
    expect(multipartBoundary('multipart/form-data')).toBeUndefined();
  });
});
