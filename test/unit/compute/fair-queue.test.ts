import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FairQueue } from '../../../src/compute/fair-queue.js';

describe('FairQueue', () => {
  it('serves callers round-robin, each caller in its own order', () => {
    const q = new FairQueue<string>(10);
    for (const item of ['a1', 'a2', 'a3', 'a4']) q.push('a', item);
    q.push('b', 'b1');
    q.push('c', 'c1');
    q.push('b', 'b2');
    expect(Array.from({ length: 7 }, () => q.shift())).toEqual(['a1', 'b1', 'c1', 'a2', 'b2', 'a3', 'a4']);
    expect(q.shift()).toBeUndefined();
  });

  it('when full, a newcomer takes the place of the busiest caller’s newest job; a flooder is refused', () => {
    const q = new FairQueue<string>(3);
    for (const item of ['a1', 'a2', 'a3']) expect(q.push('a', item)).toEqual({ admitted: true });
    expect(q.push('a', 'a4')).toEqual({ admitted: false });
    expect(q.push('b', 'b1')).toEqual({ admitted: true, shed: 'a3' });
    // a has 2, b has 1: b's second would leave them even (1 vs 2 → 2 vs 1): refused, no churn.
    expect(q.push('b', 'b2')).toEqual({ admitted: false });
    expect(q.size).toBe(3);
  });

  it('remove and drain', () => {
    const q = new FairQueue<string>(5);
    q.push('a', 'a1');
    q.push('b', 'b1');
    expect(q.remove('a', 'a1')).toBe(true);
    expect(q.remove('a', 'a1')).toBe(false);
    expect(q.shift()).toBe('b1');
    q.push('c', 'c1');
    expect(q.drain()).toEqual(['c1']);
    expect(q.size).toBe(0);
  });

  it('never holds more than its capacity, never loses or duplicates a job, and admits a caller below its share', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('push' as const), caller: fc.constantFrom('a', 'b', 'c', 'd') }),
      fc.record({ kind: fc.constant('shift' as const) }),
      fc.record({ kind: fc.constant('remove' as const), index: fc.nat(50) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.array(op, { maxLength: 200 }), (capacity, ops) => {
        const q = new FairQueue<number>(capacity);
        const inside = new Map<number, string>();
        let next = 0;
        for (const o of ops) {
          if (o.kind === 'push') {
            const counts = new Map<string, number>();
            for (const c of inside.values()) counts.set(c, (counts.get(c) ?? 0) + 1);
            const busiest = Math.max(0, ...counts.values());
            const mine = counts.get(o.caller) ?? 0;
            const id = next++;
            const result = q.push(o.caller, id);
            if (inside.size < capacity || busiest > mine + 1) expect(result.admitted).toBe(true);
            if (result.admitted) {
              inside.set(id, o.caller);
              if (result.shed !== undefined) {
                expect(inside.has(result.shed)).toBe(true);
                inside.delete(result.shed);
              }
            }
          } else if (o.kind === 'shift') {
            const item = q.shift();
            if (item === undefined) expect(inside.size).toBe(0);
            else expect(inside.delete(item)).toBe(true);
          } else {
            const ids = [...inside.keys()];
            if (ids.length > 0) {
              const id = ids[o.index % ids.length]!;
              expect(q.remove(inside.get(id)!, id)).toBe(true);
              inside.delete(id);
            }
          }
          expect(q.size).toBe(inside.size);
          expect(q.size).toBeLessThanOrEqual(capacity);
        }
      }),
      { seed: 20261124, numRuns: 300 },
    );
  });
});
