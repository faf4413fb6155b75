/**
 * Hostile-input benchmark (issue: one caller cannot take a replica down). Starts the service at
 * its defaults (real Redis from REDIS_URL or 127.0.0.1:6379, real LibreOffice) and prints, each
 * against a baseline measured in the same run:
 *   - peak RSS of the service's process tree while a 1000 × 1000 Markdown table is converted;
 *   - peak RSS while multipart requests carry many large text fields the operations do not use;
 *   - /v1/health p50/p99 while ten 200 KB zip bombs are refused at once, vs the idle p50/p99.
 *   npx tsx bench/limits.ts [--redis redis://127.0.0.1:6379]
 */
import http from 'node:http';
import { parseArgs } from 'node:util';
import PizZip from 'pizzip';
import { generateApiKey, hashApiKey } from '../src/accounts/api-keys.js';
import { RedisStore } from '../src/store/redis-store.js';
import { freePort } from '../test/support/global-setup.js';
import { percentile } from './support/mix.js';
import { mb, processTreeMemory, startService } from './support/service.js';

const { values } = parseArgs({ options: { redis: { type: 'string', default: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' } } });
const PEPPER = 'bench-limits-pepper-0123456789';

const store = new RedisStore(values.redis!);
if (!(await store.connected(5_000))) throw new Error(`no Redis at ${values.redis}`);
const key = generateApiKey();
await store.putApiKey(hashApiKey(key, PEPPER), { email: 'bench-limits@example.com', createdAt: new Date().toISOString() });
await store.close();

const port = await freePort();
const service = await startService({ name: 'limits', port, env: { REDIS_URL: values.redis!, API_KEY_PEPPER: PEPPER, RATE_LIMIT_MAX: '100000', CONCURRENCY_PER_KEY: '100' } });

function post(path: string, body: Buffer, contentType: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.request({ host: '127.0.0.1', port, path, method: 'POST', agent: false, headers: { authorization: `Bearer ${key}`, 'content-type': contentType, 'content-length': body.length } }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

function healthOnce(): Promise<number> {
  const started = performance.now();
  return new Promise((resolve) => {
    http.get({ host: '127.0.0.1', port, path: '/v1/health', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(performance.now() - started));
    }).on('error', () => resolve(Number.NaN));
  });
}

/** Runs `work` while sampling the tree's RSS every 20 ms; returns the peak and the work's result. */
async function peakRss<T>(work: () => Promise<T>): Promise<{ peakMb: number; result: T; ms: number }> {
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, processTreeMemory(service.pid).totalBytes)), 20);
  const started = performance.now();
  const result = await work();
  const ms = performance.now() - started;
  clearInterval(sampler);
  return { peakMb: mb(peak), result, ms };
}

function multipart(fields: [string, Buffer, string?][]): { body: Buffer; type: string } {
  const boundary = `bench${Date.now()}`;
  const parts = fields.map(([name, data, filename]) =>
    Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"${filename ? `; filename="${filename}"` : ''}\r\n\r\n`), data, Buffer.from('\r\n')]),
  );
  return { body: Buffer.concat([...parts, Buffer.from(`--${boundary}--\r\n`)]), type: `multipart/form-data; boundary=${boundary}` };
}

async function healthLatencies(count: number, during?: Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  let running = true;
  void during?.finally(() => (running = false));
  for (let i = 0; during ? running : i < count; i++) {
    samples.push(await healthOnce());
    await new Promise((r) => setTimeout(r, 5));
  }
  return samples.filter(Number.isFinite).sort((a, b) => a - b);
}

try {
  await new Promise((r) => setTimeout(r, 2_000));
  const idleMb = mb(processTreeMemory(service.pid).totalBytes);
  const idleHealth = await healthLatencies(200);
  console.log(`baseline: idle tree RSS ${idleMb} MB; /v1/health p50 ${percentile(idleHealth, 50).toFixed(1)} ms, p99 ${percentile(idleHealth, 99).toFixed(1)} ms`);

  const rows = ['|' + Array.from({ length: 1000 }, (_, i) => `h${i}`).join('|') + '|', '|' + '-|'.repeat(1000)];
  for (let r = 0; r < 1000; r++) rows.push('|' + Array.from({ length: 1000 }, (_, c) => `${c}`).join('|') + '|');
  const table = multipart([['file', Buffer.from(rows.join('\n')), 'table.md']]);
  const md = await peakRss(() => post('/v1/convert?from=md&to=docx', table.body, table.type));
  console.log(`1000 × 1000 Markdown table (${(table.body.length / 1e6).toFixed(1)} MB): HTTP ${md.result} in ${md.ms.toFixed(0)} ms, peak tree RSS ${md.peakMb} MB (${(md.peakMb / idleMb).toFixed(2)}× idle, +${md.peakMb - idleMb} MB)`);

  const big = Buffer.alloc(3 * 1024 * 1024, 0x61);
  const fields = multipart([['file', Buffer.from('%PDF-1.4\n'), 'a.pdf'], ...Array.from({ length: 19 }, (_, i): [string, Buffer] => [`unused${i}`, big])]);
  const declared = multipart([['file', Buffer.from('%PDF-1.4\n'), 'a.pdf'], ['signer', Buffer.alloc(8 * 1024 * 1024, 0x61)]]);
  const flood = await peakRss(() => Promise.all([post('/v1/verify', fields.body, fields.type), post('/v1/sign', fields.body, fields.type), post('/v1/sign', declared.body, declared.type)]));
  console.log(`multipart fields (2 × 19 unused 3 MB fields, 1 × 8 MB declared field; ${((2 * fields.body.length + declared.body.length) / 1e6).toFixed(0)} MB sent): HTTP ${flood.result.join(', ')} in ${flood.ms.toFixed(0)} ms, peak tree RSS ${flood.peakMb} MB (${(flood.peakMb / idleMb).toFixed(2)}× idle, +${flood.peakMb - idleMb} MB)`);

  const zip = new PizZip();
  zip.file('[Content_Types].xml', '<Types/>');
  zip.file('word/document.xml', Buffer.alloc(199 * 1024 * 1024, 0x20));
  const bomb = multipart([['file', zip.generate({ type: 'nodebuffer', compression: 'DEFLATE' }) as Buffer, 'bomb.docx']]);
  const burst = Promise.all(Array.from({ length: 10 }, () => post('/v1/convert', bomb.body, bomb.type)));
  const during = await healthLatencies(0, burst);
  const statuses = await burst;
  console.log(`ten ${Math.round(bomb.body.length / 1024)} KB zip bombs at once: HTTP ${[...new Set(statuses)].join('/')}; /v1/health meanwhile p50 ${percentile(during, 50).toFixed(1)} ms, p99 ${percentile(during, 99).toFixed(1)} ms over ${during.length} probes (${(percentile(during, 99) / percentile(idleHealth, 99)).toFixed(2)}× idle p99; target < 100 ms)`);
} finally {
  await service.stop(10_000);
}
