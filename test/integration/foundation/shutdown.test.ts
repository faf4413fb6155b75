import { afterEach, describe, expect, inject, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { generateApiKey, hashApiKey } from '../../../src/accounts/api-keys.js';
import { RedisStore } from '../../../src/store/redis-store.js';
import { freePort } from '../../support/global-setup.js';
import { multipart } from '../../support/api-key.js';

const root = path.resolve(import.meta.dirname, '../../..');
const pepper = 'shutdown-test-pepper-0123';

/** soffice processes started by `pid` (its descendants, however deep), zombies excluded. */
function officeProcessesOf(pid: number): string[] {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,stat=,comm=']).toString().trim().split('\n').map((l) => l.trim().split(/\s+/));
  const family = new Set([pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const [p, pp] of rows) if (family.has(Number(pp)) && !family.has(Number(p))) (family.add(Number(p)), (grew = true));
  }
  return rows.filter(([p, , stat, comm]) => family.has(Number(p)) && comm.startsWith('soffice') && !stat.startsWith('Z')).map((r) => r.join(' '));
}

/** Servers of the current test, killed after it whatever happened (a test that timed out never reaches its finally). */
const started = new Set<ChildProcess>();
afterEach(() => {
  for (const server of started) server.kill('SIGKILL');
  started.clear();
});

async function startServer(env: Record<string, string> = {}) {
  const port = await freePort();
  const redisUrl = inject('redisUrl');
  const store = new RedisStore(redisUrl);
  await store.connected();
  const key = generateApiKey();
  await store.putApiKey(hashApiKey(key, pepper), { email: 'shutdown@example.com', createdAt: new Date().toISOString() });
  await store.close();

  // node itself with tsx's loader (not the tsx CLI, which runs the server as its child): the pid is
  // the server's, so SIGTERM reaches it directly and SIGKILL after a failed test leaves nothing behind.
  const server = spawn(process.execPath, ['--import', 'tsx', 'src/server.ts'], {
    cwd: root,
    env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', REDIS_URL: redisUrl, API_KEY_PEPPER: pepper, OFFICE_POOL_SIZE: '1', LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  server.stdout.on('data', (d) => (log += d));
  server.stderr.on('data', (d) => (log += d));
  started.add(server);
  const exited = new Promise<number | null>((resolve) => server.on('exit', (code) => resolve(code)));
  const base = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 300; i++) {
    const ready = await fetch(`${base}/v1/health/ready`).then((r) => r.status, () => 0);
    if (ready === 200) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  return { server, base, key, exited, log: () => log };
}

const corpusFile = (name: string) => readFileSync(path.join(root, '../shared/corpus/docx', name));

interface Answer {
  status: number;
  retryAfter?: string;
  body: string;
}

/** One connection per request (as separate clients would), the answer or the socket error. */
async function convert(base: string, key: string, data: Buffer): Promise<Answer> {
  const body = await multipart({ file: { data, filename: 'doc.docx' } });
  return new Promise((resolve) => {
    const req = http.request(`${base}/v1/convert`, { method: 'POST', agent: false, headers: { authorization: `Bearer ${key}`, 'content-type': body.contentType, 'content-length': body.payload.length } }, (res) => {
      let text = '';
      res.setEncoding('latin1');
      res.on('data', (d) => (text += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'] as string | undefined, body: text }));
      res.on('error', (err) => resolve({ status: 0, body: String(err) }));
    });
    req.on('error', (err) => resolve({ status: 0, body: String(err) }));
    req.end(body.payload);
  });
}

describe('graceful shutdown', () => {
  it('finishes the in-flight conversion on SIGTERM, then exits 0 leaving no office process', async () => {
    const { server, base, key, exited, log } = await startServer();
    try {
      const body = await multipart({ file: { data: readFileSync(path.join(root, '../shared/corpus/docx/docx4j-headers_footers.docx')), filename: 'long.docx' } });
      const inFlight = fetch(`${base}/v1/convert`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': body.contentType }, body: body.payload });
      await new Promise((r) => setTimeout(r, 400));
      expect(officeProcessesOf(server.pid!).length).toBeGreaterThan(0);
      server.kill('SIGTERM');

      const res = await inFlight;
      expect(res.status).toBe(200);
      expect(Buffer.from(await res.arrayBuffer()).subarray(0, 5).toString()).toBe('%PDF-');
      expect(await exited, log()).toBe(0);
      const refused = await fetch(`${base}/v1/health`).then((r) => r.status, () => 'refused');
      expect(refused).toBe('refused');
      await new Promise((r) => setTimeout(r, 300));
      expect(officeProcessesOf(server.pid!)).toEqual([]);
    } finally {
      server.kill('SIGKILL');
    }
  });

  it('answers every request: queued ones near the end of the grace period and running ones at its end get 503 + Retry-After, none is cut off', async () => {
    const { server, base, key, exited, log } = await startServer({ SHUTDOWN_GRACE_MS: '3000' });
    try {
      const started = [convert(base, key, corpusFile('docx4j-headers_footers.docx'))];
      await new Promise((r) => setTimeout(r, 200));
      for (let i = 0; i < 8; i++) started.push(convert(base, key, corpusFile('docx4j-headers_footers.docx')));
      await new Promise((r) => setTimeout(r, 200));
      server.kill('SIGTERM');
      const answers = await Promise.all(started);
      for (const a of answers) expect([200, 503], a.body.slice(0, 200)).toContain(a.status);
      const shed = answers.filter((a) => a.status === 503);
      expect(shed.length).toBeGreaterThan(0);
      for (const a of shed) {
        expect(Number(a.retryAfter)).toBeGreaterThanOrEqual(1);
        expect(JSON.parse(a.body)).toMatchObject({ code: 'SERVICE_BUSY' });
      }
      expect(answers[0]!.status).toBe(200);
      // 1 when a conversion was still running at the end of the grace period (it was stopped and answered).
      expect([0, 1], log()).toContain(await exited);
    } finally {
      server.kill('SIGKILL');
    }
  }, 60_000);

  it('serves a request on a connection accepted before SIGTERM whose request arrives just after, closing that connection', async () => {
    const { server, base, exited } = await startServer({ OFFICE_ENABLED: 'false' });
    try {
      const socket = net.connect(Number(new URL(base).port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      await new Promise((r) => setTimeout(r, 200)); // accepted by the server, no request yet
      let answer = '';
      socket.on('data', (d: Buffer) => (answer += d.toString('latin1')));
      const ended = new Promise<string | undefined>((resolve) => {
        socket.once('error', (err: NodeJS.ErrnoException) => resolve(err.code));
        socket.once('close', () => resolve(undefined));
      });
      server.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 120));
      socket.write('GET /v1/health HTTP/1.1\r\nHost: docproc\r\n\r\n');
      expect(await ended).toBeUndefined();
      expect(answer).toMatch(/^HTTP\/1\.1 200 /);
      expect(answer).toMatch(/\r\nconnection: close\r\n/i);
      expect(await exited).toBe(0);
    } finally {
      server.kill('SIGKILL');
    }
  }, 60_000);
});
