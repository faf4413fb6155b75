import http from 'node:http';

/**
 * The DOCX→PDF benches' client: each document's multipart body built once, sent with node:http over
 * keep-alive sockets (fetch + FormData cost the client more CPU per request than the service's own
 * HTTP, on the same 2 cores).
 */
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

/** POST /v1/convert?from=…&to=pdf; rejects unless the answer is 200 with a PDF (`label` names the service in the error). */
export async function convertOverHttp(baseUrl: string, key: string, upload: ConvertUpload, agent: http.Agent, label?: string): Promise<void> {
  const { status, body } = await new Promise<{ status: number; body: Buffer }>((resolve, reject) => {
    const request = http.request(`${baseUrl}/v1/convert?from=${upload.format}&to=pdf`, {
      method: 'POST',
      agent,
      headers: { authorization: `Bearer ${key}`, 'content-type': upload.contentType, 'content-length': upload.body.length },
    });
    request.once('error', reject);
    request.once('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.once('error', reject);
      response.once('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks) }));
    });
    request.end(upload.body);
  });
  if (status !== 200 || body.subarray(0, 5).toString('latin1') !== '%PDF-') throw new Error(`${label ? `${label}: ` : ''}HTTP ${status}: ${body.subarray(0, 200).toString()}`);
}
