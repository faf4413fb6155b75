import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { readdir, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';

/**
 * Every temp file of one service instance lives under one root, `$TMPDIR/docproc-<pid>-<random>`,
 * holding an `owner` file with the pid and the process's start time (so a recycled pid is not
 * taken for the owner). A start-up sweep removes the roots whose owner is gone: a service killed
 * with SIGKILL or by the OOM killer cannot clean up after itself, and caller documents must not
 * survive it. The root is removed on a normal exit.
 */
export const ROOT_PREFIX = 'docproc-';
const OWNER_FILE = 'owner';
/** Office work directories made before instance roots existed: docproc-office-<pid>-*. */
const LEGACY_OFFICE_DIR = /^docproc-office-(\d+)-/;
const ROOT_DIR = /^docproc-(\d+)-[A-Za-z0-9]+$/;

let root: string | undefined;

/** Start time of a process in clock ticks since boot (Linux), or undefined when unknown. */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces and parentheses) start after the last ')'.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  } catch {
    return undefined;
  }
}

const processAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/** True when the process recorded in an owner file (`<pid> <start time>`) still runs. */
export function ownerAlive(owner: string): boolean {
  const [pidText, startTime] = owner.trim().split(/\s+/);
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0 || !processAlive(pid)) return false;
  const current = processStartTime(pid);
  return startTime === undefined || current === undefined || current === startTime;
}

/** This instance's root, created on first use (mode 0700) and removed when the process exits. */
export function instanceRoot(): string {
  if (root) return root;
  const made = mkdtempSync(path.join(os.tmpdir(), `${ROOT_PREFIX}${process.pid}-`));
  mkdirSync(made, { recursive: true, mode: 0o700 });
  writeFileSync(path.join(made, OWNER_FILE), `${process.pid} ${processStartTime(process.pid) ?? ''}\n`, { mode: 0o600 });
  process.once('exit', () => rmSync(made, { recursive: true, force: true }));
  root = made;
  return made;
}

/**
 * Removes the instance roots (and legacy office directories) in `tmpDir` whose owner is gone;
 * never this instance's or another live one's. `beforeRemove` sees each dead root first (the
 * office module removes the UNO pipe files LibreOffice left outside it). Returns what was removed.
 */
export async function sweepDeadInstances(tmpDir = os.tmpdir(), beforeRemove?: (dir: string, ownerPid: number) => Promise<void> | void): Promise<string[]> {
  const removed: string[] = [];
  let names: string[];
  try {
    names = await readdir(tmpDir);
  } catch {
    return removed;
  }
  for (const name of names) {
    const dir = path.join(tmpDir, name);
    let ownerPid: number;
    let dead: boolean;
    const legacy = LEGACY_OFFICE_DIR.exec(name);
    if (legacy) {
      ownerPid = Number(legacy[1]);
      dead = !processAlive(ownerPid);
    } else if (ROOT_DIR.test(name)) {
      let owner = '';
      try {
        owner = readFileSync(path.join(dir, OWNER_FILE), 'utf8');
      } catch {
        // A root without an owner file is one whose creation was cut short: judge by the pid in its name.
        owner = ROOT_DIR.exec(name)![1]!;
      }
      ownerPid = Number(owner.trim().split(/\s+/)[0]);
      dead = dir !== root && !ownerAlive(owner);
    } else continue;
    if (!dead) continue;
    await beforeRemove?.(dir, ownerPid);
    await rm(dir, { recursive: true, force: true }).catch(() => {});
    removed.push(dir);
  }
  return removed;
}
