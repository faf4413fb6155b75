import { describe, expect, it } from 'vitest';
import { Admission, type Refusal } from '../../../src/compute/admission.js';

/** A pool of `units` numbered capacities, handed out by the Admission, given back by release(). */
function pool(units: number, options: { maxQueue?: number; queueWaitMs?: number } = {}) {
  const free = Array.from({ length: units }, (_, i) => i);
  const refusals: Refusal[] = [];
  let busy = 0;
  const admission = new Admission<number>({
    maxQueue: options.maxQueue ?? 10,
    queueWaitMs: options.queueWaitMs ?? 10_000,
    take: () => free.shift(),
    refusal: (reason) => {
      refusals.push(reason);
      return Object.assign(new Error(reason), { reason });
    },
    onBusy: () => busy++,
  });
  const release = (unit: number) => {
    free.push(unit);
    admission.dispatch();
  };
  return { admission, release, refusals, busyCount: () => busy };
}

const settle = <T>(p: Promise<T>) => p.then((value) => ({ value }), (error: Error) => ({ error }));

describe('Admission (shared by the worker pool and the office pool)', () => {
  it('takes free capacity at once, then queues, and hands capacity back round-robin by caller', async () => {
    const { admission, release } = pool(1);
    const first = await admission.admit({ caller: 'a' });
    const order: string[] = [];
    const waits = ['a1', 'a2', 'b1'].map((name) => admission.admit({ caller: name[0]! }).then((unit) => (order.push(name), unit)));
    expect(admission.queued).toBe(3);
    release(first);
    release(await waits[0]!);
    release(await waits[2]!);
    await waits[1];
    expect(order).toEqual(['a1', 'b1', 'a2']);
    expect(admission.queued).toBe(0);
  });

  it('a job whose caller has gone leaves the queue (never admitted); one already gone is refused at once', async () => {
    const { admission, release } = pool(1);
    const unit = await admission.admit();
    const gone = new AbortController();
    const waiting = settle(admission.admit({ caller: 'a', signal: gone.signal }));
    gone.abort();
    expect((await waiting as { error: Error }).error.message).toMatch(/closed the request/);
    expect(admission.queued).toBe(0);
    await expect(admission.admit({ caller: 'a', signal: gone.signal })).rejects.toThrow(/closed the request/);
    release(unit);
    expect(await admission.admit()).toBe(unit);
  });

  it('a job that waits longer than queueWaitMs is refused as waited-too-long and leaves the queue', async () => {
    const { admission, refusals } = pool(1, { queueWaitMs: 30 });
    await admission.admit();
    const waited = await settle(admission.admit({ caller: 'a' }));
    expect((waited as { error: Error }).error.message).toBe('waited-too-long');
    expect(refusals).toEqual(['waited-too-long']);
    expect(admission.queued).toBe(0);
  });

  it('when full, a flooder is refused and another caller sheds the flooder’s newest job (both counted busy)', async () => {
    const { admission, refusals, busyCount } = pool(1, { maxQueue: 2 });
    await admission.admit();
    const a1 = settle(admission.admit({ caller: 'a' }));
    const a2 = settle(admission.admit({ caller: 'a' }));
    await expect(admission.admit({ caller: 'a' })).rejects.toThrow('full');
    void admission.admit({ caller: 'b' }).catch(() => undefined);
    expect((await a2 as { error: Error }).error.message).toBe('shed');
    expect(refusals).toEqual(['full', 'shed']);
    expect(busyCount()).toBe(2);
    admission.shedAll(() => new Error('shutting down'));
    expect((await a1 as { error: Error }).error.message).toBe('shutting down');
    expect(admission.queued).toBe(0);
  });
});
