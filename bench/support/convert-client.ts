import http from 'node:http';

/**
 * The DOCX→PDF benches' client: each document's multipart body built once, sent with node:http over
 * keep-alive sockets (fetch + FormData cost the client more CPU per request than the service's own
 * HTTP, on the same 2 cores). It imports nothing of the service: a client process that loaded the
 * app's modules (bench-app.ts) had a heap many times larger for its collector to trace, and spent
 * ~2 ms of CPU per request on the cores the service and LibreOffice share.
 */

/**
 * The settings the DOCX→PDF benches run the service with, in this process or as a process of its
 * own: warnings only, no rate or concurrency limit in the way, one worker thread.
 */
export function benchServiceEnv(officePoolSize: number): Record<string, string> {
  return { LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '1000000', CONCURRENCY_PER_KEY: '1000', OFFICE_POOL_SIZE: String(officePoolSize), WORKER_THREADS: '1' };
}

export interface ConvertUpload {
  body: Buffer;
  contentType: string;
  format: string;
}

export function multipartUpload(doc: Buffer, format = 'docx'): ConvertUpload {
  const boundary = `docproc-bench-${Math.random().toString(16).slice(2)}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="input.${format}"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  return { body: Buffer.concat([head, doc, Buffer.from(`\r\n--${boundary}--\r\n`)]), contentType: `multipart/form-data; boundary=${boundary}`, format };
}

/**
 * POST /v1/convert?from=…&to=pdf; rejects unless the answer is 200 with a PDF (`label` names the
 * service in the error). A PDF's bytes are counted, not kept: only its first bytes are looked at.
 */
export async function convertOverHttp(baseUrl: string, key: string, upload: ConvertUpload, agent: http.Agent, label?: string): Promise<void> {
  const { status, head } = await new Promise<{ status: number; head: Buffer }>((resolve, reject) => {
    const request = http.request(`${baseUrl}/v1/convert?from=${upload.format}&to=pdf`, {
      method: 'POST',
      agent,
      headers: { authorization: `Bearer ${key}`, 'content-type': upload.contentType, 'content-length': upload.body.length },
    });
    request.once('error', reject);
    request.once('response', (response) => {
      // The start of the body: the PDF's magic, or an error's text (kept whole up to 200 bytes).
      let head = Buffer.alloc(0);
      response.on('data', (chunk: Buffer) => {
        if (head.length < 200) head = Buffer.concat([head, chunk.subarray(0, 200 - head.length)]);
      });
      response.once('error', reject);
      response.once('end', () => resolve({ status: response.statusCode ?? 0, head }));
    });
    request.end(upload.body);
  });
  if (status !== 200 || head.subarray(0, 5).toString('latin1') !== '%PDF-') throw new Error(`${label ? `${label}: ` : ''}HTTP ${status}: ${head.toString()}`);
}
