import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import PizZip from 'pizzip';
import { afterEach, describe, expect, it } from 'vitest';
import { convertDocxToPdf } from '../../../src/documents/docx-pdf/index.js';
import { DomainError } from '../../../src/errors/domain-error.js';
import { OfficePool, type RestartEvent } from '../../../src/office/index.js';
import { sweepLeftovers } from '../../../src/office/office-process.js';
import { instanceRoot } from '../../../src/temp/instance-root.js';
import { corpusDocx, flatText, isPdf } from './pdf-tools.js';
import { httpStatusOf } from '../../../src/http/error-status.js';

const SMALL = corpusDocx('pandoc-track_changes_insertion.docx');
const LARGE = corpusDocx('docx4j-headers_footers.docx');

const pools: OfficePool[] = [];
function newPool(options: ConstructorParameters<typeof OfficePool>[0]): OfficePool {
  const pool = new OfficePool(options);
  pools.push(pool);
  return pool;
}

afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
});

async function errorOf(promise: Promise<unknown>): Promise<DomainError> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(DomainError);
  return err as DomainError;
}

/** Live (non-zombie) processes of a process group. */
function liveMembers(pgid: number): { pid: number; command: string }[] {
  let out = '';
  // By process group (ps -g selects a session, which the group no longer is: it lives in the service's).
  try {
    out = execFileSync('ps', ['-e', '-o', 'pid=,pgid=,stat=,comm=']).toString();
  } catch {
    return [];
  }
  return out
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .filter((cols) => cols.length >= 4 && Number(cols[1]) === pgid && !cols[2]!.startsWith('Z'))
    .map((cols) => ({ pid: Number(cols[0]), command: cols[3]! }));
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('office pool supervision', () => {
  it('times out a job with 504, replaces the process and serves the next job', async () => {
    const pool = newPool({ size: 1 });
    const restarts: RestartEvent[] = [];
    pool.on('restart', (e) => restarts.push(e));
    await pool.start();
    const [before] = pool.processGroups();
    const err = await errorOf(pool.convertToPdf(LARGE, { timeoutMs: 100 }));
    expect(httpStatusOf(err)).toBe(504);
    expect(err.code).toBe('CONVERSION_TIMEOUT');
    expect(restarts.map((r) => r.reason)).toEqual(['timeout']);
    await waitFor(() => liveMembers(before!.pgid).length === 0, 2_000);
    const pdf = await pool.convertToPdf(SMALL);
    expect(flatText(pdf)).toContain('two exciting insertions');
    expect(pool.processGroups()[0]!.pgid).not.toBe(before!.pgid);
  });

  it('answers 5xx for a job whose soffice is killed, replaces it, and other jobs finish', async () => {
    const pool = newPool({ size: 2 });
    const restarts: RestartEvent[] = [];
    pool.on('restart', (e) => restarts.push(e));
    await pool.start();
    const victim = pool.convertToPdf(LARGE).then(() => undefined, (e: unknown) => e);
    await waitFor(() => pool.processGroups().some((g) => g.busy), 5_000);
    const busyGroup = pool.processGroups().find((g) => g.busy)!;
    const others = Array.from({ length: 4 }, () => pool.convertToPdf(SMALL));
    await new Promise((resolve) => setTimeout(resolve, 150));
    const office = liveMembers(busyGroup.pgid).find((p) => p.command === 'soffice.bin');
    expect(office).toBeDefined();
    process.kill(office!.pid, 'SIGKILL');
    const err = await victim;
    expect(err).toBeInstanceOf(DomainError);
    expect(httpStatusOf(err as DomainError)).toBe(502);
    expect((err as DomainError).code).toBe('CONVERSION_FAILED');
    expect((err as DomainError).message).not.toMatch(/soffice|uno|python/i);
    for (const pdf of await Promise.all(others)) expect(isPdf(pdf)).toBe(true);
    expect(restarts.some((r) => r.reason === 'crash')).toBe(true);
    await waitFor(() => pool.stats().up === 2, 60_000);
    expect(liveMembers(busyGroup.pgid)).toEqual([]);
  });

  it.each([
    ['jailed', true],
    ['unjailed', false],
  ])('a killed bridge (%s) takes its soffice.bin and oosplash down within seconds, and is replaced', async (_name, jail) => {
    const pool = newPool({ size: 1, jail });
    await pool.start();
    const group = pool.processGroups()[0]!;
    const members = liveMembers(group.pgid);
    const bridge = members.find((p) => p.command.startsWith('python'));
    expect(bridge, JSON.stringify(members)).toBeDefined();
    expect(members.some((p) => p.command === 'soffice.bin')).toBe(true);
    process.kill(bridge!.pid, 'SIGKILL');
    await waitFor(() => liveMembers(group.pgid).length === 0, 5_000);
    await waitFor(() => pool.stats().up === 1 && pool.processGroups()[0]?.pgid !== group.pgid, 60_000);
    expect(isPdf(await pool.convertToPdf(SMALL))).toBe(true);
  });

  it.each([
    ['jailed', true],
    ['unjailed', false],
  ])('an idle soffice.bin that dies (%s) takes its bridge down and is replaced before the next job meets it', async (_name, jail) => {
    const pool = newPool({ size: 1, jail });
    const restarts: RestartEvent[] = [];
    pool.on('restart', (e) => restarts.push(e));
    await pool.start();
    const group = pool.processGroups()[0]!;
    const office = liveMembers(group.pgid).find((p) => p.command === 'soffice.bin');
    expect(office).toBeDefined();
    process.kill(office!.pid, 'SIGKILL');
    // The bridge follows its office at once (the pool counts it down and starts another one) ...
    await waitFor(() => liveMembers(group.pgid).length === 0 && restarts.length > 0, 5_000);
    expect(restarts.map((r) => r.reason)).toEqual(['crash']);
    // ... so the next caller is served, never answered 502 by a bridge holding a dead office.
    expect(isPdf(await pool.convertToPdf(SMALL))).toBe(true);
    expect(pool.processGroups()[0]!.pgid).not.toBe(group.pgid);
  });

  it('recycles a process after maxJobsPerProcess jobs', async () => {
    const pool = newPool({ size: 1, maxJobsPerProcess: 2 });
    const restarts: RestartEvent[] = [];
    pool.on('restart', (e) => restarts.push(e));
    await pool.start();
    const first = pool.processGroups()[0]!.pgid;
    await pool.convertToPdf(SMALL);
    expect(pool.processGroups()[0]!.pgid).toBe(first);
    await pool.convertToPdf(SMALL);
    expect(restarts).toEqual([{ reason: 'max-jobs', slot: 0 }]);
    const third = await pool.convertToPdf(SMALL);
    expect(isPdf(third)).toBe(true);
    expect(pool.processGroups()[0]!.pgid).not.toBe(first);
    expect(liveMembers(first)).toEqual([]);
    expect(pool.stats()).toMatchObject({ size: 1, up: 1, restarts: 1, jobs: 3 });
  });

  it('recycles a process whose memory after a job passes recycleRssBytes', async () => {
    // Any running soffice is above one megabyte, so the first job's report triggers the recycle.
    const pool = newPool({ size: 1, recycleRssBytes: 1024 * 1024 });
    const restarts: RestartEvent[] = [];
    pool.on('restart', (e) => restarts.push(e));
    await pool.start();
    const first = pool.processGroups()[0]!.pgid;
    expect(isPdf(await pool.convertToPdf(SMALL))).toBe(true);
    expect(restarts).toEqual([{ reason: 'max-rss', slot: 0 }]);
    // The replacement serves the next job (and, being above the limit too, is recycled after it).
    expect(isPdf(await pool.convertToPdf(SMALL))).toBe(true);
    expect(restarts.map((r) => r.reason)).toEqual(['max-rss', 'max-rss']);
    expect(liveMembers(first)).toEqual([]);
  });

  it('refuses with 503 and Retry-After when the queue is full', async () => {
    const pool = newPool({ size: 1, maxQueue: 1 });
    await pool.start();
    const running = pool.convertToPdf(LARGE);
    const queued = pool.convertToPdf(SMALL);
    expect(pool.stats()).toMatchObject({ queued: 1 });
    const err = await errorOf(pool.convertToPdf(SMALL));
    expect(httpStatusOf(err)).toBe(503);
    expect(err.code).toBe('SERVICE_BUSY');
    expect(Number(err.retryAfterSeconds)).toBeGreaterThanOrEqual(1);
    expect(isPdf(await running)).toBe(true);
    expect(isPdf(await queued)).toBe(true);
  });

  it('leaves the job temp area empty after good, bad and timed-out jobs', async () => {
    const pool = newPool({ size: 1 });
    await pool.start();
    const [jobs] = pool.jobDirectories();
    if (!jobs) throw new Error('no office process is up');
    expect(isPdf(await convertDocxToPdf(pool, SMALL))).toBe(true);
    expect((await errorOf(convertDocxToPdf(pool, Buffer.from('plain text, not a document')))).code).toBe('INVALID_FILE_FORMAT');
    // A DOCX package whose main part is not a Word document at all.
    const broken = new PizZip(SMALL);
    broken.file('word/document.xml', Buffer.alloc(4096, 0xff));
    const brokenErr = await errorOf(convertDocxToPdf(pool, broken.generate({ type: 'nodebuffer' })));
    expect([422, 502]).toContain(httpStatusOf(brokenErr));
    // A process replaced after a failure takes its work directory (job area included) with it.
    const emptyOrGone = (dir: string) => !existsSync(dir) || readdirSync(dir, { recursive: true, withFileTypes: true }).every((e) => e.isDirectory());
    for (const dir of [jobs, ...pool.jobDirectories()]) expect(emptyOrGone(dir), dir).toBe(true);
    const beforeTimeout = pool.jobDirectories();
    expect(httpStatusOf(await errorOf(pool.convertToPdf(LARGE, { timeoutMs: 100 })))).toBe(504);
    for (const dir of [jobs, ...beforeTimeout, ...pool.jobDirectories()]) expect(emptyOrGone(dir), dir).toBe(true);
    // Inputs staged while waiting and PDFs moved out of the job directory are gone too, also for
    // jobs refused while queued.
    const busy = newPool({ size: 1, maxQueue: 1 });
    await busy.start();
    const burst = await Promise.allSettled(Array.from({ length: 4 }, () => busy.convertToPdf(SMALL)));
    expect(burst.map((r) => r.status)).toContain('rejected');
    await busy.close();
    // Files past syncIoMaxBytes go through the thread pool: same result, nothing left.
    const threaded = newPool({ size: 1, syncIoMaxBytes: 0 });
    await threaded.start();
    expect(isPdf(await convertDocxToPdf(threaded, SMALL))).toBe(true);
    expect(httpStatusOf(await errorOf(convertDocxToPdf(threaded, broken.generate({ type: 'nodebuffer' }))))).toBeGreaterThanOrEqual(400);
    await threaded.close();
    expect(readdirSync(instanceRoot()).filter((f) => /^(in|out)-/.test(f))).toEqual([]);
    await pool.close();
    expect(existsSync(jobs)).toBe(false);
  });

  it('close() leaves no office process and removes the profiles', async () => {
    const pool = newPool({ size: 2 });
    await pool.start();
    await pool.convertToPdf(SMALL);
    const groups = pool.processGroups().map((g) => g.pgid);
    expect(groups).toHaveLength(2);
    for (const pgid of groups) expect(liveMembers(pgid).map((p) => p.command)).toContain('soffice.bin');
    await pool.close();
    for (const pgid of groups) expect(liveMembers(pgid)).toEqual([]);
    expect(pool.ready).toBe(false);
    expect(httpStatusOf(await errorOf(pool.convertToPdf(SMALL)))).toBe(503);
  });

  it('reports not-ready and keeps retrying when LibreOffice cannot start', async () => {
    const pool = newPool({ size: 1, sofficePath: '/nonexistent/soffice', startTimeoutMs: 2_000, maxBackoffMs: 200 });
    const restarts: RestartEvent[] = [];
    pool.on('restart', (e) => restarts.push(e));
    await pool.start();
    expect(pool.ready).toBe(false);
    expect(pool.stats().up).toBe(0);
    await waitFor(() => restarts.length >= 2, 10_000);
    expect(restarts.every((r) => r.reason === 'start-failed')).toBe(true);
  });

  it.each(['SIGTERM', 'SIGKILL'] as const)('kills every office process when the Node process gets %s', async (signal) => {
    const script = `
      import { OfficePool } from './src/office/index.ts';
      const pool = new OfficePool({ size: 2 });
      await pool.start();
      console.log(JSON.stringify({ groups: pool.processGroups().map((g) => g.pgid), jobs: pool.jobDirectories(), pid: process.pid }));
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const { groups, jobs, pid } = await new Promise<{ groups: number[]; jobs: string[]; pid: number }>((resolve, reject) => {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const line = out.split('\n').find((l) => l.startsWith('{'));
        if (line) resolve(JSON.parse(line) as { groups: number[]; jobs: string[]; pid: number });
      });
      child.once('exit', () => reject(new Error(`child exited early: ${out}`)));
    });
    expect(groups).toHaveLength(2);
    for (const pgid of groups) expect(liveMembers(pgid).map((p) => p.command)).toContain('soffice.bin');
    child.kill(signal);
    await new Promise((resolve) => child.once('exit', resolve));
    await waitFor(() => groups.every((pgid) => liveMembers(pgid).length === 0), 10_000);
    // The bridges remove their work directories; whatever a SIGKILLed service still leaves behind,
    // the next start sweeps (owner pid gone; see the sweep test below).
    for (const dir of jobs) {
      if (signal === 'SIGKILL') {
        await waitFor(() => !existsSync(dir) || readdirSync(dir, { recursive: true, withFileTypes: true }).every((e) => e.isDirectory()), 5_000);
        await sweepLeftovers();
      }
      expect(existsSync(path.dirname(dir))).toBe(false);
    }
    await waitFor(() => readdirSync('/tmp').filter((f) => f.includes(`_docproc-${pid}-`)).length === 0, 5_000);
    expect(readdirSync('/tmp').filter((f) => f.includes(`_docproc-${pid}-`))).toEqual([]);
  });

  it('start-up sweeps work directories whose owner is gone, and never a live owner\'s', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const os = await import('node:os');
    // A pid that cannot be alive (above pid_max) and our own.
    const dead = mkdtempSync(path.join(os.tmpdir(), 'docproc-office-4194999-'));
    writeFileSync(path.join(dead, 'left-behind.docx'), 'x');
    const live = mkdtempSync(path.join(os.tmpdir(), `docproc-office-${process.pid}-`));
    const pool = newPool({ size: 1 });
    await pool.start();
    try {
      expect(existsSync(dead)).toBe(false);
      expect(existsSync(live)).toBe(true);
    } finally {
      await pool.close();
      rmSync(live, { recursive: true, force: true });
    }
  });
});
