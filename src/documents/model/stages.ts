/**
 * CPU time (ms, this process's threads) spent per stage of one conversion, for the benchmark's
 * profile (bench/markup.ts): CPU rather than wall time, so that other work on a shared machine
 * does not count. The service passes no record, and then nothing is measured.
 */
export type Stage = 'prescan' | 'parse' | 'images' | 'model' | 'docx';
export type StageTimes = Partial<Record<Stage, number>>;

export function timed<T>(stages: StageTimes | undefined, stage: Stage, run: () => T): T {
  if (!stages) return run();
  const started = process.cpuUsage();
  try {
    return run();
  } finally {
    add(stages, stage, started);
  }
}

export async function timedAsync<T>(stages: StageTimes | undefined, stage: Stage, run: () => Promise<T>): Promise<T> {
  if (!stages) return run();
  const started = process.cpuUsage();
  try {
    return await run();
  } finally {
    add(stages, stage, started);
  }
}

function add(stages: StageTimes, stage: Stage, started: NodeJS.CpuUsage): void {
  const used = process.cpuUsage(started);
  stages[stage] = (stages[stage] ?? 0) + (used.user + used.system) / 1000;
}
