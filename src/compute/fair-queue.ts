/** Who a job is for, and whether anybody still waits for its result. */
export interface JobContext {
  /** The API key (or address) the job is for: capacity is shared fairly between callers. */
  caller: string;
  /** Aborted when the client has gone: a queued job is dropped. */
  signal?: AbortSignal;
}

export type Admission<T> = { admitted: true; shed?: T } | { admitted: false };

/**
 * A bounded wait queue shared fairly between callers: jobs leave round-robin by caller, so one
 * caller's hundred queued jobs delay another caller's first by at most one job per caller. When
 * the queue is full, a newcomer with fewer queued jobs than the busiest caller takes the place of
 * that caller's newest job (which is shed, i.e. refused as busy); a flood from one key therefore
 * never turns another key away while that key has less than its share.
 */
export class FairQueue<T> {
  private readonly byCaller = new Map<string, T[]>();
  /** Callers with queued jobs, in the order they are served. */
  private readonly rotation: string[] = [];
  private count = 0;

  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.count;
  }

  queuedFor(caller: string): number {
    return this.byCaller.get(caller)?.length ?? 0;
  }

  push(caller: string, item: T): Admission<T> {
    let shed: T | undefined;
    if (this.count >= this.capacity) {
      const busiest = this.busiestCaller();
      if (busiest === undefined || this.queuedFor(busiest) <= this.queuedFor(caller) + 1) return { admitted: false };
      shed = this.byCaller.get(busiest)!.pop();
      this.count--;
      this.forgetIfEmpty(busiest);
    }
    const jobs = this.byCaller.get(caller);
    if (jobs) jobs.push(item);
    else {
      this.byCaller.set(caller, [item]);
      this.rotation.push(caller);
    }
    this.count++;
    return shed === undefined ? { admitted: true } : { admitted: true, shed };
  }

  /** The next job: the oldest of the caller whose turn it is. */
  shift(): T | undefined {
    const caller = this.rotation.shift();
    if (caller === undefined) return undefined;
    const jobs = this.byCaller.get(caller)!;
    const item = jobs.shift()!;
    this.count--;
    if (jobs.length > 0) this.rotation.push(caller);
    else this.byCaller.delete(caller);
    return item;
  }

  remove(caller: string, item: T): boolean {
    const jobs = this.byCaller.get(caller);
    const at = jobs?.indexOf(item) ?? -1;
    if (!jobs || at < 0) return false;
    jobs.splice(at, 1);
    this.count--;
    this.forgetIfEmpty(caller);
    return true;
  }

  drain(): T[] {
    const all = [...this.byCaller.values()].flat();
    this.byCaller.clear();
    this.rotation.length = 0;
    this.count = 0;
    return all;
  }

  private busiestCaller(): string | undefined {
    let busiest: string | undefined;
    for (const [caller, jobs] of this.byCaller) if (busiest === undefined || jobs.length > this.queuedFor(busiest)) busiest = caller;
    return busiest;
  }

  private forgetIfEmpty(caller: string): void {
    if ((this.byCaller.get(caller)?.length ?? 0) > 0) return;
    this.byCaller.delete(caller);
    const at = this.rotation.indexOf(caller);
    if (at >= 0) this.rotation.splice(at, 1);
  }
}
