import type { ConvertRequest, ResultMessage } from './bridge-protocol.js';
import { conversionFailed, conversionTimeout, stoppedForShutdown, tooMuchMemory, unprocessableFor } from './office-errors.js';
import { OfficeCrashError, OfficeMemoryError, OfficeProcess, OfficeTimeoutError } from './office-process.js';

export type RestartReason = 'timeout' | 'crash' | 'max-jobs' | 'max-rss' | 'start-failed';

/** What every supervisor of a pool shares. */
export interface SupervisorSettings {
  sofficePath: string;
  pythonPath: string;
  startTimeoutMs: number;
  /** Run the process in the bubblewrap jail (jail.ts). */
  jail: boolean;
  /** Most memory the process group may hold during a job (the memory watch stops it past this). */
  maxRssBytes: number;
  /** Recycle the process when its memory after a job passes this. */
  recycleRssBytes: number;
  maxJobsPerProcess: number;
  /** Longest wait between start attempts of a process that does not come up. */
  maxBackoffMs: number;
  /** Nice steps below the service the process runs at. */
  nice: number;
}

export interface SupervisorHooks {
  /** True once the pool is closing: nothing is (re)started, and a job stopped under it is the shutdown's doing. */
  closed: () => boolean;
  /** A process was replaced, or failed to start (and will be tried again). */
  restarted: (reason: RestartReason) => void;
  /** The process came up and takes jobs. */
  ready: () => void;
}

/**
 * RLIMIT_DATA of each office process, as a multiple of the group's limit: well above the watched
 * limit, so the watch (which answers 422) acts first and the kernel only stops growth faster than a
 * sample. LibreOffice takes a failed allocation quietly (it leaves the picture out and exports the
 * rest): with the data limit near the watched one, a large picture was dropped and answered 200.
 */
const DATA_LIMIT_FACTOR = 2;
/** A crash after the group came this close to its limit is the limit's doing (an allocation failed). */
const NEAR_LIMIT_FRACTION = 0.9;

/**
 * Keeps one warm LibreOffice (OfficeProcess) up: starts it, retries a start that fails with
 * back-off, replaces it when it dies idle, times out, crashes or passes its memory limit in a job,
 * and recycles it after maxJobsPerProcess jobs or when it holds more than recycleRssBytes after one.
 * run() turns what happened to a job into the error the caller gets.
 */
export class OfficeSupervisor {
  process?: OfficeProcess;
  /** True while (re)starting; the process takes no jobs meanwhile. */
  private starting = false;
  private jobsDone = 0;
  private startFailures = 0;
  private backoffTimer?: NodeJS.Timeout;

  constructor(
    readonly index: number,
    private readonly settings: SupervisorSettings,
    private readonly hooks: SupervisorHooks,
  ) {}

  /** The process is running and not (re)starting. */
  get up(): boolean {
    return !this.starting && !!this.process?.alive;
  }

  /** Up and not running a job. */
  get idle(): boolean {
    return this.up && !this.process!.busy;
  }

  async start(): Promise<void> {
    if (this.hooks.closed()) return;
    this.starting = true;
    const office = new OfficeProcess({
      pythonPath: this.settings.pythonPath,
      sofficePath: this.settings.sofficePath,
      startTimeoutMs: this.settings.startTimeoutMs,
      jail: this.settings.jail,
      memoryLimitBytes: this.settings.maxRssBytes,
      dataLimitBytes: Math.round(this.settings.maxRssBytes * DATA_LIMIT_FACTOR),
      nice: this.settings.nice,
    });
    this.process = office;
    try {
      await office.start();
    } catch {
      this.startFailures++;
      this.starting = false;
      this.hooks.restarted('start-failed');
      this.scheduleRetry();
      return;
    }
    if (this.hooks.closed()) {
      await office.kill();
      return;
    }
    this.startFailures = 0;
    this.jobsDone = 0;
    this.starting = false;
    office.onExit = () => {
      // Died on its own while idle (a crash mid-job is handled by the job itself).
      if (!office.busy && !this.hooks.closed()) this.replace(office, 'crash');
    };
    this.hooks.ready();
  }

  /**
   * Runs one conversion on `office` (the process the job was given) within `timeoutMs`. Throws the
   * caller's error when the job fails, replacing the process when the failure was the process's.
   */
  async run(office: OfficeProcess, request: Omit<ConvertRequest, 'id'>, timeoutMs: number): Promise<Extract<ResultMessage, { ok: true }>> {
    let result: ResultMessage;
    try {
      result = await office.run(request, timeoutMs);
    } catch (err) {
      // close() stopped the process under this job: the instance is shutting down, not the document failing.
      if (this.hooks.closed()) throw stoppedForShutdown();
      if (err instanceof OfficeMemoryError || (err instanceof OfficeCrashError && this.nearLimit(office))) {
        await office.kill();
        this.replace(office, 'max-rss');
        throw tooMuchMemory(this.settings.maxRssBytes);
      }
      if (err instanceof OfficeTimeoutError) {
        await office.kill(); // already signalled; wait so nothing of the job outlives the answer
        this.replace(office, 'timeout');
        throw conversionTimeout(timeoutMs);
      }
      this.replace(office, 'crash');
      throw conversionFailed();
    }
    if (!result.ok) {
      if (result.kind === 'office') {
        const nearLimit = this.nearLimit(office);
        this.replace(office, nearLimit ? 'max-rss' : 'crash');
        throw nearLimit ? tooMuchMemory(this.settings.maxRssBytes) : conversionFailed();
      }
      throw unprocessableFor(result.kind);
    }
    this.jobsDone++;
    if (this.jobsDone >= this.settings.maxJobsPerProcess) this.replace(office, 'max-jobs');
    else if (result.rss > this.settings.recycleRssBytes) this.replace(office, 'max-rss');
    return result;
  }

  /** Stops the process and any pending restart. */
  async stop(): Promise<void> {
    this.clearRetry();
    await this.process?.kill();
  }

  /** stop() for exit and signal handlers: synchronous, without waiting. */
  stopNow(): void {
    this.clearRetry();
    this.process?.killSync();
  }

  private nearLimit(office: OfficeProcess): boolean {
    return office.lastJobPeakRss > this.settings.maxRssBytes * NEAR_LIMIT_FRACTION;
  }

  /** Kills `office` (if still this supervisor's) and starts a fresh one in its place. */
  private replace(office: OfficeProcess, reason: RestartReason): void {
    if (this.process !== office || this.starting) return;
    this.hooks.restarted(reason);
    this.starting = true;
    void office.kill().then(() => this.start());
  }

  private scheduleRetry(): void {
    if (this.hooks.closed()) return;
    const delay = Math.min(this.settings.maxBackoffMs, 500 * 2 ** Math.min(this.startFailures, 10));
    this.backoffTimer = setTimeout(() => {
      this.backoffTimer = undefined;
      void this.start();
    }, delay);
  }

  private clearRetry(): void {
    if (this.backoffTimer) clearTimeout(this.backoffTimer);
    this.backoffTimer = undefined;
  }
}
