import { describe, expect, it } from 'vitest';
import type { WorkerPool } from '../../../src/compute/worker-pool.js';
import { documentWorkers } from '../../../src/operations/document-workers.js';
import * as tasks from '../../../workers/index.js';

describe('the typed worker facade (src/operations/document-workers.ts)', () => {
  it('calls each task by a name workers/index.ts exports, passing input and job through', async () => {
    const calls: Array<{ task: string; input: unknown; job: unknown }> = [];
    const pool = { run: async (task: string, input: unknown, job: unknown) => (calls.push({ task, input, job }), { task }) } as unknown as WorkerPool;
    const facade = documentWorkers(pool);
    const job = { caller: 'k' };
    for (const call of Object.values(facade)) await (call as (input: unknown, job: unknown) => Promise<unknown>)({ marker: 1 }, job);
    expect(calls.length).toBe(Object.keys(facade).length);
    for (const { task, input, job: passed } of calls) {
      expect(typeof (tasks as Record<string, unknown>)[task], task).toBe('function');
      expect(input).toEqual({ marker: 1 });
      expect(passed).toBe(job);
    }
    expect(new Set(calls.map((c) => c.task)).size).toBe(calls.length);
  });
});
