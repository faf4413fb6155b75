import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { AppError, ErrorCode, serviceBusy } from '../errors/app-error.js';
import { unwrapEnvelope, type TaskEnvelope } from './task-envelope.js';

/**
 * The Piscina pool for CPU-heavy JavaScript (templating, DOCX building, PDF signing).
 * Tasks are the named exports of workers/index, called through workers/dispatch; under
 * tsx/vitest the TypeScript sources are loaded through tsx, in production the compiled dist/.
 */
export interface WorkerPoolOptions {
  threads: number;
  maxQueue: number;
  /** A task running longer is aborted (its thread is terminated and replaced): 504. Default 60 s. */
  taskTimeoutMs?: number;
}

function workerEntry(): string {
  const compiled = fileURLToPath(new URL('../../workers/dispatch.js', import.meta.url));
  return existsSync(compiled) ? compiled : fileURLToPath(new URL('../../workers/dev-dispatch.mjs', import.meta.url));
}

export class WorkerPool {
  private readonly piscina: Piscina;
  private readonly taskTimeoutMs: number;

  constructor(options: WorkerPoolOptions) {
    this.taskTimeoutMs = options.taskTimeoutMs ?? 60_000;
    this.piscina = new Piscina({
      filename: workerEntry(),
      minThreads: 1,
      maxThreads: options.threads,
      maxQueue: options.maxQueue,
      idleTimeout: 60_000,
    });
  }

  async run<I, O>(task: string, input: I, transferList?: ArrayBuffer[]): Promise<O> {
    let envelope: TaskEnvelope<O>;
    try {
      const signal = AbortSignal.timeout(this.taskTimeoutMs);
      envelope = (await this.piscina.run({ task, input }, { transferList, signal })) as TaskEnvelope<O>;
    } catch (err) {
      if (err instanceof Error && /queue is at limit|no task queue available/i.test(err.message)) {
        throw serviceBusy('All document workers are busy and the queue is full; retry shortly.', 2);
      }
      if (err instanceof Error && err.name === 'AbortError') {
        throw new AppError(504, ErrorCode.PROCESSING_TIMEOUT, `Processing took longer than ${Math.round(this.taskTimeoutMs / 1000)} s and was stopped; send a smaller or simpler document.`);
      }
      throw err;
    }
    return unwrapEnvelope(envelope);
  }

  get stats() {
    return { threads: this.piscina.threads.length, queued: this.piscina.queueSize, utilization: this.piscina.utilization };
  }

  async close(): Promise<void> {
    await this.piscina.destroy();
  }
}
