import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkerPool } from '../../../src/compute/worker-pool.js';
import { AppError } from '../../../src/errors/app-error.js';

// The deadline counts from submission; 15 s leaves room (even on a loaded machine) for a fresh thread to load the tasks.
const pool = new WorkerPool({ threads: 1, maxQueue: 1, taskTimeoutMs: 15_000 });
beforeAll(() => pool.run('ping', { at: 0 }));
afterAll(() => pool.close());

describe('worker pool', () => {
  it('stops a runaway task at its deadline with 504, and the pool goes on', async () => {
    const started = Date.now();
    const err = await pool.run('spin', { ms: 120_000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    expect((err as AppError).status).toBe(504);
    expect((err as AppError).code).toBe('PROCESSING_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(40_000);
    expect(await pool.run('ping', { at: 7 })).toMatchObject({ at: 7 });
  });

});
