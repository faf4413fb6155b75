import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkerPool } from '../../../src/compute/worker-pool.js';
import { DomainError } from '../../../src/errors/domain-error.js';
import { httpStatusOf } from '../../../src/http/error-status.js';
import { answering } from '../../support/domain-error.js';

// The deadline counts from the task's start; 15 s leaves room (even on a loaded machine) for a fresh thread to load the tasks.
const pool = new WorkerPool({ threads: 1, maxQueue: 1, taskTimeoutMs: 15_000 });
beforeAll(() => pool.run('ping', { at: 0 }));
afterAll(() => pool.close());

describe('worker pool', () => {
  it('stops a runaway task at its deadline with 504, and the pool goes on', async () => {
    const started = Date.now();
    const err = await pool.run('spin', { ms: 120_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DomainError);
    expect(httpStatusOf(err as DomainError)).toBe(504);
    expect((err as DomainError).code).toBe('PROCESSING_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(40_000);
    expect(await pool.run('ping', { at: 7 })).toMatchObject({ at: 7 });
  });

  it('a task that exhausts its heap ends only its own thread: 422 DOCUMENT_TOO_COMPLEX, a concurrent task finishes, the pool goes on', async () => {
    const small = new WorkerPool({ threads: 2, maxQueue: 4, taskTimeoutMs: 30_000, memoryMb: 48 });
    try {
      await Promise.all([small.run('ping', { at: 0 }), small.run('ping', { at: 0 })]);
      const [hungry, neighbour] = await Promise.all([
        small.run('markdownToDocx', { source: markdownTable(400, 60), limits: { maxNestingDepth: 50 } }).catch((e: unknown) => e),
        small.run<unknown, { docx: Uint8Array }>('markdownToDocx', { source: markdownTable(3, 3), limits: { maxNestingDepth: 50 } }),
      ]);
      expect(hungry).toBeInstanceOf(DomainError);
      expect(httpStatusOf(hungry as DomainError)).toBe(422);
      expect((hungry as DomainError).code).toBe('DOCUMENT_TOO_COMPLEX');
      expect(Buffer.from(neighbour.docx).subarray(0, 2).toString()).toBe('PK');
      expect(await small.run('ping', { at: 9 })).toMatchObject({ at: 9 });
      expect(small.stats.threads).toBeGreaterThan(0);
    } finally {
      await small.close();
    }
  });
});

describe('worker pool fairness and abandoned tasks', () => {
  it('serves a second caller before a flooder’s backlog, sheds the flooder’s newest task when full, and drops a task whose client went away', async () => {
    const fair = new WorkerPool({ threads: 1, maxQueue: 4, taskTimeoutMs: 30_000 });
    try {
      await fair.run('ping', { at: 0 });
      const finished: string[] = [];
      const track = (name: string, p: Promise<unknown>) => p.then(() => finished.push(name), (e: unknown) => { finished.push(`${name}:${httpStatusOf(e as DomainError)}`); });
      const running = track('a0', fair.run('spin', { ms: 600 }, { caller: 'a' }));
      const floods = ['a1', 'a2', 'a3', 'a4'].map((name) => track(name, fair.run('spin', { ms: 50 }, { caller: 'a' })));
      const gone = new AbortController();
      // The queue is full of a's tasks: b's first takes the place of a's newest (a4 → 503), c's the next (a3).
      const b = track('b1', fair.run('spin', { ms: 50 }, { caller: 'b', signal: gone.signal }));
      const c = track('c1', fair.run('spin', { ms: 50 }, { caller: 'c' }));
      gone.abort();
      await Promise.all([running, ...floods, b, c]);
      expect(finished).toEqual(expect.arrayContaining(['a4:503', 'a3:503', 'b1:503']));
      // Round-robin: c's task runs before a's second queued one; b's never ran.
      expect(finished.filter((n) => !n.includes(':'))).toEqual(['a0', 'a1', 'c1', 'a2']);
      expect(fair.stats.queued).toBe(0);
    } finally {
      await fair.close();
    }
  });

  it('a task queued behind a slow one gets its whole deadline from its own start; waiting has its own limit (503 + Retry-After)', async () => {
    // Deadlines long enough for a fresh thread to load the tasks on a loaded machine (the first ping).
    const queued = new WorkerPool({ threads: 1, maxQueue: 5, taskTimeoutMs: 20_000, queueWaitMs: 60_000 });
    try {
      await queued.run('ping', { at: 0 });
      // 12 s of queue then 12 s of work: within the 20 s task deadline, since the wait is not charged to it.
      const first = queued.run('spin', { ms: 12_000 });
      await new Promise((r) => setTimeout(r, 100));
      expect(await queued.run('spin', { ms: 12_000 })).toEqual({ done: true });
      await first;
      const impatient = new WorkerPool({ threads: 1, maxQueue: 5, taskTimeoutMs: 30_000, queueWaitMs: 500 });
      try {
        await impatient.run('ping', { at: 0 });
        const busy = impatient.run('spin', { ms: 3_000 });
        await new Promise((r) => setTimeout(r, 100));
        const started = Date.now();
        const err = await impatient.run('ping', { at: 1 }).catch((e: unknown) => e as DomainError);
        expect(err).toMatchObject(answering(503, 'SERVICE_BUSY'));
        expect(Number((err as DomainError).retryAfterSeconds)).toBeGreaterThan(0);
        expect(Date.now() - started).toBeLessThan(2_000);
        await busy;
      } finally {
        await impatient.close();
      }
    } finally {
      await queued.close();
    }
  }, 120_000);

  it('answers every waiting task with 503 + Retry-After when asked to shed its queue (shutdown)', async () => {
    const pool2 = new WorkerPool({ threads: 1, maxQueue: 5, taskTimeoutMs: 30_000 });
    try {
      const running = pool2.run('spin', { ms: 300 });
      const waiting = [1, 2, 3].map(() => pool2.run('spin', { ms: 10 }).catch((e: unknown) => e as DomainError));
      pool2.shedQueued();
      for (const err of await Promise.all(waiting)) {
        expect(err).toMatchObject(answering(503, 'SERVICE_BUSY'));
        expect((err as DomainError).retryAfterSeconds).toBeDefined();
      }
      await running;
    } finally {
      await pool2.close();
    }
  });
});

function markdownTable(rows: number, cols: number): Uint8Array {
  const lines = [`|${Array.from({ length: cols }, (_, i) => `h${i}`).join('|')}|`, `|${'-|'.repeat(cols)}`];
  for (let r = 0; r < rows; r++) lines.push(`|${Array.from({ length: cols }, (_, i) => `c${r}x${i}`).join('|')}|`);
  return new TextEncoder().encode(lines.join('\n'));
}
