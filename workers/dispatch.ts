import { workerData } from 'piscina';
import { lowerThisThread } from '../src/compute/background-priority.js';
import * as tasks from './index.js';

// Below the event loop (WorkerPool's `nice`): a core is the event loop's first whenever it needs one.
lowerThisThread(Number((workerData as { nice?: number } | undefined)?.nice ?? 0));

type Task = (input: unknown) => unknown;

/** Piscina calls this with { task, input }; `task` names an export of workers/index. */
export default function dispatch({ task, input }: { task: string; input: unknown }): unknown {
  const fn = (tasks as Record<string, unknown>)[task];
  if (typeof fn !== 'function') throw new Error(`unknown worker task: ${task}`);
  return (fn as Task)(input);
}
