import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../../support/global-setup.js';
import { makeLeaf, makeRoot, type TestIdentity } from '../../unit/verify/helpers/pki.js';

/**
 * NODE_ENV=production refuses every development fallback at start-up: the real process (tsx
 * src/server.ts, as `npm start` runs it) exits non-zero with one line naming the setting.
 */
const root = path.resolve(import.meta.dirname, '../../..');
let dir: string;
let p12File: string;
let expiredP12File: string;

function writeP12(identity: TestIdentity, password: string, file: string): string {
  writeFileSync(path.join(dir, 'cert.pem'), identity.pem);
  writeFileSync(path.join(dir, 'key.pem'), identity.keyPem);
  execFileSync('openssl', ['pkcs12', '-export', '-in', 'cert.pem', '-inkey', 'key.pem', '-passout', `pass:${password}`, '-out', file], { cwd: dir, stdio: 'ignore' });
  return file;
}

interface Run {
  code: number | null;
  stderr: string;
  stdout: string;
  /** Status of /v1/health/ready once the process listened (the process is then stopped), else 0. */
  ready: number;
}

/** Starts the service with `env` on top of a complete production setting; stops it once it answers. */
async function start(env: Record<string, string | undefined>): Promise<Run> {
  const port = await freePort();
  const base: Record<string, string | undefined> = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    OFFICE_ENABLED: 'false',
    WORKER_THREADS: '1',
    DATA_DIR: path.join(dir, 'data'),
    API_KEY_PEPPER: 'production-guard-pepper-0123456789',
    REDIS_URL: inject('redisUrl'),
    SMTP_URL: 'smtp://127.0.0.1:2525?tls=off',
    SIGNING_P12: p12File,
    SIGNING_P12_PASSWORD: 'guard-secret',
  };
  const merged = Object.fromEntries(Object.entries({ ...base, ...env }).filter(([, v]) => v !== undefined)) as Record<string, string>;
  const child = spawn(path.join(root, 'node_modules/.bin/tsx'), ['src/server.ts'], { cwd: root, env: merged, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  let ready = 0;
  const deadline = Date.now() + 150_000; // a loaded CI machine takes its time to load TypeScript
  while (Date.now() < deadline) {
    const outcome = await Promise.race([exited.then(() => 'exited' as const), new Promise((r) => setTimeout(r, 100)).then(() => 'running' as const)]);
    if (outcome === 'exited') break;
    ready = await fetch(`http://127.0.0.1:${port}/v1/health/ready`).then((r) => r.status, () => 0);
    if (ready) {
      child.kill('SIGTERM');
      break;
    }
  }
  if (!ready && child.exitCode === null) child.kill('SIGKILL');
  return { code: await exited, stdout, stderr, ready };
}

/** A refusal: exit 2 before listening, and exactly one line on stderr naming `setting`. */
function expectRefused(run: Run, setting: string, reason: RegExp) {
  expect(run.ready, run.stdout + run.stderr).toBe(0);
  expect(run.code).toBe(2);
  const lines = run.stderr.trim().split('\n');
  expect(lines, run.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^Invalid configuration: ${setting} `));
  expect(lines[0]).toMatch(reason);
}

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'docproc-guard-'));
  const ca = makeRoot();
  p12File = writeP12(makeLeaf(ca), 'guard-secret', path.join(dir, 'signing.p12'));
  expiredP12File = writeP12(makeLeaf(ca, { expired: true }), 'guard-secret', path.join(dir, 'expired.p12'));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('production start-up guard (NODE_ENV=production)', () => {
  it('starts with every production setting in place', async () => {
    const run = await start({});
    expect(run.ready, run.stdout + run.stderr).toBe(200);
    expect(run.stdout + run.stderr).not.toMatch(/development CA/);
  }, 200_000);

  it('refuses to start without REDIS_URL, SMTP_URL or SIGNING_P12, or with a SIGNING_P12 it cannot open or sign with', async () => {
    const garbage = path.join(dir, 'garbage.p12');
    writeFileSync(garbage, 'not a PKCS#12 archive');
    // Side by side: each process spends most of its time loading, not refusing.
    const [noRedis, noSmtp, noP12, wrongPassword, notP12, expired] = await Promise.all([
      start({ REDIS_URL: undefined }),
      start({ SMTP_URL: undefined }),
      start({ SIGNING_P12: undefined }),
      start({ SIGNING_P12_PASSWORD: 'wrong' }),
      start({ SIGNING_P12: garbage }),
      // Opens, but its certificate has expired: every signature would be refused.
      start({ SIGNING_P12: expiredP12File }),
    ]);
    expectRefused(noRedis, 'REDIS_URL', /must be set in production/);
    expectRefused(noSmtp, 'SMTP_URL', /must be set in production/);
    expectRefused(noP12, 'SIGNING_P12', /must be set in production.*ALLOW_DEVELOPMENT_SIGNING=true/);
    expectRefused(wrongPassword, 'SIGNING_P12', /SIGNING_P12_PASSWORD.*passphrase/);
    expectRefused(notP12, 'SIGNING_P12', /not a readable PKCS#12/);
    expectRefused(expired, 'SIGNING_P12', /expired/);
  }, 300_000);

  it('ALLOW_DEVELOPMENT_SIGNING=true starts without SIGNING_P12, and says so loudly', async () => {
    const run = await start({ SIGNING_P12: undefined, ALLOW_DEVELOPMENT_SIGNING: 'true' });
    expect(run.ready, run.stdout + run.stderr).toBe(200);
    const line = (run.stdout + run.stderr).split('\n').find((l) => l.includes('ALLOW_DEVELOPMENT_SIGNING'));
    expect(line).toBeDefined();
    expect(JSON.parse(line!).level).toBe(50); // error, not a warning lost among others
    expect(line).toMatch(/development CA/);
  }, 200_000);
});
