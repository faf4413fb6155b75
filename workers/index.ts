// Piscina entry: every named export is a task (see src/compute/worker-pool.ts).
// Each engine keeps a thin adapter in workers/<engine>.ts; re-export it here.
export {};
