import type { JobContext } from '../compute/fair-queue.js';
import { servePort } from '../compute/port-call.js';
import type { RemoteImage, RemoteImageSource } from '../documents/model/types.js';
import type { TaskEnvelope } from '../compute/task-envelope.js';
import type { WorkerPool } from '../compute/worker-pool.js';
import type * as tasks from '../../workers/index.js';

type Tasks = typeof tasks;
type Enveloped<I, O> = (input: I) => Promise<TaskEnvelope<O>>;
// `any` only to match every task's signature; each task's own types are then read back by `infer`.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type AnyTask = Enveloped<any, any>;

/** The name of every task workers/index.ts exports. */
export type TaskName = { [K in keyof Tasks]: Tasks[K] extends AnyTask ? K : never }[keyof Tasks];
export type TaskInput<K extends TaskName> = Tasks[K] extends Enveloped<infer I, unknown> ? I : never;
export type TaskOutput<K extends TaskName> = Tasks[K] extends Enveloped<never, infer O> ? O : never;

/** `transfer`: buffers of the input moved to the worker rather than copied (unusable here afterwards). */
type Call<K extends TaskName> = (input: TaskInput<K>, job?: JobContext, transfer?: ArrayBuffer[]) => Promise<TaskOutput<K>>;

/**
 * A Markdown/HTML task as operations call it: `remoteImages` is the operation's RemoteImageSource
 * (remote-inputs.ts behind it), which the facade serves to the worker over a MessagePort.
 */
type MarkupCall<K extends 'markdownToDocx' | 'htmlToDocx'> = (
  input: Omit<TaskInput<K>, 'remoteImages'> & { remoteImages?: RemoteImageSource },
  job?: JobContext,
) => Promise<TaskOutput<K>>;

/**
 * The worker pool as operations call it: one method per task, its input and output the types the
 * task in workers/ declares, so no caller names a task by string or states its types again.
 */
export interface DocumentWorkers {
  annotate: Call<'annotate'>;
  markdownToDocx: MarkupCall<'markdownToDocx'>;
  htmlToDocx: MarkupCall<'htmlToDocx'>;
  prepareDocx: Call<'prepareDocx'>;
  commentsInMargin: Call<'commentsInMargin'>;
  signPdf: Call<'signPdfTask'>;
  signDocx: Call<'signDocxTask'>;
  extendPdf: Call<'extendPdfTask'>;
  verifyPdf: Call<'verifyPdf'>;
  verifyDocx: Call<'verifyDocx'>;
}

export function documentWorkers(pool: WorkerPool): DocumentWorkers {
  const call = <K extends TaskName>(task: K): Call<K> => (input, job, transfer) => pool.run<TaskInput<K>, TaskOutput<K>>(task, input, job, transfer);
  const markup = <K extends 'markdownToDocx' | 'htmlToDocx'>(task: K): MarkupCall<K> => async ({ remoteImages, ...rest }, job) => {
    if (!remoteImages) return pool.run<typeof rest, TaskOutput<K>>(task, rest, job);
    // Every URL refused for one reason: sent as data, no port (a MessageChannel costs ~0.1 ms per task).
    if (remoteImages.refusedAll !== undefined) return pool.run<TaskInput<K>, TaskOutput<K>>(task, { ...rest, remoteImagesRefused: remoteImages.refusedAll } as TaskInput<K>, job);
    const served = servePort<string[], RemoteImage[]>((urls) => remoteImages.fetch(urls));
    try {
      return await pool.run<TaskInput<K>, TaskOutput<K>>(task, { ...rest, remoteImages: served.port } as TaskInput<K>, job, [served.port]);
    } finally {
      served.close();
    }
  };
  return {
    annotate: call('annotate'),
    markdownToDocx: markup('markdownToDocx'),
    htmlToDocx: markup('htmlToDocx'),
    prepareDocx: call('prepareDocx'),
    commentsInMargin: call('commentsInMargin'),
    signPdf: call('signPdfTask'),
    signDocx: call('signDocxTask'),
    extendPdf: call('extendPdfTask'),
    verifyPdf: call('verifyPdf'),
    verifyDocx: call('verifyDocx'),
  };
}
