import { EventEmitter } from 'node:events';
import os from 'node:os';
import path from 'node:path';
import { Admission } from '../compute/admission.js';
import { DEFAULT_BACKGROUND_NICE } from '../compute/background-priority.js';
import type { JobContext } from '../compute/fair-queue.js';
import { serviceBusy } from '../errors/domain-error.js';
import type { ConvertRequest, DocumentWork, PdfFilterData, TrackedChangesMode } from './bridge-protocol.js';
import { probeJail } from './jail.js';
import { conversionFailed, converterStopped, outcomeOf, type JobOutcome } from './office-errors.js';
import { OfficeCrashError, OfficeTimeoutError, sweepLeftovers } from './office-process.js';
import { OfficeSupervisor, type RestartReason, type SupervisorSettings } from './office-supervisor.js';
import { ExitGuard } from './exit-guard.js';
import { discardStaged, JobDirectories, moveIntoJob, moveOutOfJob, readOutput, removeOutput, stageInput, type StagedFile } from './staging.js';
import { timed, type ConversionStages } from './stages.js';

export type { JobOutcome, RestartReason };

/**
 * A pool of warm LibreOffice processes. It composes four parts: one OfficeSupervisor per process
 * (office-supervisor.ts: start, back-off, replacement, recycling, the per-job deadline and memory
 * limit), the Admission shared with the worker pool (compute/admission.ts: a bounded queue fair by
 * caller, abandonment, queue-wait limit), the staging of inputs and PDFs (staging.ts: instance root
 * ↔ job directory, removed on every path) and the ExitGuard (exit-guard.ts: signals and exit).
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
  /** Nice steps the office processes run below the service (default DEFAULT_BACKGROUND_NICE; 0: the same priority). */
  nice?: number;
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

const REFUSALS = {
  full: 'The document converter is busy; retry later.',
  shed: 'The document converter is busy with this key’s other documents; retry later.',
  'waited-too-long': 'No document converter became free in time; retry later.',
} as const;

export class OfficePool extends EventEmitter<OfficePoolEvents> {
  readonly size: number;
  private readonly timeoutMs: number;
  private readonly syncIoMaxBytes: number;
  /** Office processes run in the bubblewrap jail. */
  readonly jail: boolean;
  private readonly handleSignals: boolean;
  private readonly supervisors: OfficeSupervisor[];
  private readonly admission: Admission<OfficeSupervisor>;
  /** Supervisors handed to a job, from admission until the job's cleanup is done. */
  private readonly claimed = new Set<OfficeSupervisor>();
  private readonly jobDirs = new JobDirectories();
  private readonly exitGuard = new ExitGuard(() => this.closeSync());
  private closed = false;
  private restarts = 0;
  private jobsDone = 0;
  private averageJobMs = 1_000;

  constructor(options: OfficePoolOptions = {}) {
    super();
    this.size = Math.max(1, options.size ?? os.cpus().length);
    this.timeoutMs = options.timeoutMs ?? DEFAULTS.timeoutMs;
    this.syncIoMaxBytes = options.syncIoMaxBytes ?? DEFAULTS.syncIoMaxBytes;
    this.jail = options.jail ?? probeJail().available;
    this.handleSignals = options.handleSignals ?? true;
    const maxRssBytes = options.maxRssBytes ?? DEFAULTS.maxRssBytes;
    const settings: SupervisorSettings = {
      sofficePath: options.sofficePath ?? DEFAULTS.sofficePath,
      pythonPath: options.pythonPath ?? DEFAULTS.pythonPath,
      startTimeoutMs: options.startTimeoutMs ?? DEFAULTS.startTimeoutMs,
      jail: this.jail,
      maxRssBytes,
      recycleRssBytes: options.recycleRssBytes ?? maxRssBytes * RECYCLE_FRACTION,
      maxJobsPerProcess: options.maxJobsPerProcess ?? DEFAULTS.maxJobsPerProcess,
      maxBackoffMs: options.maxBackoffMs ?? DEFAULTS.maxBackoffMs,
      nice: options.nice ?? DEFAULT_BACKGROUND_NICE,
    };
    this.supervisors = Array.from(
      { length: this.size },
      (_, index) =>
        new OfficeSupervisor(index, settings, {
          closed: () => this.closed,
          restarted: (reason) => {
            this.restarts++;
            this.emit('restart', { reason, slot: index });
          },
          ready: () => this.admission.dispatch(),
        }),
    );
    this.admission = new Admission({
      maxQueue: options.maxQueue ?? this.size * 16,
      queueWaitMs: options.queueWaitMs ?? DEFAULTS.queueWaitMs,
      take: () => this.claimFree(),
      refusal: (reason) => serviceBusy(REFUSALS[reason], this.retryAfterSeconds()),
      onBusy: () => this.emit('job', { outcome: 'busy', durationMs: 0, queuedMs: 0 }),
    });
  }

  /**
   * Starts every process. Resolves once each has answered or failed its first attempt; those
   * that failed keep retrying with back-off in the background (see `ready` and stats().up).
   */
  async start(): Promise<void> {
    if (this.closed) throw new Error('OfficePool is closed');
    await sweepLeftovers();
    this.exitGuard.install(this.handleSignals);
    await Promise.all(this.supervisors.map((supervisor) => supervisor.start()));
  }

  /** True when at least one office process is up and the pool is not closed. */
  get ready(): boolean {
    return !this.closed && this.upCount() > 0;
  }

  /** Where each running process's job temp directories live (empty between jobs). */
  jobDirectories(): string[] {
    return this.supervisors.flatMap((s) => (s.process?.alive && s.process.jobsDirectory ? [s.process.jobsDirectory] : []));
  }

  stats(): OfficePoolStats {
    return {
      size: this.size,
      up: this.upCount(),
      busy: this.supervisors.filter((s) => s.process?.busy).length,
      queued: this.admission.queued,
      restarts: this.restarts,
      jobs: this.jobsDone,
    };
  }

  /** Process-group id (= bridge pid) of each running office process, for diagnostics and tests. */
  processGroups(): { slot: number; pgid: number; busy: boolean }[] {
    return this.supervisors
      .filter((s) => s.up && s.process!.pid !== undefined)
      .map((s) => ({ slot: s.index, pgid: s.process!.pid!, busy: s.process!.busy }));
  }

  /**
   * Converts a document to PDF in a warm LibreOffice. Throws DomainError: 503 SERVICE_BUSY when the
   * queue is full or no process frees up in time, 504 CONVERSION_TIMEOUT, 502 CONVERSION_FAILED
   * when LibreOffice dies or produces no PDF, 422 UNPROCESSABLE_DOCUMENT when it cannot open
   * or export the document.
   */
  async convertToPdf(input: Buffer, options: ConvertToPdfOptions = {}): Promise<Buffer> {
    if (this.closed) throw converterStopped();
    const enqueuedAt = Date.now();
    // Written into the instance root while the job waits for a process (staging.ts).
    const input$ = stageInput(input, options.inputExtension ?? 'docx', this.syncIoMaxBytes, options.stages);
    input$.catch(() => undefined); // awaited below; a failed write must not count as unhandled meanwhile
    let supervisor: OfficeSupervisor;
    try {
      supervisor = await this.admission.admit(options.job);
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
      output = await this.runJob(supervisor, input$, options);
      const pdf = await timed(options.stages, 'read', () => readOutput(output!, this.syncIoMaxBytes).catch(() => undefined));
      // LibreOffice's word is not enough: the output must exist and be a PDF.
      if (!pdf || pdf.length < PDF_MAGIC.length || !pdf.subarray(0, PDF_MAGIC.length).equals(PDF_MAGIC)) throw conversionFailed();
      outcome = 'ok';
      return pdf;
    } catch (err) {
      outcome = outcomeOf(err);
      throw err;
    } finally {
      if (output) await removeOutput(output);
      await discardStaged(input$);
      const durationMs = Date.now() - startedAt;
      this.jobsDone++;
      this.averageJobMs = this.averageJobMs * 0.9 + durationMs * 0.1;
      this.emit('job', { outcome, durationMs, queuedMs });
    }
  }

  /**
   * Runs one job on the supervisor's process and gives it back as soon as the process is done: the
   * staged input is renamed into the job directory, and the PDF renamed out of it into the instance
   * root (which the jail does not show) before the directory is emptied for the next job.
   * Returns the PDF's path; the caller reads and removes it.
   */
  private async runJob(supervisor: OfficeSupervisor, input$: Promise<StagedFile>, options: ConvertToPdfOptions): Promise<string> {
    const office = supervisor.process!;
    let jobDir: string | undefined;
    try {
      const input = await input$;
      // Inside the process's own work directory: the jail shows it this job's files and nothing else.
      // One job at a time per process, so a fixed name: the document's path (which FILENAME \p
      // prints) is the same neutral /document/job/input.docx for every caller.
      jobDir = this.jobDirs.open(office, office.jobsDirectory!);
      const inputPath = path.join(jobDir, `input.${options.inputExtension ?? 'docx'}`);
      const outputPath = path.join(jobDir, 'output.pdf');
      moveIntoJob(input, inputPath);
      const result = await supervisor.run(office, convertRequest(inputPath, outputPath, options), options.timeoutMs ?? this.timeoutMs);
      if (options.stages) Object.assign(options.stages, result.stages);
      const kept = moveOutOfJob(outputPath);
      if (!kept) throw conversionFailed(); // no output at all
      return kept;
    } finally {
      if (jobDir) this.jobDirs.close(office, jobDir);
      this.claimed.delete(supervisor);
      this.admission.dispatch();
    }
  }

  /** Stops every process (soffice.bin included) and removes all temp directories. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.shedQueued();
    await Promise.all(this.supervisors.map((supervisor) => supervisor.stop()));
    this.exitGuard.remove();
  }

  /** Answers every job still waiting with 503 + Retry-After (shutdown: they would not run in time). */
  shedQueued(): void {
    this.admission.shedAll(() => serviceBusy('The document converter is shutting down; retry on another instance.', 1));
  }

  /** What close() does, synchronously and without waiting: for exit and signal handlers. */
  private closeSync(): void {
    this.closed = true;
    for (const supervisor of this.supervisors) supervisor.stopNow();
    this.exitGuard.remove();
  }

  private upCount(): number {
    return this.supervisors.filter((s) => s.up).length;
  }

  /** An idle process nobody has been given, now given to the caller; undefined when there is none. */
  private claimFree(): OfficeSupervisor | undefined {
    const free = this.supervisors.find((s) => s.idle && !this.claimed.has(s));
    if (free) this.claimed.add(free);
    return free;
  }

  private retryAfterSeconds(): number {
    const waves = (this.admission.queued + 1) / Math.max(1, this.upCount());
    return Math.max(1, Math.ceil((waves * this.averageJobMs) / 1000));
  }
}

function convertRequest(input: string, output: string, options: ConvertToPdfOptions): Omit<ConvertRequest, 'id'> {
  return {
    op: 'convert',
    input,
    output,
    trackedChanges: options.trackedChanges ?? 'markup',
    loadFilter: options.loadFilter,
    work: options.work,
    filterOptions: options.filterOptions,
    application: options.application,
    filterData: options.filterData,
    landscape: options.landscape || undefined,
    fitColumns: options.fitColumns || undefined,
  };
}

export { OfficeCrashError, OfficeTimeoutError };
