import http from 'node:http';
import type { FastifyInstance } from 'fastify';
import { generateApiKey, hashApiKey } from '../../src/accounts/api-keys.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';

/**
 * The DOCX→PDF benches' client: each document's multipart body built once, sent with node:http over
 * keep-alive sockets (fetch + FormData cost the client more CPU per request than the service's own
 * HTTP, on the same 2 cores).
 */
/** The service in this process (buildApp, HTTP on 127.0.0.1, a free port) and a key for it. */
export interface BenchApp {
  app: FastifyInstance;
  url: string;
  key: string;
}

/**
 * Starts the service in this process as the DOCX→PDF benches run it: warnings only, no rate or
 * concurrency limit in the way, one worker thread, `officePoolSize` office processes; `env` adds to
 * or overrides process.env (e.g. BACKGROUND_NICE).
 */
export async function startBenchApp(officePoolSize: number, env: Record<string, string> = {}): Promise<BenchApp> {
  const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '1000000', CONCURRENCY_PER_KEY: '1000', OFFICE_POOL_SIZE: String(officePoolSize), WORKER_THREADS: '1', PORT: '0', ...env });
  const app = await buildApp(config);
  const key = generateApiKey();
  await app.services.store.putApiKey(hashApiKey(key, config.pepper), { email: 'bench@example.com', createdAt: new Date().toISOString() });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  return { app, url: `http://127.0.0.1:${address.port}`, key };
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
