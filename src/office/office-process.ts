import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { encodeRequest, LineDecoder, type BridgeMessage, type ConvertRequest, type ResultMessage } from './bridge-protocol.js';
import { bubblewrapArgs, JAIL_BRIDGE_PATH, JAIL_JOBS_DIR, JAIL_WORK_DIR, officeEnvironment } from './jail.js';
import { dataLimitPrefix, GroupMemory, processGroupMembers } from './memory-watch.js';
import { nicePrefix } from '../compute/background-priority.js';
import { writeProfile } from './profile.js';
import { projectRoot } from '../project-root.js';
import { instanceRoot, sweepDeadInstances } from '../temp/instance-root.js';

/**
 * One warm LibreOffice: a python-UNO bridge process (src/office/uno-bridge.py) that owns a
 * soffice process with a private profile, TMPDIR and UNO pipe. The bridge is started as the
 * leader of its own process group, so killing the group takes soffice.bin with it. With `jail`,
 * both run inside bubblewrap (see jail.ts) and see only this process's work directory.
 */
export interface OfficeProcessOptions {
  pythonPath: string;
  sofficePath: string;
  startTimeoutMs: number;
  /** Run inside the bubblewrap jail (the pool decides, from probeJail()). */
  jail: boolean;
  /**
   * Most resident memory the whole process group may hold while it works: sampled every
   * MEMORY_SAMPLE_MS during a job, and a job that passes it is stopped (OfficeMemoryError).
   */
  memoryLimitBytes?: number;
  /** RLIMIT_DATA of every process of the group (the kernel's backstop for growth between samples). */
  dataLimitBytes?: number;
  /**
   * Nice steps below the service (background-priority.ts): LibreOffice renders at a lower priority
   * than the event loop, set by nice(1) before anything starts and inherited by all it starts.
   */
  nice?: number;
}

export class OfficeStartError extends Error {}
/** The job outlived its deadline; the process has been killed. */
export class OfficeTimeoutError extends Error {}
/** The bridge or soffice died (or spoke garbage) while the job ran. */
export class OfficeCrashError extends Error {}
/** The job took the process group past its memory limit; the process has been killed. */
export class OfficeMemoryError extends Error {
  constructor(readonly limitBytes: number, readonly rssBytes: number) {
    super(`LibreOffice needed more than ${Math.round(limitBytes / 2 ** 20)} MB (${Math.round(rssBytes / 2 ** 20)} MB resident) and was stopped`);
  }
}

/** How often a working process group's memory is read (a read costs a few microseconds per process). */
export const MEMORY_SAMPLE_MS = 100;

/**
 * Removes what dead service instances left in the temp directory (their instance roots, office
 * profiles and job files included) and the UNO pipe files their unjailed office processes left
 * in /tmp. Live instances, this one included, are left alone. Returns the directories removed.
 */
export async function sweepLeftovers(tmpDir = os.tmpdir()): Promise<string[]> {
  return sweepDeadInstances(tmpDir, async (dir, ownerPid) => {
    const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
    const pipes = (await readdir('/tmp').catch(() => [] as string[])).filter((f) => f.startsWith(`OSL_PIPE_${uid}_docproc-${ownerPid}-`));
    const profiles = await profileDirectories(dir);
    const singleInstancePipes = profiles.map((p) => officePipeFiles('', pathToFileURL(p).href)[1]!);
    await Promise.all([...pipes.map((f) => path.join('/tmp', f)), ...singleInstancePipes].map((f) => rm(f, { force: true }).catch(() => {})));
  });
}

/** Office profile directories inside a dead root (or a legacy office work directory). */
async function profileDirectories(dir: string): Promise<string[]> {
  const entries = await readdir(dir).catch(() => [] as string[]);
  if (entries.includes('profile')) return [path.join(dir, 'profile')];
  return entries.filter((e) => e.startsWith('office-')).map((e) => path.join(dir, e, 'profile'));
}

/**
 * A process group of its own (killed as one), in the service's session: not `detached`, whose setsid
 * would also give it a session of its own, which the kernel's autogroup scheduling (a VM without cpu
 * cgroups) weighs as much as the whole service, so LibreOffice would take cores from the event loop
 * whatever its nice value. In the service's session its nice value (BACKGROUND_NICE) is what counts, as
 * in a container. The launcher execs the rest: the pid, and so the group id, stay the same.
 */
function ownProcessGroup(pythonPath: string): string[] {
  return [pythonPath, '-c', 'import os, sys; os.setpgid(0, 0); os.execvp(sys.argv[1], sys.argv[1:])'];
}

/** SIGKILL to the process group the bridge leads (ownProcessGroup: it is its own group). */
function killGroup(pgid: number | undefined): void {
  if (pgid === undefined) return;
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // ESRCH: the group is empty.
  }
}

export const BRIDGE_PATH = path.join(projectRoot, 'src', 'office', 'uno-bridge.py');

/**
 * LibreOffice leaves its UNO pipes as socket files in /tmp when it is killed: the one we name,
 * and the single-instance pipe named after the MD5 of the profile URL (UTF-16LE, bytes printed
 * in hex without zero padding, as desktop/source/app/officeipcthread.cxx does).
 */
export function officePipeFiles(pipeName: string, profileUrl: string): string[] {
  const uid = typeof process.getuid === 'function' ? process.getuid() : 0;
  const digest = createHash('md5').update(Buffer.from(profileUrl, 'utf16le')).digest();
  const hash = [...digest].map((byte) => byte.toString(16)).join('');
  return [`/tmp/OSL_PIPE_${uid}_${pipeName}`, `/tmp/OSL_PIPE_${uid}_SingleOfficeIPC_${hash}`];
}

interface PendingJob {
  id: number;
  resolve: (result: ResultMessage) => void;
  reject: (err: Error) => void;
  timer: NodeJS.Timeout;
  memoryWatch?: NodeJS.Timeout;
}

export class OfficeProcess {
  private child?: ChildProcess;
  private workDir?: string;
  private pipeName = '';
  private profileUrl = '';
  private pending?: PendingJob;
  private nextId = 1;
  private exited = false;
  /** Set when we kill the process ourselves, so its exit is not reported as a crash. */
  private killRequested = false;
  private exitPromise: Promise<void> = Promise.resolve();
  private stderrTail = '';
  private memory?: GroupMemory;
  /** Highest resident memory of the group seen during the current or last job. */
  private jobPeakRss = 0;
  /** Set once by the owner; called when the process goes away without kill() having been called. */
  onExit?: (reason: string) => void;

  constructor(private readonly options: OfficeProcessOptions) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get alive(): boolean {
    return this.child !== undefined && !this.exited;
  }

  get busy(): boolean {
    return this.pending !== undefined;
  }

  /** Starts the bridge and soffice; resolves once the bridge reports a live UNO connection. */
  /** Host directory where the current job's files go (inside the work directory the jail sees). */
  get jobsDirectory(): string | undefined {
    return this.workDir && path.join(this.workDir, 'jobs');
  }

  /** The path the office process sees for a host path inside the work directory. */
  private officePath(hostPath: string): string {
    if (!this.options.jail || !this.workDir) return hostPath;
    const inJobs = path.relative(path.join(this.workDir, 'jobs'), hostPath);
    if (!inJobs.startsWith('..') && !path.isAbsolute(inJobs)) return path.posix.join(JAIL_JOBS_DIR, inJobs);
    const relative = path.relative(this.workDir, hostPath);
    if (relative.startsWith('..') || path.isAbsolute(relative)) throw new Error('job files must live in the office work directory');
    return path.posix.join(JAIL_WORK_DIR, relative);
  }

  async start(): Promise<void> {
    // Under the instance root, which a later start removes if this service is killed (sweepLeftovers).
    this.workDir = await mkdtemp(path.join(instanceRoot(), 'office-'));
    const profileDir = path.join(this.workDir, 'profile');
    const tmpDir = path.join(this.workDir, 'tmp');
    await mkdir(tmpDir, { mode: 0o700 });
    await mkdir(path.join(this.workDir, 'jobs'), { mode: 0o700 });
    await writeProfile(profileDir);
    this.pipeName = `docproc-${process.pid}-${randomUUID().slice(0, 12)}`;
    this.profileUrl = pathToFileURL(profileDir).href;

    const env = officeEnvironment(this.officePath(this.workDir), this.officePath(tmpDir), this.options.startTimeoutMs);
    const bridgeArgs = [this.options.sofficePath, this.officePath(profileDir), this.pipeName, this.officePath(this.workDir)];
    // Never the service's environment: it holds the pepper, the Redis and SMTP URLs, the signing password.
    // prlimit sets the data limit and execs the rest: the pid, and so the process group, stay the same.
    const command = this.options.jail
      ? ['bwrap', ...bubblewrapArgs({ workDir: this.workDir, bridgePath: BRIDGE_PATH, env }), this.options.pythonPath, JAIL_BRIDGE_PATH, ...bridgeArgs]
      : [this.options.pythonPath, BRIDGE_PATH, ...bridgeArgs];
    const nice = this.options.nice ?? 0;
    const [file, ...args] = [...ownProcessGroup(this.options.pythonPath), ...nicePrefix(nice), ...dataLimitPrefix(this.options.dataLimitBytes), ...command];
    const child = spawn(file!, args, { stdio: ['pipe', 'pipe', 'pipe'], env: this.options.jail ? { PATH: process.env.PATH ?? '/usr/bin:/bin' } : env });
    this.child = child;
    this.exitPromise = new Promise((resolve) => child.once('exit', () => resolve()));
    child.stdin?.on('error', () => {});
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderrTail = (this.stderrTail + chunk.toString()).slice(-4000);
    });

    await new Promise<void>((resolve, reject) => {
      const fail = (why: string) => {
        clearTimeout(timer);
        reject(new OfficeStartError(`LibreOffice did not start: ${why}`));
      };
      const timer = setTimeout(() => fail('no answer before the start deadline'), this.options.startTimeoutMs + 5_000);
      const decoder = new LineDecoder(
        (message) => {
          if (message.type === 'ready') {
            clearTimeout(timer);
            this.memory = new GroupMemory(child.pid!);
            resolve();
          } else this.handleMessage(message);
        },
        (line) => this.handleGarbage(line),
      );
      child.stdout?.on('data', (chunk: Buffer) => decoder.push(chunk));
      child.once('error', (err) => fail(err.message));
      child.once('exit', (code, signal) => {
        this.exited = true;
        // The bridge is gone but soffice.bin and oosplash may live on in its process group
        // (re-parented to init): end them now, whoever killed the bridge.
        killGroup(child.pid);
        const why = `bridge exited (code ${code}, signal ${signal})`;
        fail(`${why}: ${this.stderrTail.trim().split('\n').slice(-2).join(' | ')}`);
        this.failPending(new OfficeCrashError(`LibreOffice stopped during the job (${why})`));
        if (!this.killRequested) this.onExit?.(why);
      });
    }).catch(async (err: unknown) => {
      await this.kill();
      throw err;
    });
  }

  /** Sends one job; rejects with OfficeTimeoutError (after killing the process) or OfficeCrashError. */
  run(request: Omit<ConvertRequest, 'id'>, timeoutMs: number): Promise<ResultMessage> {
    if (!this.alive || !this.child?.stdin) return Promise.reject(new OfficeCrashError('LibreOffice process is not running'));
    if (this.pending) return Promise.reject(new Error('OfficeProcess runs one job at a time'));
    const id = this.nextId++;
    return new Promise<ResultMessage>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.failPending(new OfficeTimeoutError(`LibreOffice did not finish within ${timeoutMs} ms`));
        void this.kill();
      }, timeoutMs);
      this.pending = { id, resolve, reject, timer, memoryWatch: this.watchMemory() };
      this.child!.stdin!.write(encodeRequest({ ...request, input: this.officePath(request.input), output: this.officePath(request.output), id }));
    });
  }

  /** Highest resident memory of the process group seen during the last job (0 when not watched). */
  get lastJobPeakRss(): number {
    return this.jobPeakRss;
  }

  /** Samples the group's memory while the job runs and stops the job when it passes the limit. */
  private watchMemory(): NodeJS.Timeout | undefined {
    const limit = this.options.memoryLimitBytes;
    this.jobPeakRss = 0;
    if (!limit || !this.memory) return undefined;
    const memory = this.memory;
    return setInterval(() => {
      const rss = memory.rss();
      if (rss > this.jobPeakRss) this.jobPeakRss = rss;
      if (rss <= limit) return;
      this.failPending(new OfficeMemoryError(limit, rss));
      void this.kill();
    }, MEMORY_SAMPLE_MS).unref();
  }

  /** Kills the whole process group and removes the profile, temp dir and leftover pipe files. */
  async kill(): Promise<void> {
    this.killRequested = true;
    const child = this.child;
    // Also after the bridge has exited: members of its group may outlive it.
    killGroup(child?.pid);
    if (child?.pid !== undefined && !this.exited) await Promise.race([this.exitPromise, new Promise((r) => setTimeout(r, 2_000))]);
    // The jail's inner bwrap (its pid namespace's init) outlives the bridge while it tears the
    // namespace down, at the office's low priority: wait for the whole group (bounded).
    for (let waited = 0; child?.pid !== undefined && waited < 2_000 && processGroupMembers(child.pid).length > 0; waited += 20) await new Promise((r) => setTimeout(r, 20));
    await this.removeFiles();
  }

  /** Synchronous last-resort kill and cleanup for process exit and signal handlers. */
  killSync(): void {
    killGroup(this.child?.pid);
    const files = this.pipeName ? officePipeFiles(this.pipeName, this.profileUrl) : [];
    for (const p of [...files, ...(this.workDir ? [this.workDir] : [])]) rmSync(p, { recursive: true, force: true });
  }

  private async removeFiles(): Promise<void> {
    const files = this.pipeName ? officePipeFiles(this.pipeName, this.profileUrl) : [];
    const dirs = this.workDir ? [this.workDir] : [];
    await Promise.all([...files, ...dirs].map((p) => rm(p, { recursive: true, force: true }).catch(() => {})));
  }

  private handleMessage(message: BridgeMessage): void {
    if (message.type !== 'result' || !this.pending || this.pending.id !== message.id) return;
    const { resolve, timer, memoryWatch } = this.pending;
    clearTimeout(timer);
    clearInterval(memoryWatch);
    this.pending = undefined;
    resolve(message);
  }

  private handleGarbage(line: string): void {
    this.failPending(new OfficeCrashError(`the office bridge sent an unreadable reply (${line.slice(0, 80)})`));
    void this.kill();
  }

  private failPending(err: Error): void {
    if (!this.pending) return;
    const { reject, timer, memoryWatch } = this.pending;
    clearTimeout(timer);
    clearInterval(memoryWatch);
    this.pending = undefined;
    reject(err);
  }
}
