import { envelopeTask } from '../src/compute/task-envelope.js';

/** Round trip used by readiness and tests to prove a worker thread answers. */
export const ping = envelopeTask((input: { at: number }) => ({ at: input.at, thread: process.pid }));
