import type { TransferListItem } from 'node:worker_threads';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { DomainError, ErrorCode, serviceBusy } from '../errors/domain-error.js';
import { Admission, type Refusal } from './admission.js';
import { DEFAULT_BACKGROUND_NICE } from './background-priority.js';
import type { JobContext } from './fair-queue.js';
import { unwrapEnvelope, type TaskEnvelope } from './task-envelope.js';

/**
 * The Piscina pool for CPU-heavy JavaScript (templating, DOCX building, PDF signing).
 * Tasks are the named exports of workers/index, called through workers/dispatch; under
 * tsx/vitest the TypeScript sources are loaded through tsx, in production the compiled dist/.
 */
export interface WorkerPoolOptions {
  threads: number;
  maxQueue: number;
  /** A task running longer (counted from when it starts) is aborted, its thread terminated and replaced: 504. Default 60 s. */
  taskTimeoutMs?: number;
  /** A task waiting longer for a thread is refused with 503 + Retry-After (its own limit, apart from the run time). Default 30 s. */
  queueWaitMs?: number;
  /**
   * Heap ceiling of one worker thread (V8 old generation), in MB. A task that needs more ends its
   * own thread only: the caller gets 422 DOCUMENT_TOO_COMPLEX and Piscina starts a fresh thread.
   */
  memoryMb?: number;
  /**
   * Nice steps each worker thread lowers itself by (background-priority.ts), so the event loop
   * gets a core first; default DEFAULT_BACKGROUND_NICE, 0 keeps the process's priority.
   */
  nice?: number;
}

/**
 * Young generation and stack of a worker: fixed, small next to the old generation. 16 MB made
 * micromark (which allocates a short-lived object per token) parse ~40 % slower than on the main
 * thread, scavenging far more often; from 32 MB a worker parses as fast as the main thread
 * (bench/markup.ts measures the conversion against the bare parser).
 */
const YOUNG_GENERATION_MB = 32;
const STACK_MB = 4;

const outOfMemory = (err: unknown) => err instanceof Error && (err as NodeJS.ErrnoException).code === 'ERR_WORKER_OUT_OF_MEMORY';

const REFUSALS: Record<Refusal, (queueWaitMs: number) => string> = {
  full: () => 'All document workers are busy and the queue is full; retry shortly.',
  shed: () => 'All document workers are busy with this key’s other documents; retry shortly.',
  'waited-too-long': (queueWaitMs) => `No document worker became free within ${Math.round(queueWaitMs / 1000)} s; retry shortly.`,
};

function workerEntry(): string {
  const compiled = fileURLToPath(new URL('../../workers/dispatch.js', import.meta.url));
  return existsSync(compiled) ? compiled : fileURLToPath(new URL('../../workers/dev-dispatch.mjs', import.meta.url));
}

/**
 * Tasks beyond the thread count wait in the shared Admission (admission.ts: fair by caller,
 * shedding, abandonment, queue-wait limit) rather than in Piscina's FIFO.
 */
export class WorkerPool {
  private readonly piscina: Piscina;
  private readonly taskTimeoutMs: number;
  private readonly queueWaitMs: number;
  private readonly memoryMb: number | undefined;
  private readonly threads: number;
  private readonly admission: Admission<true>;
  private running = 0;
  private closing = false;

  constructor(options: WorkerPoolOptions) {
    this.taskTimeoutMs = options.taskTimeoutMs ?? 60_000;
    this.queueWaitMs = options.queueWaitMs ?? 30_000;
    this.memoryMb = options.memoryMb;
    this.threads = options.threads;
    this.admission = new Admission({
      maxQueue: options.maxQueue,
      queueWaitMs: this.queueWaitMs,
      take: () => {
        if (this.running >= this.threads) return undefined;
        this.running++;
        return true;
      },
      refusal: (reason) => serviceBusy(REFUSALS[reason](this.queueWaitMs), reason === 'waited-too-long' ? 5 : 2),
    });
    this.piscina = new Piscina({
      filename: workerEntry(),
      minThreads: 1,
      maxThreads: options.threads,
      idleTimeout: 60_000,
      workerData: { nice: options.nice ?? DEFAULT_BACKGROUND_NICE },
      resourceLimits: options.memoryMb
        ? { maxOldGenerationSizeMb: options.memoryMb, maxYoungGenerationSizeMb: YOUNG_GENERATION_MB, stackSizeMb: STACK_MB }
        : { stackSizeMb: STACK_MB },
    });
  }

  /**
   * Runs a task for `job`'s caller: 503 + Retry-After when the queue is full or no thread frees up
   * within queueWaitMs, 504 when the task itself runs past taskTimeoutMs (counted from its start, so
   * callers queued behind a slow task are not charged for it). `transferList`: MessagePorts in
   * `input` (port-call.ts) or buffers of it (annotate's data as JSON bytes), moved to the worker.
   */
  async run<I, O>(task: string, input: I, job?: JobContext, transferList?: TransferListItem[]): Promise<O> {
    await this.admission.admit(job);
    let envelope: TaskEnvelope<O>;
    // A timer cleared when the task ends, not AbortSignal.timeout: that one's timer and weak
    // reference live the whole taskTimeoutMs after every task (thousands at full load, for the GC to trace).
    const deadline = new AbortController();
    const timer = setTimeout(() => deadline.abort(), this.taskTimeoutMs).unref();
    try {
      const options = { signal: deadline.signal, ...(transferList ? { transferList: transferList as never } : {}) };
      envelope = (await this.piscina.run({ task, input }, options)) as TaskEnvelope<O>;
    } catch (err) {
      if (this.closing) throw serviceBusy('The task was stopped because this instance is shutting down; retry on another instance.', 1);
      if (err instanceof Error && /queue is at limit|no task queue available/i.test(err.message)) {
        throw serviceBusy('All document workers are busy and the queue is full; retry shortly.', 2);
      }
      if (err instanceof Error && err.name === 'AbortError') throw this.timedOut();
      if (outOfMemory(err)) {
        throw new DomainError(ErrorCode.DOCUMENT_TOO_COMPLEX, `Processing needed more than the ${this.memoryMb} MB one request may use and was stopped; send a smaller or simpler document.`);
      }
      throw err;
    } finally {
      clearTimeout(timer);
      this.running--;
      this.admission.dispatch();
    }
    return unwrapEnvelope(envelope);
  }

  /** Answers every task still waiting with 503 + Retry-After (shutdown: they would not run in time). */
  shedQueued(): void {
    this.admission.shedAll(() => serviceBusy('The service is shutting down; retry on another instance.', 1));
  }

  private timedOut(): DomainError {
    return new DomainError(ErrorCode.PROCESSING_TIMEOUT, `Processing took longer than ${Math.round(this.taskTimeoutMs / 1000)} s and was stopped; send a smaller or simpler document.`);
  }

  get stats() {
    return { threads: this.piscina.threads.length, queued: this.admission.queued + this.piscina.queueSize, utilization: this.piscina.utilization };
  }

  async close(): Promise<void> {
    this.closing = true;
    this.shedQueued();
    await this.piscina.destroy();
  }
}
