import { existsSync, readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

/**
 * CPU priority of the work done beside the event loop. Worker threads, the JSON parser thread and
 * the office processes run `BACKGROUND_NICE` steps below the event loop (default 10), so on a
 * busy machine the kernel runs the event loop first whenever it has something to do: a health
 * check or a small request waits for a core the length of a scheduler slice, not behind seconds
 * of templating, inflating or rendering. The heavy work loses nothing on an idle machine (a
 * lower priority only matters when threads compete for a core).
 */
export const DEFAULT_BACKGROUND_NICE = 10;

/**
 * Lowers the calling thread's priority by `steps` (Linux: a thread is its own scheduling entity,
 * named by its tid in /proc/thread-self). Returns the new nice value, or undefined where threads
 * cannot be told apart (the process's priority is then left alone: it would lower the event loop too).
 */
export function lowerThisThread(steps: number): number | undefined {
  if (steps <= 0) return undefined;
  let tid: number;
  try {
    tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  } catch {
    return undefined;
  }
  if (!Number.isSafeInteger(tid) || tid <= 0 || tid === process.pid) return undefined;
  try {
    const nice = Math.min(19, getPriority(tid) + steps);
    setPriority(tid, nice);
    return nice;
  } catch {
    return undefined;
  }
}

/** nice(1) before a command (it execs it: same pid, same process group); empty for 0 or where nice is missing. */
export function nicePrefix(steps: number, nicePath = '/usr/bin/nice'): string[] {
  if (steps <= 0 || !existsSync(nicePath)) return [];
  return [nicePath, '-n', String(Math.min(19, steps)), '--'];
}
