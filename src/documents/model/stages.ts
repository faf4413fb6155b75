/**
 * Time spent per stage of one conversion, for the benchmark's profile (bench/markup.ts). The
 * service passes no record, and then nothing is measured.
 */
export type Stage = 'prescan' | 'parse' | 'images' | 'model' | 'docx';
export type StageTimes = Partial<Record<Stage, number>>;

export function timed<T>(stages: StageTimes | undefined, stage: Stage, run: () => T): T {
  if (!stages) return run();
  const started = performance.now();
  try {
    return run();
  } finally {
    stages[stage] = (stages[stage] ?? 0) + performance.now() - started;
  }
}

export async function timedAsync<T>(stages: StageTimes | undefined, stage: Stage, run: () => Promise<T>): Promise<T> {
  if (!stages) return run();
  const started = performance.now();
  try {
    return await run();
  } finally {
    stages[stage] = (stages[stage] ?? 0) + performance.now() - started;
  }
}
