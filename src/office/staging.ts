import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { readFile, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { instanceRoot } from '../temp/instance-root.js';
import { timed, type ConversionStages } from './stages.js';

/**
 * The files of one conversion, outside and inside the jail. The caller's document is written into
 * the instance root (which the jail does not show) while the job waits for a process, renamed into
 * the process's job directory when the job starts, and the PDF renamed back out into the instance
 * root before it is read: a process never waits for our disk writes and reads, only for two
 * renames. Files up to `syncIoMaxBytes` are written and read with synchronous calls (a thread-pool
 * round trip costs more than copying them). Every path removes what it made.
 */

/** A caller's document written into the instance root, waiting to be moved into a job directory. */
export interface StagedFile {
  path: string;
  moved: boolean;
}

export async function stageInput(data: Buffer, extension: string, syncIoMaxBytes: number, stages?: ConversionStages): Promise<StagedFile> {
  const staged = { path: path.join(instanceRoot(), `in-${randomUUID()}.${extension}`), moved: false };
  const options = { mode: 0o600, flag: 'wx' } as const;
  await timed(stages, 'write', () => (data.length <= syncIoMaxBytes ? writeFileSync(staged.path, data, options) : writeFile(staged.path, data, options)));
  return staged;
}

/** Removes a staged input that never reached a job directory (also when writing it failed half-way). */
export async function discardStaged(staging: Promise<StagedFile>): Promise<void> {
  const staged = await staging.catch(() => undefined);
  if (staged && !staged.moved) removeFile(staged.path);
}

/** Renames the staged input into the job directory under the fixed name the job uses. */
export function moveIntoJob(staged: StagedFile, inputPath: string): void {
  renameSync(staged.path, inputPath);
  staged.moved = true;
}

/** Renames the job's output out of the job directory into the instance root; undefined when there is none. */
export function moveOutOfJob(outputPath: string): string | undefined {
  const kept = path.join(instanceRoot(), `out-${randomUUID()}.pdf`);
  try {
    renameSync(outputPath, kept);
  } catch {
    return undefined;
  }
  return kept;
}

/** The file's bytes, or undefined when there is no such file. */
export async function readOutput(file: string, syncIoMaxBytes: number): Promise<Buffer | undefined> {
  const size = statSync(file, { throwIfNoEntry: false })?.size;
  if (size === undefined) return undefined;
  return size <= syncIoMaxBytes ? readFileSync(file) : readFile(file);
}

/**
 * Removes a PDF read back from the instance root, on the thread pool: LibreOffice fsyncs every PDF it
 * exports, so on a disk the file has blocks to free and its unlink can wait on the file system's
 * journal (measured under load: ~4.5 ms per document with unlinkSync, all of it the event loop
 * standing still). Awaited by the caller, so the file is still gone before the answer.
 */
export async function removeOutput(file: string): Promise<void> {
  await unlink(file).catch(() => undefined); // already gone
}

export function removeFile(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}

/**
 * The job directory of each office process: made once, emptied after every job (the caller's
 * files are gone before the answer), made anew when emptying it failed. Synchronous: a handful of
 * metadata calls on a directory of two or three files, cheaper than the thread-pool round trips
 * they would take. Keyed by the process object, so a replaced process's entry goes with it.
 */
export class JobDirectories {
  /** Owners whose job directory exists and is empty. */
  private readonly empty = new WeakSet<object>();

  /** The owner's empty job directory under `jobsDirectory`, for one job. */
  open(owner: object, jobsDirectory: string): string {
    const jobDir = path.join(jobsDirectory, 'job');
    if (!this.empty.has(owner)) {
      rmSync(jobDir, { recursive: true, force: true });
      mkdirSync(jobDir, { mode: 0o700 });
      this.empty.add(owner);
    }
    this.empty.delete(owner);
    return jobDir;
  }

  /** Empties the job directory after a job: the input and whatever LibreOffice left beside it (a lock file, a PDF it wrote before failing). */
  close(owner: object, jobDir: string): void {
    try {
      for (const name of readdirSync(jobDir)) {
        const entry = path.join(jobDir, name);
        try {
          unlinkSync(entry);
        } catch {
          rmSync(entry, { recursive: true, force: true }); // a directory
        }
      }
      this.empty.add(owner);
    } catch {
      rmSync(jobDir, { recursive: true, force: true });
    }
  }
}
