import { readFileSync } from 'node:fs';
import path from 'node:path';
import { CORPUS_DIR } from '../../test/support/corpus.js';

/**
 * The traffic the platform tests and the load script send: one realistic request per
 * operation, built from the shared corpus, and a weighted picker for a mix of them.
 */
export type Operation = 'health' | 'convert' | 'annotate' | 'sign' | 'verify';
export const OPERATIONS: Operation[] = ['health', 'convert', 'annotate', 'sign', 'verify'];

const corpusDir = process.env.DOCPROC_CORPUS ?? `${CORPUS_DIR}`;
const corpus = (file: string) => readFileSync(path.join(corpusDir, file));

export interface Fixtures {
  /** DOCX converted to PDF (a small real document; `slowDocx` takes longer). */
  docx: Buffer;
  slowDocx: Buffer;
  /** docxtemplater template with {last_name} {first_name}. */
  template: Buffer;
  /** Unsigned PDF the mix signs. */
  pdf: Buffer;
  /** A PDF this service signed, for verify (filled in once the service has signed one). */
  signedPdf?: Buffer;
}

export function loadFixtures(): Fixtures {
  return {
    docx: corpus('docx/pandoc-track_changes_insertion.docx'),
    slowDocx: corpus('docx/docx4j-headers_footers.docx'),
    template: corpus('templates/docxtemplater-tag-example.docx'),
    pdf: corpus('pdf-unsigned/signpdf-w3dummy.pdf'),
  };
}

export interface PreparedRequest {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: Uint8Array | string;
}

function multipartFile(name: string, data: Buffer, filename: string, type: string): { body: Uint8Array; contentType: string } {
  const boundary = `----docproc${Math.random().toString(36).slice(2)}`;
  const head = `--${boundary}\r\nContent-Disposition: form-data; name="${name}"; filename="${filename}"\r\nContent-Type: ${type}\r\n\r\n`;
  const body = Buffer.concat([Buffer.from(head), data, Buffer.from(`\r\n--${boundary}--\r\n`)]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

const DOCX_TYPE = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document';

export function convertRequest(key: string, docx: Buffer): PreparedRequest {
  const { body, contentType } = multipartFile('file', docx, 'document.docx', DOCX_TYPE);
  return { method: 'POST', path: '/v1/convert', headers: { authorization: `Bearer ${key}`, 'content-type': contentType, accept: 'application/pdf' }, body };
}

export function signRequest(key: string, pdf: Buffer, n = 0): PreparedRequest {
  const body = JSON.stringify({
    document: { base64: pdf.toString('base64') },
    signer: { name: 'Load Tester', email: 'load@example.com', ip: '203.0.113.9' },
    auditTrail: [
      { type: 'ready', timestamp: '2026-01-05T10:00:00.000Z' },
      { type: 'submit', timestamp: '2026-01-05T10:01:00.000Z' },
    ],
    eventId: `evt-load-${n}`,
    certificate: { enabled: false },
  });
  return { method: 'POST', path: '/v1/sign', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body };
}

export function build(operation: Operation, key: string, fixtures: Fixtures, n = 0): PreparedRequest {
  const auth = { authorization: `Bearer ${key}` };
  switch (operation) {
    case 'health':
      return { method: 'GET', path: '/v1/health', headers: {} };
    case 'convert':
      return convertRequest(key, fixtures.docx);
    case 'annotate':
      return {
        method: 'POST',
        path: '/v1/annotate',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({
          document: { base64: fixtures.template.toString('base64') },
          fields: [
            { id: 'first_name', type: 'text', value: `Ada ${n}` },
            { id: 'last_name', type: 'text', value: 'Lovelace' },
          ],
        }),
      };
    case 'sign':
      return signRequest(key, fixtures.pdf, n);
    case 'verify':
      if (!fixtures.signedPdf) throw new Error('verify needs fixtures.signedPdf (sign one first)');
      return { method: 'POST', path: '/v1/verify', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ document: { base64: fixtures.signedPdf.toString('base64') } }) };
  }
}

export interface Outcome {
  operation: Operation | string;
  status: number;
  ms: number;
  retryAfter?: string;
  /** Network failure or timeout (status 0). */
  error?: string;
  body?: Buffer;
}

/** Sends one request; a transport failure or timeout is status 0, never a throw. */
export async function send(base: string, request: PreparedRequest, operation: Operation | string, options: { timeoutMs?: number; keepBody?: boolean } = {}): Promise<Outcome> {
  const started = performance.now();
  try {
    const res = await fetch(base + request.path, {
      method: request.method,
      headers: request.headers,
      body: request.body,
      signal: AbortSignal.timeout(options.timeoutMs ?? 120_000),
    });
    const body = Buffer.from(await res.arrayBuffer());
    return {
      operation,
      status: res.status,
      ms: performance.now() - started,
      retryAfter: res.headers.get('retry-after') ?? undefined,
      body: options.keepBody || res.status >= 400 ? body : undefined,
    };
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return { operation, status: 0, ms: performance.now() - started, error: cause ?? (err as Error).name ?? String(err) };
  }
}

/** Signs the fixture PDF once through the service, so verify has a document this service signed. */
export async function signedPdfFrom(base: string, key: string, fixtures: Fixtures): Promise<Buffer> {
  const outcome = await send(base, { ...signRequest(key, fixtures.pdf), headers: { ...signRequest(key, fixtures.pdf).headers, accept: 'application/pdf' } }, 'sign', { keepBody: true });
  if (outcome.status !== 200 || !outcome.body) throw new Error(`signing the verify fixture failed: ${outcome.status} ${outcome.body?.toString().slice(0, 300) ?? outcome.error}`);
  return outcome.body;
}

export type Weights = Partial<Record<Operation, number>>;
export const DEFAULT_WEIGHTS: Record<Operation, number> = { health: 20, convert: 20, annotate: 25, sign: 20, verify: 15 };

/** Deterministic weighted choice: request n of the mix (a low-discrepancy walk, no RNG). */
export function pick(weights: Weights, n: number): Operation {
  const entries = OPERATIONS.filter((op) => (weights[op] ?? 0) > 0).map((op) => [op, weights[op]!] as const);
  const total = entries.reduce((sum, [, w]) => sum + w, 0);
  let point = ((n * 0.6180339887498949) % 1) * total;
  for (const [op, w] of entries) {
    if (point < w) return op;
    point -= w;
  }
  return entries[entries.length - 1]![0];
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))]!;
}
