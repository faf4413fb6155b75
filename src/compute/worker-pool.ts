import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { unwrapEnvelope, type TaskEnvelope } from './task-envelope.js';

/**
 * The Piscina pool for CPU-heavy JavaScript (templating, DOCX building, PDF signing).
 * Tasks are the named exports of workers/index; under tsx/vitest the TypeScript entry is
 * loaded through tsx, in production the compiled one from dist/.
 */
export interface WorkerPoolOptions {
  threads: number;
  maxQueue: number;
}

export interface TaskRunner {
  run<I, O>(task: string, input: I, transferList?: ArrayBuffer[]): Promise<O>;
}

function workerEntry(): { filename: string; execArgv: string[] } {
  const compiled = fileURLToPath(new URL('../../workers/index.js', import.meta.url));
  if (existsSync(compiled)) return { filename: compiled, execArgv: [] };
  const source = fileURLToPath(new URL('../../workers/index.ts', import.meta.url));
  return { filename: source, execArgv: ['--import', 'tsx'] };
}

export class WorkerPool implements TaskRunner {
  private readonly piscina: Piscina;

  constructor(options: WorkerPoolOptions) {
    const entry = workerEntry();
    this.piscina = new Piscina({
      filename: entry.filename,
      execArgv: entry.execArgv,
      minThreads: 1,
      maxThreads: options.threads,
      maxQueue: options.maxQueue,
      idleTimeout: 60_000,
    });
  }

  async run<I, O>(task: string, input: I, transferList?: ArrayBuffer[]): Promise<O> {
    const envelope = (await this.piscina.run(input, { name: task, transferList })) as TaskEnvelope<O>;
    return unwrapEnvelope(envelope);
  }

  get stats() {
    return { threads: this.piscina.threads.length, queued: this.piscina.queueSize, utilization: this.piscina.utilization };
  }

  async close(): Promise<void> {
    await this.piscina.destroy();
  }
}
