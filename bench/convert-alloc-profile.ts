/**
 * Where the main thread allocates per DOCX→PDF request (issue 27: GC is about a third of Node's main
 * thread): the real app in this process (pool 2, one worker thread, in-memory store), warmed up with
 * --warmup requests, then --requests at concurrency 4 over the three Word documents of
 * bench/convert-docx.ts under the inspector's sampling heap profiler (objects the GC has already
 * collected included). Prints the sampled allocation per request and the top allocation sites (the
 * allocating frame and three callers). The bench's own HTTP client runs in this process and shows up
 * as node:_http_client / node:_http_agent. Bytes of Buffers' backing stores are outside the JS heap
 * and not counted here.
 *
 *   npx tsx bench/convert-alloc-profile.ts [--requests 200] [--warmup 150] [--top 40]
 */
import http from 'node:http';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Session } from 'node:inspector/promises';
import { parseArgs } from 'node:util';
import { generateApiKey, hashApiKey } from '../src/accounts/api-keys.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { CORPUS_DIR } from '../test/support/corpus.js';

const { values: args } = parseArgs({ options: { requests: { type: 'string', default: '200' }, warmup: { type: 'string', default: '150' }, top: { type: 'string', default: '40' } } });
const CONCURRENCY = 4;
const DOCUMENTS = ['pandoc-tables.docx', 'superdoc-advanced-text.docx', 'superdoc-h_f-normal-odd-even-firstpg.docx'].map((name) => readFileSync(path.join(CORPUS_DIR, 'docx', name)));

interface SamplingNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children?: SamplingNode[];
}

const config = loadConfig({ ...process.env, LOG_LEVEL: 'warn', RATE_LIMIT_MAX: '1000000', CONCURRENCY_PER_KEY: '1000', OFFICE_POOL_SIZE: '2', WORKER_THREADS: '1', PORT: '0' });
const app = await buildApp(config);
const key = generateApiKey();
await app.services.store.putApiKey(hashApiKey(key, config.pepper), { email: 'bench@example.com', createdAt: new Date().toISOString() });
await app.listen({ port: 0, host: '127.0.0.1' });
const { port } = app.server.address() as { port: number };
const uploads = DOCUMENTS.map((doc) => {
  const boundary = `docproc-bench-${Math.random().toString(16).slice(2)}`;
  const head = Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="input.docx"\r\nContent-Type: application/octet-stream\r\n\r\n`);
  return { body: Buffer.concat([head, doc, Buffer.from(`\r\n--${boundary}--\r\n`)]), contentType: `multipart/form-data; boundary=${boundary}` };
});
const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

const convert = (upload: (typeof uploads)[number]) =>
  new Promise<void>((resolve, reject) => {
    const request = http.request(`http://127.0.0.1:${port}/v1/convert?from=docx&to=pdf`, {
      method: 'POST',
      agent,
      headers: { authorization: `Bearer ${key}`, 'content-type': upload.contentType, 'content-length': upload.body.length },
    });
    request.once('error', reject);
    request.once('response', (response) => {
      response.resume();
      response.once('end', () => (response.statusCode === 200 ? resolve() : reject(new Error(`HTTP ${response.statusCode}`))));
    });
    request.end(upload.body);
  });

let next = 0;
async function run(count: number): Promise<number> {
  let started = 0;
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (started < count) {
      started++;
      await convert(uploads[next++ % uploads.length]!);
    }
  }));
  return started;
}

const frame = (node: SamplingNode) => `${node.callFrame.functionName || '(anonymous)'} ${node.callFrame.url.replace(/.*node_modules\//, '').replace(`${process.cwd()}/`, '')}:${node.callFrame.lineNumber}`;

try {
  await run(Number(args.warmup));
  const session = new Session();
  session.connect();
  await session.post('HeapProfiler.enable');
  await session.post('HeapProfiler.startSampling', { samplingInterval: 4096, includeObjectsCollectedByMajorGC: true, includeObjectsCollectedByMinorGC: true } as never);
  const done = await run(Number(args.requests));
  const { profile } = (await session.post('HeapProfiler.stopSampling')) as unknown as { profile: { head: SamplingNode } };
  session.disconnect();
  const bySite = new Map<string, number>();
  const walk = (node: SamplingNode, callers: string[]) => {
    const stack = [frame(node), ...callers];
    if (node.selfSize) bySite.set(stack.slice(0, 4).join(' <- '), (bySite.get(stack.slice(0, 4).join(' <- ')) ?? 0) + node.selfSize);
    for (const child of node.children ?? []) walk(child, stack);
  };
  walk(profile.head, []);
  const total = [...bySite.values()].reduce((a, b) => a + b, 0);
  console.log(`${done} requests: sampled main-thread allocation ${(total / done / 1024).toFixed(0)} KB per request; top sites (KB per request):`);
  for (const [site, bytes] of [...bySite].sort((a, b) => b[1] - a[1]).slice(0, Number(args.top))) console.log(`${(bytes / done / 1024).toFixed(1).padStart(7)}  ${site}`);
} finally {
  await app.close();
  agent.destroy();
}
