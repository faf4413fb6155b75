import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/**
 * Integration tests talk to a real Redis: REDIS_URL when it answers, otherwise a
 * redis-server started here on a free loopback port (and stopped at the end).
 * Tests read the address with inject('redisUrl').
 */
let redis: ChildProcess | undefined;
let redisDir: string | undefined;

function ping(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host }, () => socket.write('PING\r\n'));
    socket.setTimeout(500, () => { socket.destroy(); resolve(false); });
    socket.on('data', (d) => { socket.destroy(); resolve(d.toString().startsWith('+PONG')); });
    socket.on('error', () => resolve(false));
  });
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

/** `persistent`: an append-only file synced on every write, so a SIGKILLed server comes back with its keys. */
export async function startRedisServer({ persistent = false } = {}): Promise<{ url: string; port: number; child: ChildProcess; dir: string }> {
  const port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'docproc-redis-'));
  const persistence = persistent ? ['--appendonly', 'yes', '--appendfsync', 'always'] : ['--appendonly', 'no'];
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', ...persistence, '--dir', dir], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    if (await ping(port)) return { url: `redis://127.0.0.1:${port}`, port, child, dir };
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill('SIGKILL');
  throw new Error('redis-server did not start (is it installed? .ci/run installs it)');
}

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

export async function setup(project: { provide: (key: 'redisUrl', value: string) => void }) {
  const given = process.env.REDIS_URL;
  if (given) {
    const u = new URL(given);
    if (await ping(Number(u.port || 6379), u.hostname)) {
      project.provide('redisUrl', given);
      return;
    }
  }
  const started = await startRedisServer();
  redis = started.child;
  redisDir = started.dir;
  project.provide('redisUrl', started.url);
}

export async function teardown() {
  redis?.kill('SIGTERM');
  if (redisDir) rmSync(redisDir, { recursive: true, force: true });
}
