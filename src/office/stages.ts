/**
 * Where the time of one DOCX→PDF conversion goes, in milliseconds. Filled in along the way by the
 * route (receive), the docx-pdf module (guards, changes), the pool (queue, write, read) and the
 * bridge (load, refresh, export); reported as the docproc_convert_stage_duration_seconds histogram.
 */
export const CONVERSION_STAGES = ['receive', 'guards', 'changes', 'queue', 'write', 'load', 'officeChanges', 'refresh', 'export', 'read'] as const;
export type ConversionStage = (typeof CONVERSION_STAGES)[number];
export type ConversionStages = Partial<Record<ConversionStage, number>>;

/** Runs `work` and adds its duration to `stages[stage]` (when stages are being recorded). */
export async function timed<T>(stages: ConversionStages | undefined, stage: ConversionStage, work: () => Promise<T> | T): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    if (stages) stages[stage] = (stages[stage] ?? 0) + performance.now() - started;
  }
}
