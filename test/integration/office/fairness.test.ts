import { afterAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../../src/errors/domain-error.js';
import { OfficePool, type JobEvent } from '../../../src/office/index.js';
import { corpusDocx } from './pdf-tools.js';
import { httpStatusOf } from '../../../src/http/error-status.js';
import { answerOf, answering } from '../../support/domain-error.js';

const SMALL = corpusDocx('pandoc-track_changes_insertion.docx');
const LARGE = corpusDocx('docx4j-headers_footers.docx');

const pool = new OfficePool({ size: 1, maxQueue: 3 });
afterAll(() => pool.close());

describe('office queue: fair between callers, abandoned jobs dropped, shed on shutdown', () => {
  it('serves callers round-robin, sheds the flooder’s newest job when full, and never runs a job whose caller has gone', async () => {
    await pool.start();
    const jobs: JobEvent[] = [];
    pool.on('job', (e) => jobs.push(e));
    const finished: string[] = [];
    const track = (name: string, p: Promise<unknown>) =>
      p.then(() => void finished.push(name), (e: unknown) => void finished.push(`${name}:${httpStatusOf(e as DomainError)}`));

    const all = [track('a0', pool.convertToPdf(LARGE, { job: { caller: 'a' } }))];
    await new Promise((r) => setTimeout(r, 50));
    for (const name of ['a1', 'a2', 'a3']) all.push(track(name, pool.convertToPdf(SMALL, { job: { caller: 'a' } })));
    const gone = new AbortController();
    all.push(track('b1', pool.convertToPdf(SMALL, { job: { caller: 'b', signal: gone.signal } })));
    gone.abort();
    all.push(track('c1', pool.convertToPdf(SMALL, { job: { caller: 'c' } })));
    await Promise.all(all);

    expect(finished).toEqual(expect.arrayContaining(['a3:503', 'b1:503']));
    expect(finished.filter((n) => !n.includes(':'))).toEqual(['a0', 'a1', 'c1', 'a2']);
    // b's job never reached LibreOffice: four conversions ran, one was refused as busy.
    expect(jobs.filter((j) => j.outcome === 'ok')).toHaveLength(4);
    expect(pool.stats().queued).toBe(0);
  }, 120_000);

  it('answers every queued job with 503 + Retry-After when its queue is shed (shutdown), the running one finishes', async () => {
    const running = pool.convertToPdf(LARGE, { job: { caller: 'a' } });
    await new Promise((r) => setTimeout(r, 50));
    const queued = [1, 2].map(() => pool.convertToPdf(SMALL, { job: { caller: "b" } }).then(() => undefined, (e: unknown) => e as DomainError));
    pool.shedQueued();
    for (const err of await Promise.all(queued)) {
      expect(err).toMatchObject(answering(503, 'SERVICE_BUSY'));
      expect(answerOf(err)).toMatchObject({ retryAfter: '1' });
    }
    expect((await running).subarray(0, 5).toString()).toBe('%PDF-');
  }, 120_000);
});
