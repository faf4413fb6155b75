import { envelopeTask } from '../src/compute/task-envelope.js';

/** Round trip used by readiness and tests to prove a worker thread answers. */
export const ping = envelopeTask((input: { at: number }) => ({ at: input.at, thread: process.pid }));

/** Busy-waits for `ms`: lets tests prove a runaway task is stopped at the deadline. */
export const spin = envelopeTask((input: { ms: number }) => {
  const until = Date.now() + input.ms;
  while (Date.now() < until) {
    /* burn CPU like a pathological document would */
  }
  return { done: true };
});
