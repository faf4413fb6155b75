import * as tasks from './index.js';

type Task = (input: unknown) => unknown;

/** Piscina calls this with { task, input }; `task` names an export of workers/index. */
export default function dispatch({ task, input }: { task: string; input: unknown }): unknown {
  const fn = (tasks as Record<string, unknown>)[task];
  if (typeof fn !== 'function') throw new Error(`unknown worker task: ${task}`);
  return (fn as Task)(input);
}
