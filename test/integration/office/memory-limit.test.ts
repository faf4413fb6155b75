import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../../src/errors/domain-error.js';
import { OfficePool, type RestartEvent } from '../../../src/office/index.js';
import { GroupMemory, processGroupMembers } from '../../../src/office/memory-watch.js';
import { largeImagesDocx } from '../../support/office/large-images.js';
import { corpusDocx } from './pdf-tools.js';
import { httpStatusOf } from '../../../src/http/error-status.js';

/**
 * Issue 26 item 8: an office process has a hard memory limit while it works. Four 10 000² PNGs
 * (1.2 MB of DOCX, inside every input limit) took one soffice to ~1.3 GB; with a 400 MB limit the
 * job is stopped within a sample of crossing it, refused 422 DOCUMENT_TOO_COMPLEX (not 502), and the
 * process replaced.
 */
const LIMIT_MB = 400;
/** One sample period of growth at the fastest rate measured (~1 GB/s when LibreOffice decodes an image). */
const OVERSHOOT_MB = 150;

let pool: OfficePool;
let heavy: Buffer;

beforeAll(async () => {
  heavy = await largeImagesDocx(4, 10_000);
  pool = new OfficePool({ size: 1, maxRssBytes: LIMIT_MB * 2 ** 20, handleSignals: false });
  await pool.start();
}, 120_000);

afterAll(async () => {
  await pool?.close();
});

async function waitUntilUp(): Promise<void> {
  const until = Date.now() + 60_000;
  while (pool.stats().up < 1) {
    if (Date.now() > until) throw new Error('the office process was not replaced');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('office memory limit', () => {
  it('gives every office process an RLIMIT_DATA above the watched limit', () => {
    const [group] = pool.processGroups();
    const limits = processGroupMembers(group!.pgid).map((pid) => readFileSync(`/proc/${pid}/limits`, 'utf8').match(/^Max data size\s+(\d+)\s+(\d+)/m));
    expect(limits.length).toBeGreaterThanOrEqual(3); // bwrap, python bridge, soffice(.bin)
    for (const limit of limits) expect(Number(limit![1])).toBe(LIMIT_MB * 2 ** 20 * 2);
  });

  it('stops a job past the limit with 422 DOCUMENT_TOO_COMPLEX, replaces the process, and serves the next job', async () => {
    expect(heavy.length).toBeLessThan(2 * 2 ** 20);
    const restarts: RestartEvent[] = [];
    pool.on('restart', (event) => restarts.push(event));
    const [group] = pool.processGroups();
    // Watched independently of the pool: the group's memory never goes far past the limit.
    const memory = new GroupMemory(group!.pgid);
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, memory.rss())), 20);
    const started = Date.now();
    const err = await pool.convertToPdf(heavy).then(() => undefined, (e: unknown) => e);
    clearInterval(sampler);
    expect(err).toBeInstanceOf(DomainError);
    expect(httpStatusOf(err as DomainError)).toBe(422);
    expect((err as DomainError).code).toBe('DOCUMENT_TOO_COMPLEX');
    expect((err as DomainError).extensions).toEqual({ limit: { name: 'convert.officeMemoryMb', max: LIMIT_MB } });
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(peak / 2 ** 20).toBeGreaterThan(LIMIT_MB * 0.9);
    expect(peak / 2 ** 20).toBeLessThan(LIMIT_MB + OVERSHOOT_MB);
    expect(restarts.map((r) => r.reason)).toEqual(['max-rss']);
    // Nothing of the stopped process is left (kill() waited for the bridge; its children follow at once).
    const until = Date.now() + 3_000;
    while (processGroupMembers(group!.pgid).length > 0 && Date.now() < until) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(processGroupMembers(group!.pgid)).toEqual([]);
    await waitUntilUp();
    const pdf = await pool.convertToPdf(corpusDocx('pandoc-track_changes_insertion.docx'));
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
  }, 120_000);
});
