import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { serviceBusy } from '../errors/app-error.js';
import { unwrapEnvelope, type TaskEnvelope } from './task-envelope.js';

/**
 * The Piscina pool for CPU-heavy JavaScript (templating, DOCX building, PDF signing).
 * Tasks are the named exports of workers/index, called through workers/dispatch; under
 * tsx/vitest the TypeScript sources are loaded through tsx, in production the compiled dist/.
 */
export interface WorkerPoolOptions {
  threads: number;
  maxQueue: number;
}

export interface TaskRunner {
  run<I, O>(task: string, input: I, transferList?: ArrayBuffer[]): Promise<O>;
}

function workerEntry(): string {
  const compiled = fileURLToPath(new URL('../../workers/dispatch.js', import.meta.url));
  return existsSync(compiled) ? compiled : fileURLToPath(new URL('../../workers/dev-dispatch.mjs', import.meta.url));
}

export class WorkerPool implements TaskRunner {
  private readonly piscina: Piscina;

  constructor(options: WorkerPoolOptions) {
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
      envelope = (await this.piscina.run({ task, input }, { transferList })) as TaskEnvelope<O>;
    } catch (err) {
      if (err instanceof Error && /queue is at limit/i.test(err.message)) {
        throw serviceBusy('All document workers are busy and the queue is full; retry shortly.', 2);
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
