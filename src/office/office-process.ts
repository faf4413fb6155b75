import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { encodeRequest, LineDecoder, type BridgeMessage, type ConvertRequest, type ResultMessage } from './bridge-protocol.js';
import { writeProfile } from './profile.js';

/**
 * One warm LibreOffice: a python-UNO bridge process (src/office/uno-bridge.py) that owns a
 * soffice process with a private profile, TMPDIR and UNO pipe. The bridge is started as the
 * leader of its own process group, so killing the group takes soffice.bin with it.
 */
export interface OfficeProcessOptions {
  pythonPath: string;
  sofficePath: string;
  startTimeoutMs: number;
}

export class OfficeStartError extends Error {}
/** The job outlived its deadline; the process has been killed. */
export class OfficeTimeoutError extends Error {}
/** The bridge or soffice died (or spoke garbage) while the job ran. */
export class OfficeCrashError extends Error {}

/** The directory holding package.json, found from this file in src/ (tsx) or dist/src/. */
function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error('package.json not found above src/office');
    dir = parent;
  }
  return dir;
}

export const BRIDGE_PATH = path.join(packageRoot(), 'src', 'office', 'uno-bridge.py');

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
  async start(): Promise<void> {
    this.workDir = await mkdtemp(path.join(os.tmpdir(), 'docproc-office-'));
    const profileDir = path.join(this.workDir, 'profile');
    const tmpDir = path.join(this.workDir, 'tmp');
    await mkdir(tmpDir, { mode: 0o700 });
    await writeProfile(profileDir);
    this.pipeName = `docproc-${process.pid}-${randomUUID().slice(0, 12)}`;
    this.profileUrl = pathToFileURL(profileDir).href;

    const child = spawn(this.options.pythonPath, [BRIDGE_PATH, this.options.sofficePath, profileDir, this.pipeName, this.workDir], {
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, TMPDIR: tmpDir, DOCPROC_OFFICE_START_TIMEOUT: String(this.options.startTimeoutMs / 1000) },
    });
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
            resolve();
          } else this.handleMessage(message);
        },
        (line) => this.handleGarbage(line),
      );
      child.stdout?.on('data', (chunk: Buffer) => decoder.push(chunk));
      child.once('error', (err) => fail(err.message));
      child.once('exit', (code, signal) => {
        this.exited = true;
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
      this.pending = { id, resolve, reject, timer };
      this.child!.stdin!.write(encodeRequest({ ...request, id }));
    });
  }

  /** Kills the whole process group and removes the profile, temp dir and leftover pipe files. */
  async kill(): Promise<void> {
    this.killRequested = true;
    const child = this.child;
    if (child?.pid !== undefined && !this.exited) {
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // ESRCH: already gone.
      }
      await Promise.race([this.exitPromise, new Promise((r) => setTimeout(r, 2_000))]);
    }
    await this.removeFiles();
  }

  /** Synchronous last-resort kill and cleanup for process exit and signal handlers. */
  killSync(): void {
    if (this.child?.pid !== undefined && !this.exited) {
      try {
        process.kill(-this.child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
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
    const { resolve, timer } = this.pending;
    clearTimeout(timer);
    this.pending = undefined;
    resolve(message);
  }

  private handleGarbage(line: string): void {
    this.failPending(new OfficeCrashError(`the office bridge sent an unreadable reply (${line.slice(0, 80)})`));
    void this.kill();
  }

  private failPending(err: Error): void {
    if (!this.pending) return;
    const { reject, timer } = this.pending;
    clearTimeout(timer);
    this.pending = undefined;
    reject(err);
  }
}
