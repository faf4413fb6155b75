import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { FairQueue, type JobContext } from '../compute/fair-queue.js';
import { DomainError, ErrorCode, callerGone, serviceBusy } from '../errors/domain-error.js';
import type { ConvertRequest, DocumentWork, FailureKind, PdfFilterData, TrackedChangesMode } from './bridge-protocol.js';
import { timed, type ConversionStages } from './stages.js';
import { probeJail } from './jail.js';
import { instanceRoot } from '../temp/instance-root.js';
import { OfficeCrashError, OfficeMemoryError, OfficeProcess, OfficeTimeoutError, sweepLeftovers } from './office-process.js';

/**
 * A pool of warm LibreOffice processes with supervision: per-job deadline, replacement of dead
 * or timed-out processes, recycling after N jobs or too much memory, a bounded queue, and
 * start-up retries with back-off. Each process has one job directory, emptied after every job
 * whatever happens; inputs waiting for a process and PDFs being read back live in the instance root
 * (outside the jail) and are removed on every path.
 */
export interface OfficePoolOptions {
  /** Number of office processes (default: number of CPUs). */
  size?: number;
  /** Per-job deadline in ms; past it the process is killed and replaced (default 60000). */
  timeoutMs?: number;
  /** Recycle a process after this many jobs (default 1000; a cold start costs ~1 s of one slot). */
  maxJobsPerProcess?: number;
  /**
   * Memory limit of one office process group (soffice + its bridge) while it works (default 1 GiB):
   * a job that takes it past this is stopped and refused (422 DOCUMENT_TOO_COMPLEX), the process
   * replaced; a process left above RECYCLE_FRACTION of it after a job is recycled.
   */
  maxRssBytes?: number;
  /** Recycle a process whose memory after a job passes this (default: RECYCLE_FRACTION of maxRssBytes). */
  recycleRssBytes?: number;
  /**
   * Kill office processes and remove temp dirs on SIGTERM/SIGINT when nothing else listens for
   * them (default true). A server with its own graceful shutdown calls close() itself.
   */
  handleSignals?: boolean;
  /** Jobs allowed to wait for a free process; beyond it convert() throws 503 (default size * 16). */
  maxQueue?: number;
  /** How long a job may wait for a free process before 503 + Retry-After (default 30000); its run has timeoutMs from its start. */
  queueWaitMs?: number;
  /** Deadline for one process to start and answer (default 60000). */
  startTimeoutMs?: number;
  /** Longest wait between start attempts of a process that does not come up (default 30000). */
  maxBackoffMs?: number;
  sofficePath?: string;
  /** The python that can `import uno` (LibreOffice's), not the one on PATH. */
  pythonPath?: string;
  /** Run each office process in the bubblewrap jail (default: whenever probeJail() says it works). */
  jail?: boolean;
  /**
   * Inputs and PDFs up to this size are written and read with synchronous calls (default 1 MiB; 0:
   * always through the thread pool). For them a thread-pool round trip (a wake-up and two context
   * switches per call, on cores LibreOffice keeps busy) costs more than the copy, which stays well
   * under a millisecond.
   */
  syncIoMaxBytes?: number;
}

export interface ConvertToPdfOptions {
  trackedChanges?: TrackedChangesMode;
  /** LibreOffice import filter (default "MS Word 2007 XML"). */
  loadFilter?: string;
  /** File name extension given to the input in the job directory (default "docx"). */
  inputExtension?: string;
  /** Deadline for this job, overriding the pool's timeoutMs. */
  timeoutMs?: number;
  /** What the document needs besides load and export (absent: refresh fields and indexes). */
  work?: DocumentWork;
  /** Import filter options, the application to open the document as, PDF FilterData, landscape (bridge-protocol.ts). */
  filterOptions?: string;
  application?: ConvertRequest['application'];
  filterData?: PdfFilterData;
  landscape?: boolean;
  fitColumns?: boolean;
  /** Filled in with the time of queue, write, load, refresh, export and read. */
  stages?: ConversionStages;
  /** Whose job this is (fair queueing) and whether the caller still waits (dropped when not). */
  job?: JobContext;
}

export type JobOutcome = 'ok' | 'timeout' | 'crash' | 'unprocessable' | 'failed' | 'busy';
export type RestartReason = 'timeout' | 'crash' | 'max-jobs' | 'max-rss' | 'start-failed';

export interface JobEvent {
  outcome: JobOutcome;
  /** Time spent in LibreOffice (0 when the job never reached a process). */
  durationMs: number;
  /** Time spent waiting for a free process. */
  queuedMs: number;
}

export interface RestartEvent {
  reason: RestartReason;
  slot: number;
}

export interface OfficePoolStats {
  size: number;
  up: number;
  busy: number;
  queued: number;
  restarts: number;
  jobs: number;
}

export interface OfficePoolEvents {
  job: [JobEvent];
  restart: [RestartEvent];
}

interface Slot {
  index: number;
  process?: OfficeProcess;
  /** True while (re)starting; the slot takes no jobs meanwhile. */
  starting: boolean;
  jobsDone: number;
  startFailures: number;
}

interface QueuedJob {
  caller: string;
  run: (slot: Slot) => void;
  reject: (err: Error) => void;
  enqueuedAt: number;
  timer: NodeJS.Timeout;
}

const DEFAULTS = {
  timeoutMs: 60_000,
  queueWaitMs: 30_000,
  maxJobsPerProcess: 1000,
  syncIoMaxBytes: 1024 * 1024,
  maxRssBytes: 1024 * 1024 * 1024,
  startTimeoutMs: 60_000,
  maxBackoffMs: 30_000,
  sofficePath: '/usr/lib/libreoffice/program/soffice',
  pythonPath: '/usr/bin/python3',
};

const PDF_MAGIC = Buffer.from('%PDF-');
/** A process left holding more than this share of its memory limit after a job is recycled, so the next job has room. */
const RECYCLE_FRACTION = 0.75;
/**
 * RLIMIT_DATA of each office process, as a multiple of the group's limit: well above the watched
 * limit, so the watch (which answers 422) acts first and the kernel only stops growth faster than a
 * sample. LibreOffice takes a failed allocation quietly (it leaves the picture out and exports the
 * rest): with the data limit near the watched one, a large picture was dropped and answered 200.
 */
const DATA_LIMIT_FACTOR = 2;
/** A crash after the group came this close to its limit is the limit's doing (an allocation failed). */
const NEAR_LIMIT_FRACTION = 0.9;

/** A caller's document written into the instance root, waiting to be moved into a job directory. */
interface StagedFile {
  path: string;
  moved: boolean;
}

async function stageFile(data: Buffer, extension: string, syncMaxBytes: number, stages?: ConversionStages): Promise<StagedFile> {
  const staged = { path: path.join(instanceRoot(), `in-${randomUUID()}.${extension}`), moved: false };
  const options = { mode: 0o600, flag: 'wx' } as const;
  await timed(stages, 'write', () => (data.length <= syncMaxBytes ? writeFileSync(staged.path, data, options) : writeFile(staged.path, data, options)));
  return staged;
}

/** The PDF LibreOffice wrote, or undefined when there is none. */
async function readOutput(file: string, syncMaxBytes: number): Promise<Buffer | undefined> {
  const size = statSync(file, { throwIfNoEntry: false })?.size;
  if (size === undefined) return undefined;
  return size <= syncMaxBytes ? readFileSync(file) : readFile(file);
}

function removeFile(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}

/** Removes a staged input that never reached a job directory (also when writing it failed half-way). */
async function discardStaged(staging: Promise<StagedFile>): Promise<void> {
  const staged = await staging.catch(() => undefined);
  if (staged && !staged.moved) removeFile(staged.path);
}

const SIGNALS = ['SIGTERM', 'SIGINT'] as const;
/** The signal handlers of all pools, told apart from the application's own. */
const SIGNAL_GUARDS = new WeakSet<(...args: never[]) => void>();

export class OfficePool extends EventEmitter<OfficePoolEvents> {
  readonly size: number;
  private readonly timeoutMs: number;
  private readonly queueWaitMs: number;
  private readonly maxJobsPerProcess: number;
  private readonly syncIoMaxBytes: number;
  private readonly maxRssBytes: number;
  private readonly recycleRssBytes: number;
  private readonly startTimeoutMs: number;
  private readonly maxBackoffMs: number;
  private readonly sofficePath: string;
  private readonly pythonPath: string;
  /** Office processes run in the bubblewrap jail. */
  readonly jail: boolean;
  private readonly handleSignals: boolean;
  private readonly slots: Slot[];
  private readonly queue: FairQueue<QueuedJob>;
  /** Slots handed to a job, from acquire() until the job's cleanup is done. */
  private readonly claimed = new Set<Slot>();
  private closed = false;
  private restarts = 0;
  /** Processes whose job directory exists and is empty (see jobDirectory). */
  private readonly emptyJobDirectories = new WeakSet<OfficeProcess>();
  private jobsDone = 0;
  private averageJobMs = 1_000;
  private readonly backoffTimers = new Set<NodeJS.Timeout>();
  private readonly exitGuard = () => this.closeSync();
  private readonly signalGuard = (signal: NodeJS.Signals) => {
    // Another listener owns shutdown (and must call close()); otherwise clean up and die as
    // the signal's default action would have.
    if (process.listeners(signal).some((listener) => !SIGNAL_GUARDS.has(listener))) return;
    this.closeSync();
    process.kill(process.pid, signal);
  };

  constructor(options: OfficePoolOptions = {}) {
    super();
    this.size = Math.max(1, options.size ?? os.cpus().length);
    this.timeoutMs = options.timeoutMs ?? DEFAULTS.timeoutMs;
    this.queueWaitMs = options.queueWaitMs ?? DEFAULTS.queueWaitMs;
    this.maxJobsPerProcess = options.maxJobsPerProcess ?? DEFAULTS.maxJobsPerProcess;
    this.syncIoMaxBytes = options.syncIoMaxBytes ?? DEFAULTS.syncIoMaxBytes;
    this.maxRssBytes = options.maxRssBytes ?? DEFAULTS.maxRssBytes;
    this.recycleRssBytes = options.recycleRssBytes ?? this.maxRssBytes * RECYCLE_FRACTION;
    this.queue = new FairQueue(options.maxQueue ?? this.size * 16);
    this.startTimeoutMs = options.startTimeoutMs ?? DEFAULTS.startTimeoutMs;
    this.maxBackoffMs = options.maxBackoffMs ?? DEFAULTS.maxBackoffMs;
    this.sofficePath = options.sofficePath ?? DEFAULTS.sofficePath;
    this.pythonPath = options.pythonPath ?? DEFAULTS.pythonPath;
    this.jail = options.jail ?? probeJail().available;
    this.handleSignals = options.handleSignals ?? true;
    SIGNAL_GUARDS.add(this.signalGuard);
    this.slots = Array.from({ length: this.size }, (_, index) => ({ index, starting: false, jobsDone: 0, startFailures: 0 }));
  }

  /**
   * Starts every process. Resolves once each has answered or failed its first attempt; those
   * that failed keep retrying with back-off in the background (see `ready` and stats().up).
   */
  async start(): Promise<void> {
    if (this.closed) throw new Error('OfficePool is closed');
    await sweepLeftovers();
    process.once('exit', this.exitGuard);
    if (this.handleSignals) for (const signal of SIGNALS) process.on(signal, this.signalGuard);
    await Promise.all(this.slots.map((slot) => this.startSlot(slot)));
  }

  /** True when at least one office process is up and the pool is not closed. */
  get ready(): boolean {
    return !this.closed && this.upCount() > 0;
  }

  /** Where each running process's job temp directories live (empty between jobs). */
  jobDirectories(): string[] {
    return this.slots.flatMap((s) => (s.process?.alive && s.process.jobsDirectory ? [s.process.jobsDirectory] : []));
  }

  stats(): OfficePoolStats {
    return {
      size: this.size,
      up: this.upCount(),
      busy: this.slots.filter((s) => s.process?.busy).length,
      queued: this.queue.size,
      restarts: this.restarts,
      jobs: this.jobsDone,
    };
  }

  /** Process-group id (= bridge pid) of each running office process, for diagnostics and tests. */
  processGroups(): { slot: number; pgid: number; busy: boolean }[] {
    return this.slots
      .filter((s) => !s.starting && s.process?.alive && s.process.pid !== undefined)
      .map((s) => ({ slot: s.index, pgid: s.process!.pid!, busy: s.process!.busy }));
  }

  /**
   * Converts a document to PDF in a warm LibreOffice. Throws DomainError: 503 SERVICE_BUSY when the
   * queue is full or no process frees up in time, 504 CONVERSION_TIMEOUT, 502 CONVERSION_FAILED
   * when LibreOffice dies or produces no PDF, 422 UNPROCESSABLE_DOCUMENT when it cannot open
   * or export the document.
   */
  async convertToPdf(input: Buffer, options: ConvertToPdfOptions = {}): Promise<Buffer> {
    if (this.closed) throw new DomainError(ErrorCode.SERVICE_BUSY, 'The document converter is not running.');
    const enqueuedAt = Date.now();
    // The input is written beside the work directories while the job waits for a process, and the
    // PDF is moved out of the job directory before it is read: a process never waits for our disk
    // writes and reads, only for two renames.
    const input$ = stageFile(input, options.inputExtension ?? 'docx', this.syncIoMaxBytes, options.stages);
    input$.catch(() => undefined); // awaited below; a failed write must not count as unhandled meanwhile
    let slot: Slot;
    try {
      slot = await this.acquire(enqueuedAt, options.job);
    } catch (err) {
      await discardStaged(input$);
      throw err;
    }
    const queuedMs = Date.now() - enqueuedAt;
    if (options.stages) options.stages.queue = queuedMs;
    const startedAt = Date.now();
    let outcome: JobOutcome = 'failed';
    let output: string | undefined;
    try {
      output = await this.runInSlot(slot, input$, options);
      const pdf = await timed(options.stages, 'read', () => readOutput(output!, this.syncIoMaxBytes).catch(() => undefined));
      // LibreOffice's word is not enough: the output must exist and be a PDF.
      if (!pdf || pdf.length < PDF_MAGIC.length || !pdf.subarray(0, PDF_MAGIC.length).equals(PDF_MAGIC)) throw conversionFailed();
      outcome = 'ok';
      return pdf;
    } catch (err) {
      outcome = outcomeOf(err);
      throw err;
    } finally {
      if (output) removeFile(output);
      await discardStaged(input$);
      const durationMs = Date.now() - startedAt;
      this.jobsDone++;
      this.averageJobMs = this.averageJobMs * 0.9 + durationMs * 0.1;
      this.emit('job', { outcome, durationMs, queuedMs });
    }
  }

  /**
   * Runs one job on the slot's process and gives the slot back as soon as the process is done: the
   * staged input is renamed into the job directory, and the PDF renamed out of it into the instance
   * root (which the jail does not show) before the directory is emptied for the next job.
   * Returns the PDF's path; the caller reads and removes it.
   */
  private async runInSlot(slot: Slot, input$: Promise<StagedFile>, options: ConvertToPdfOptions): Promise<string> {
    const office = slot.process!;
    let jobDir: string | undefined;
    try {
      const input = await input$;
      // Inside the process's own work directory: the jail shows it this job's files and nothing else.
      // One job at a time per process, so a fixed name: the document's path (which FILENAME \p
      // prints) is the same neutral /document/job/input.docx for every caller.
      jobDir = this.jobDirectory(office);
      const inputPath = path.join(jobDir, `input.${options.inputExtension ?? 'docx'}`);
      const outputPath = path.join(jobDir, 'output.pdf');
      renameSync(input.path, inputPath);
      input.moved = true;
      await this.runOffice(slot, office, inputPath, outputPath, options);
      const kept = path.join(instanceRoot(), `out-${randomUUID()}.pdf`);
      try {
        renameSync(outputPath, kept);
      } catch {
        throw conversionFailed(); // no output at all
      }
      return kept;
    } finally {
      if (jobDir) this.emptyJobDirectory(office, jobDir);
      this.release(slot);
    }
  }

  /**
   * The process's job directory, made once and emptied after every job (the caller's files are gone
   * before the answer); made anew when emptying it failed. Synchronous: a handful of metadata calls
   * on a directory of two or three files, cheaper than the thread-pool round trips they would take.
   */
  private jobDirectory(office: OfficeProcess): string {
    const jobDir = path.join(office.jobsDirectory!, 'job');
    if (!this.emptyJobDirectories.has(office)) {
      rmSync(jobDir, { recursive: true, force: true });
      mkdirSync(jobDir, { mode: 0o700 });
      this.emptyJobDirectories.add(office);
    }
    this.emptyJobDirectories.delete(office);
    return jobDir;
  }

  private emptyJobDirectory(office: OfficeProcess, jobDir: string): void {
    try {
      // The input, and whatever LibreOffice left beside it (a lock file when it edited, a PDF it
      // wrote before failing).
      for (const name of readdirSync(jobDir)) {
        const entry = path.join(jobDir, name);
        try {
          unlinkSync(entry);
        } catch {
          rmSync(entry, { recursive: true, force: true }); // a directory
        }
      }
      this.emptyJobDirectories.add(office);
    } catch {
      rmSync(jobDir, { recursive: true, force: true });
    }
  }

  /** Stops every process (soffice.bin included) and removes all temp directories. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.backoffTimers) clearTimeout(timer);
    this.backoffTimers.clear();
    this.shedQueued();
    await Promise.all(this.slots.map((slot) => slot.process?.kill()));
    this.removeGuards();
  }

  /** Answers every job still waiting with 503 + Retry-After (shutdown: they would not run in time). */
  shedQueued(): void {
    for (const job of this.queue.drain()) {
      clearTimeout(job.timer);
      job.reject(serviceBusy('The document converter is shutting down; retry on another instance.', 1));
    }
  }

  /** What close() does, synchronously and without waiting: for exit and signal handlers. */
  private closeSync(): void {
    this.closed = true;
    for (const timer of this.backoffTimers) clearTimeout(timer);
    for (const slot of this.slots) slot.process?.killSync();
    this.removeGuards();
  }

  private removeGuards(): void {
    process.removeListener('exit', this.exitGuard);
    for (const signal of SIGNALS) process.removeListener(signal, this.signalGuard);
  }

  private upCount(): number {
    return this.slots.filter((s) => !s.starting && s.process?.alive).length;
  }

  private async runOffice(slot: Slot, office: OfficeProcess, inputPath: string, outputPath: string, options: ConvertToPdfOptions): Promise<void> {
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    let result;
    try {
      result = await office.run(
        {
          op: 'convert',
          input: inputPath,
          output: outputPath,
          trackedChanges: options.trackedChanges ?? 'markup',
          loadFilter: options.loadFilter,
          work: options.work,
          filterOptions: options.filterOptions,
          application: options.application,
          filterData: options.filterData,
          landscape: options.landscape || undefined,
          fitColumns: options.fitColumns || undefined,
        },
        timeoutMs,
      );
    } catch (err) {
      // close() stopped the process under this job: the instance is shutting down, not the document failing.
      if (this.closed) throw serviceBusy('The document converter was stopped because this instance is shutting down; retry on another instance.', 1);
      if (err instanceof OfficeMemoryError || (err instanceof OfficeCrashError && office.lastJobPeakRss > this.maxRssBytes * NEAR_LIMIT_FRACTION)) {
        await office.kill();
        this.replace(slot, office, 'max-rss');
        throw this.tooMuchMemory();
      }
      if (err instanceof OfficeTimeoutError) {
        await office.kill(); // already signalled; wait so nothing of the job outlives the answer
        this.replace(slot, office, 'timeout');
        throw new DomainError(ErrorCode.CONVERSION_TIMEOUT, `The conversion took longer than ${Math.ceil(timeoutMs / 1000)} s and was stopped; simplify or split the document and try again.`);
      }
      this.replace(slot, office, 'crash');
      throw conversionFailed();
    }
    if (!result.ok) {
      if (result.kind === 'office') {
        const nearLimit = office.lastJobPeakRss > this.maxRssBytes * NEAR_LIMIT_FRACTION;
        this.replace(slot, office, nearLimit ? 'max-rss' : 'crash');
        throw nearLimit ? this.tooMuchMemory() : conversionFailed();
      }
      throw unprocessableFor(result.kind);
    }
    slot.jobsDone++;
    if (slot.jobsDone >= this.maxJobsPerProcess) this.replace(slot, office, 'max-jobs');
    else if (result.rss > this.recycleRssBytes) this.replace(slot, office, 'max-rss');
    if (options.stages) Object.assign(options.stages, result.stages);
  }

  private tooMuchMemory(): DomainError {
    const mb = Math.round(this.maxRssBytes / 2 ** 20);
    return new DomainError(ErrorCode.DOCUMENT_TOO_COMPLEX, `Converting this document needed more than the ${mb} MB one conversion may use and was stopped; use smaller images or split the document.`, {
      extensions: { limit: { name: 'convert.officeMemoryMb', max: mb } },
    });
  }

  private acquire(enqueuedAt: number, context?: JobContext): Promise<Slot> {
    if (context?.signal?.aborted) return Promise.reject(callerGone());
    const free = this.freeSlot();
    if (free && this.queue.size === 0) return Promise.resolve(this.claim(free));
    const caller = context?.caller ?? '';
    return new Promise<Slot>((resolve, reject) => {
      const leave = () => {
        clearTimeout(job.timer);
        context?.signal?.removeEventListener('abort', onAbort);
      };
      const onAbort = () => {
        if (this.queue.remove(caller, job)) {
          leave();
          reject(callerGone());
        }
      };
      const job: QueuedJob = {
        caller,
        enqueuedAt,
        run: (slot) => {
          leave();
          resolve(slot);
        },
        reject: (err) => {
          leave();
          reject(err);
        },
        timer: setTimeout(() => {
          if (this.queue.remove(caller, job)) job.reject(serviceBusy('No document converter became free in time; retry later.', this.retryAfterSeconds()));
        }, this.queueWaitMs),
      };
      const admission = this.queue.push(caller, job);
      if (!admission.admitted) {
        clearTimeout(job.timer);
        this.emit('job', { outcome: 'busy', durationMs: 0, queuedMs: 0 });
        reject(serviceBusy('The document converter is busy; retry later.', this.retryAfterSeconds()));
        return;
      }
      if (admission.shed) {
        this.emit('job', { outcome: 'busy', durationMs: 0, queuedMs: 0 });
        admission.shed.reject(serviceBusy('The document converter is busy with this key’s other documents; retry later.', this.retryAfterSeconds()));
      }
      context?.signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private claim(slot: Slot): Slot {
    this.claimed.add(slot);
    return slot;
  }

  private freeSlot(): Slot | undefined {
    return this.slots.find((s) => !s.starting && s.process?.alive && !s.process.busy && !this.claimed.has(s));
  }

  private release(slot: Slot): void {
    this.claimed.delete(slot);
    this.dispatch();
  }

  private dispatch(): void {
    while (this.queue.size > 0) {
      const slot = this.freeSlot();
      if (!slot) return;
      this.queue.shift()!.run(this.claim(slot));
    }
  }

  private retryAfterSeconds(): number {
    const waves = (this.queue.size + 1) / Math.max(1, this.upCount());
    return Math.max(1, Math.ceil((waves * this.averageJobMs) / 1000));
  }

  /** Kills `process` (if still the slot's) and starts a fresh one in its place. */
  private replace(slot: Slot, office: OfficeProcess, reason: RestartReason): void {
    if (slot.process !== office || slot.starting) return;
    this.restarts++;
    this.emit('restart', { reason, slot: slot.index });
    slot.starting = true;
    void office.kill().then(() => this.startSlot(slot));
  }

  private async startSlot(slot: Slot): Promise<void> {
    if (this.closed) return;
    slot.starting = true;
    const office = new OfficeProcess({
      pythonPath: this.pythonPath,
      sofficePath: this.sofficePath,
      startTimeoutMs: this.startTimeoutMs,
      jail: this.jail,
      memoryLimitBytes: this.maxRssBytes,
      dataLimitBytes: Math.round(this.maxRssBytes * DATA_LIMIT_FACTOR),
    });
    slot.process = office;
    try {
      await office.start();
    } catch {
      slot.startFailures++;
      slot.starting = false;
      this.restarts++;
      this.emit('restart', { reason: 'start-failed', slot: slot.index });
      this.scheduleRetry(slot);
      return;
    }
    if (this.closed) {
      await office.kill();
      return;
    }
    slot.startFailures = 0;
    slot.jobsDone = 0;
    slot.starting = false;
    office.onExit = () => {
      // Died on its own while idle (a crash mid-job is handled by the job itself).
      if (!office.busy && !this.closed) this.replace(slot, office, 'crash');
    };
    this.dispatch();
  }

  private scheduleRetry(slot: Slot): void {
    if (this.closed) return;
    const delay = Math.min(this.maxBackoffMs, 500 * 2 ** Math.min(slot.startFailures, 10));
    const timer = setTimeout(() => {
      this.backoffTimers.delete(timer);
      void this.startSlot(slot);
    }, delay);
    this.backoffTimers.add(timer);
  }
}

function conversionFailed(): DomainError {
  return new DomainError(ErrorCode.CONVERSION_FAILED, 'The document converter failed on this document; try again, and if it keeps failing, check the document in Word.');
}

function unprocessableFor(kind: FailureKind): DomainError {
  return kind === 'load'
    ? new DomainError(ErrorCode.UNPROCESSABLE_DOCUMENT, 'The document could not be opened; check that it opens in its office application and is not password-protected.')
    : new DomainError(ErrorCode.UNPROCESSABLE_DOCUMENT, 'The document was opened but could not be exported to PDF.');
}

function outcomeOf(err: unknown): JobOutcome {
  if (!(err instanceof DomainError)) return 'failed';
  if (err.code === ErrorCode.CONVERSION_TIMEOUT) return 'timeout';
  if (err.code === ErrorCode.UNPROCESSABLE_DOCUMENT || err.code === ErrorCode.DOCUMENT_TOO_COMPLEX) return 'unprocessable';
  if (err.code === ErrorCode.CONVERSION_FAILED) return 'crash';
  return 'failed';
}

export { OfficeCrashError, OfficeTimeoutError };
