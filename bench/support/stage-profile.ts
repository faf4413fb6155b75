import { writeFile } from 'node:fs/promises';
import { Session } from 'node:inspector/promises';

/**
 * Node's share of a conversion, by stage: a CPU profile of the main thread (the inspector's sampling
 * profiler, in this process) with every sample charged to the innermost frame that belongs to a
 * stage of the request — our modules and the packages each stage uses, then Node's HTTP internals —
 * so a `writeFileSync` counts for staging and busboy's parsing for multipart. What no stage claims
 * (event-loop plumbing, streams, timers) is "other Node"; the GC and V8's own "(program)" time are
 * shown apart. Only the main thread: worker threads and V8's helpers are counted per thread by the
 * bench from /proc.
 */
export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
}

/** Stage, and the URL fragments of the frames that are its work; the first stage found from the leaf up wins. */
const STAGES: [string, RegExp][] = [
  ['bench client (node:http client)', /bench\/convert-docx\.ts|node:_http_client|node:_http_agent/],
  ['staging (files, job directory)', /src\/office\/staging\.ts|src\/temp\//],
  ['office pool (admission, bridge IPC, supervisor)', /src\/office\/|src\/compute\/admission\.ts|src\/compute\/fair-queue\.ts/],
  ['worker round trip (piscina, guard+scrub call)', /piscina|src\/compute\/worker-pool\.ts|src\/compute\/task-envelope\.ts|src\/operations\/document-workers\.ts|node:internal\/worker/],
  ['operation (format detection, convert)', /src\/operations\/|src\/documents\/|src\/inputs\//],
  ['auth and limits (key, rate, concurrency slot)', /src\/http\/auth\.ts|src\/http\/limits\.ts|src\/store\/|src\/accounts\/|ioredis|redis-parser/],
  ['metrics (prom-client)', /prom-client|src\/http\/metrics\.ts/],
  ['multipart (busboy, watch, part checks)', /busboy|@fastify\/multipart|src\/http\/multipart/],
  ['logging (pino)', /pino|src\/http\/logging\.ts/],
  ['fastify (routing, hooks, validation, reply)', /fastify|find-my-way|ajv|avvio|light-my-request|fast-json-stringify|src\/http\/|src\/routes\/|src\/app\.ts|src\/services\.ts/],
  ['HTTP server (node:http, sockets)', /node:_http_|node:net|node:internal\/stream_base_commons|node:internal\/http/],
];

export async function mainThreadProfile(run: () => Promise<void>, outFile?: string, samplingIntervalUs = 250): Promise<CpuProfile> {
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: samplingIntervalUs });
    await session.post('Profiler.start');
    await run();
    const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: CpuProfile };
    if (outFile) await writeFile(outFile, JSON.stringify(profile));
    return profile;
  } finally {
    session.disconnect();
  }
}

/** Main-thread CPU ms by stage (see STAGES) over the whole profile. */
export function profileByStage(profile: CpuProfile): Map<string, number> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
  const stageOf = new Map<number, string>();
  const classify = (id: number): string => {
    const known = stageOf.get(id);
    if (known) return known;
    const leaf = byId.get(id)!.callFrame.functionName;
    let stage: string | undefined;
    if (leaf === '(garbage collector)') stage = 'GC (main thread)';
    else if (leaf === '(idle)') stage = '(idle)';
    else if (leaf === '(program)') stage = 'V8/native outside JS ("(program)")';
    else {
      for (let at: number | undefined = id; at !== undefined && !stage; at = parent.get(at)) {
        const url = byId.get(at)!.callFrame.url;
        if (url) stage = STAGES.find(([, pattern]) => pattern.test(url))?.[0];
      }
      // The profiler's own start and stop (its session's dispatch) are no part of the service.
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) if (byId.get(at)!.callFrame.url === 'node:inspector') stage = '(idle)';
    }
    stage ??= 'other Node (event loop, streams, timers)';
    stageOf.set(id, stage);
    return stage;
  };
  const totals = new Map<string, number>();
  profile.samples.forEach((id, i) => {
    const stage = classify(id);
    totals.set(stage, (totals.get(stage) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  });
  return totals;
}

/**
 * Prints ms per document by stage. The sampler runs on wall time, so on a loaded machine a thread
 * waiting for a core still collects samples: the shares are scaled to `mainCpuMs`, the main
 * thread's CPU time over the same run (from /proc), when given.
 */
export function printProfile(profile: CpuProfile, docs: number, mainCpuMs?: number): void {
  const totals = profileByStage(profile);
  const busy = [...totals].filter(([stage]) => stage !== '(idle)').reduce((sum, [, ms]) => sum + ms, 0);
  const scale = mainCpuMs === undefined ? 1 : mainCpuMs / busy;
  console.log(
    `\nMain thread by stage (CPU profile of a service-only run, ${docs} documents), ms per document` +
      (mainCpuMs === undefined ? ' (sampled wall time while busy):' : ` (shares of the sampled busy time, ${(busy / docs).toFixed(2)} ms, scaled to the thread's CPU time from /proc, ${(mainCpuMs / docs).toFixed(2)} ms):`),
  );
  for (const [stage, ms] of [...totals].filter(([s]) => s !== '(idle)').sort((a, b) => b[1] - a[1])) {
    console.log(`  ${stage.padEnd(52)} ${((ms * scale) / docs).toFixed(2).padStart(6)}  (${((100 * ms) / busy).toFixed(1)} %)`);
  }
}
