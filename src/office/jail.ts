import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * The sandbox every office process (python bridge + soffice) runs in: bubblewrap with fresh
 * namespaces for everything (no network at all, its own pids, IPC and hostname), read-only system
 * directories, and a private /tmp that holds only this process's work directory (profile, temp
 * files, the current job). The service's environment, DATA_DIR and the application directory are
 * not visible. Set up once per office process, so warm conversions pay nothing for it.
 */

/** Where the process's work directory appears inside the jail. */
export const JAIL_WORK_DIR = '/tmp/office';
/**
 * Where the work directory's jobs/ appears too: the document's own path, which path-revealing
 * fields (FILENAME \p, TEMPLATE \p) print, then says nothing about the server.
 */
export const JAIL_JOBS_DIR = '/document';
/** Where the bridge script appears inside the jail (the application directory stays outside). */
export const JAIL_BRIDGE_PATH = '/opt/docproc/uno-bridge.py';

/** Read-only system paths LibreOffice, python3-uno and fontconfig need (Debian 12, merged /usr). */
const READ_ONLY_PATHS = ['/usr', '/etc/fonts', '/etc/libreoffice', '/etc/alternatives', '/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/localtime', '/etc/mime.types', '/etc/passwd', '/etc/group', '/etc/nsswitch.conf', '/etc/python3', '/etc/python3.11', '/etc/ssl/certs', '/var/cache/fontconfig'];
const MERGED_USR_LINKS: Array<[string, string]> = [['usr/bin', '/bin'], ['usr/sbin', '/sbin'], ['usr/lib', '/lib'], ['usr/lib64', '/lib64']];

export interface JailSpec {
  /** Host path of this office process's private work directory (bound read-write at JAIL_WORK_DIR). */
  workDir: string;
  /** Host path of the bridge script (bound read-only at JAIL_BRIDGE_PATH). */
  bridgePath: string;
  /** The only environment the jailed process gets. */
  env: Record<string, string>;
}

/** bubblewrap arguments (before the command to run) for one office process. */
export function bubblewrapArgs(spec: JailSpec): string[] {
  const args = ['--unshare-all', '--die-with-parent', '--clearenv', '--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp'];
  for (const p of READ_ONLY_PATHS) if (existsSync(p)) args.push('--ro-bind', p, p);
  for (const [target, link] of MERGED_USR_LINKS) if (existsSync(`/${target}`)) args.push('--symlink', target, link);
  args.push('--bind', spec.workDir, JAIL_WORK_DIR, '--bind', path.join(spec.workDir, 'jobs'), JAIL_JOBS_DIR);
  args.push('--ro-bind', spec.bridgePath, JAIL_BRIDGE_PATH, '--chdir', JAIL_WORK_DIR);
  for (const [name, value] of Object.entries(spec.env)) args.push('--setenv', name, value);
  return args;
}

/** The environment of an office process: nothing of the service's, only what LibreOffice needs. */
export function officeEnvironment(homeDir: string, tmpDir: string, startTimeoutMs: number): Record<string, string> {
  return {
    PATH: '/usr/bin:/bin',
    HOME: homeDir,
    TMPDIR: tmpDir,
    LANG: 'C.UTF-8',
    DOCPROC_OFFICE_START_TIMEOUT: String(startTimeoutMs / 1000),
  };
}

export interface JailSupport {
  available: boolean;
  /** Why not, when unavailable. */
  reason?: string;
}

let cachedSupport: JailSupport | undefined;

/** Whether bubblewrap exists and can create the namespaces here (probed once per process). */
export function probeJail(bwrapPath = 'bwrap'): JailSupport {
  if (cachedSupport) return cachedSupport;
  const result = spawnSync(bwrapPath, ['--unshare-all', '--die-with-parent', '--ro-bind', '/usr', '/usr', '--symlink', 'usr/bin', '/bin', '--symlink', 'usr/lib', '/lib', '--symlink', 'usr/lib64', '/lib64', '--proc', '/proc', '--dev', '/dev', '/usr/bin/true'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    timeout: 10_000,
  });
  cachedSupport =
    result.status === 0
      ? { available: true }
      : { available: false, reason: result.error ? `${bwrapPath}: ${result.error.message}` : `bubblewrap failed: ${result.stderr?.toString().trim() || `exit ${result.status}`}` };
  return cachedSupport;
}

/**
 * Start-up policy: office processes run jailed; where the jail cannot be set up the service refuses
 * to start, unless OFFICE_ALLOW_UNJAILED=true says otherwise (logged as a warning). Returns whether
 * to jail.
 */
export function decideJail(support: JailSupport, allowUnjailed: boolean, warn: (message: string) => void): boolean {
  if (support.available) return true;
  if (!allowUnjailed) {
    throw new Error(`LibreOffice cannot be jailed here (${support.reason}); install bubblewrap with user namespaces enabled, or set OFFICE_ALLOW_UNJAILED=true to run it unjailed`);
  }
  warn(`OFFICE_ALLOW_UNJAILED=true: LibreOffice runs WITHOUT its jail (${support.reason}); a LibreOffice hole would reach this host`);
  return false;
}
