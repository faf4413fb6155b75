/** Closed-loop latency measurement shared by the benchmarks: N lanes call `run` until `iterations` calls are done. */
export const percentile = (sorted: number[], p: number): number => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;

export interface Measurement {
  label: string;
  concurrency: number;
  p50: number;
  p95: number;
  perSecond: number;
}

export async function measure(
  label: string,
  concurrency: number,
  run: () => Promise<unknown> | unknown,
  options: { iterations: number; warmupRounds?: number; unit?: string },
): Promise<Measurement> {
  // Warm up every lane (and so every worker thread the run will use), not just one.
  for (let round = 0; round < (options.warmupRounds ?? 3); round++) await Promise.all(Array.from({ length: concurrency }, () => run()));
  const times: number[] = [];
  let next = 0;
  const lane = async () => {
    while (next++ < options.iterations) {
      const t = performance.now();
      await run();
      times.push(performance.now() - t);
    }
  };
  const started = performance.now();
  await Promise.all(Array.from({ length: concurrency }, lane));
  const seconds = (performance.now() - started) / 1000;
  times.sort((a, b) => a - b);
  const result = { label, concurrency, p50: percentile(times, 50), p95: percentile(times, 95), perSecond: times.length / seconds };
  console.log(
    `${label.padEnd(44)} c=${concurrency}  p50 ${result.p50.toFixed(1).padStart(7)} ms  p95 ${result.p95.toFixed(1).padStart(7)} ms  ${result.perSecond.toFixed(1).padStart(6)} ${options.unit ?? 'req'}/s`,
  );
  return result;
}
