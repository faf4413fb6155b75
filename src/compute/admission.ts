import { callerGone } from '../errors/domain-error.js';
import { FairQueue, type JobContext } from './fair-queue.js';

/** Why a job was not admitted; each pool words its own 503 (with its Retry-After) for each. */
export type Refusal = 'full' | 'shed' | 'waited-too-long';

export interface AdmissionOptions<R> {
  /** Jobs allowed to wait; beyond it the busiest caller's newest job is shed or the newcomer refused (FairQueue). */
  maxQueue: number;
  /** How long a job may wait for capacity before it is refused. */
  queueWaitMs: number;
  /** Takes one unit of capacity (a thread, an office process) if one is free, or answers undefined. */
  take: () => R | undefined;
  /** The error a job refused for `reason` gets (503 SERVICE_BUSY with a Retry-After). */
  refusal: (reason: Refusal) => Error;
  /** Told of each job refused because the queue was full or shed for another caller's (not of waits that ran out). */
  onBusy?: () => void;
}

interface Waiter<R> {
  grant: (capacity: R) => void;
  refuse: (err: Error) => void;
}

/**
 * Admission to a pool of scarce capacity, shared by the worker pool (threads) and the office pool
 * (LibreOffice processes): a job takes free capacity at once when nobody waits, otherwise it waits
 * in a FairQueue (round-robin by caller, shedding the busiest caller's newest job when full) and
 * leaves it when its client goes away (499 CALLER_GONE, never run) or it has waited queueWaitMs
 * (503 + Retry-After). Whoever gives capacity back calls dispatch().
 */
export class Admission<R> {
  private readonly queue: FairQueue<Waiter<R>>;

  constructor(private readonly options: AdmissionOptions<R>) {
    this.queue = new FairQueue(options.maxQueue);
  }

  get queued(): number {
    return this.queue.size;
  }

  /** Resolves with the capacity the job may use; the caller gives it back and then calls dispatch(). */
  admit(job?: JobContext): Promise<R> {
    if (job?.signal?.aborted) return Promise.reject(callerGone());
    if (this.queue.size === 0) {
      const free = this.options.take();
      if (free !== undefined) return Promise.resolve(free);
    }
    const caller = job?.caller ?? '';
    return new Promise<R>((resolve, reject) => {
      const leave = () => {
        clearTimeout(timer);
        job?.signal?.removeEventListener('abort', onGone);
      };
      const waiter: Waiter<R> = {
        grant: (capacity) => {
          leave();
          resolve(capacity);
        },
        refuse: (err) => {
          leave();
          reject(err);
        },
      };
      const onGone = () => {
        if (this.queue.remove(caller, waiter)) waiter.refuse(callerGone());
      };
      const timer = setTimeout(() => {
        if (this.queue.remove(caller, waiter)) waiter.refuse(this.options.refusal('waited-too-long'));
      }, this.options.queueWaitMs);
      const admission = this.queue.push(caller, waiter);
      if (!admission.admitted) {
        clearTimeout(timer);
        this.options.onBusy?.();
        reject(this.options.refusal('full'));
        return;
      }
      if (admission.shed) {
        this.options.onBusy?.();
        admission.shed.refuse(this.options.refusal('shed'));
      }
      job?.signal?.addEventListener('abort', onGone, { once: true });
    });
  }

  /** Hands free capacity to waiting jobs, in the queue's fair order, while there is some. */
  dispatch(): void {
    while (this.queue.size > 0) {
      const free = this.options.take();
      if (free === undefined) return;
      this.queue.shift()!.grant(free);
    }
  }

  /** Refuses every waiting job with `err(…)` (shutdown: they would not run in time). */
  shedAll(err: () => Error): void {
    for (const waiter of this.queue.drain()) waiter.refuse(err());
  }
}
