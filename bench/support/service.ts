import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/**
 * Runs the real service as a child process (`node --import tsx src/server.ts`, or with `compiled`
 * tsc's `dist/src/server.js` as `npm start` runs it; one process, so its pid is the server's and
 * SIGTERM reaches it directly) and samples its memory from /proc. Shared by the benches and the
 * platform integration tests.
 */
export const projectRoot = path.resolve(import.meta.dirname, '../..');

export interface ServiceProcess {
  readonly name: string;
  readonly port: number;
  readonly base: string;
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resolves with the exit code once the process has exited. */
  readonly exited: Promise<number | null>;
  log(): string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves with the exit code. */
  stop(graceMs?: number): Promise<number | null>;
}

export interface StartOptions {
  name: string;
  port: number;
  env: Record<string, string>;
  /** Give up waiting for /v1/health/ready after this long (the office pool starts first). */
  readyTimeoutMs?: number;
  /** Node options before the entry point (e.g. --cpu-prof, which NODE_OPTIONS does not take). */
  nodeArgs?: string[];
  /** The checkout to run (default: this one), e.g. a copy of main for a paired before/after bench. */
  root?: string;
  /**
   * Run tsc's output (`dist/src/server.js`, built by buildCompiled) as production does, instead of
   * the TypeScript sources through tsx (its loader thread, source maps and the workers' own tsx
   * cost CPU per request that a deployed replica does not pay).
   */
  compiled?: boolean;
}

/** Compiles `root` (default: this checkout) with its own tsc into its dist/, as `npm start` does before it runs the service. */
export function buildCompiled(root = projectRoot): void {
  execFileSync(path.join(root, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.json'], { cwd: root, stdio: 'inherit' });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function startService(options: StartOptions): Promise<ServiceProcess> {
  const entry = options.compiled ? ['dist/src/server.js'] : ['--import', 'tsx', 'src/server.ts'];
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), ...entry], {
    cwd: options.root ?? projectRoot,
    env: { ...process.env, LOG_LEVEL: 'warn', ...options.env, PORT: String(options.port), HOST: '127.0.0.1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  const keep = (chunk: Buffer) => {
    log += chunk.toString();
    if (log.length > 200_000) log = log.slice(-100_000);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code, signal) => {
      exitCode = code ?? (signal ? 128 : null);
      resolve(exitCode);
    }),
  );
  const base = `http://127.0.0.1:${options.port}`;
  const service: ServiceProcess = {
    name: options.name,
    port: options.port,
    base,
    child,
    pid: child.pid!,
    exited,
    log: () => log,
    async stop(graceMs = 15_000) {
      if (exitCode !== undefined) return exitCode;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      const code = await exited;
      clearTimeout(timer);
      return code;
    },
  };
  const deadline = Date.now() + (options.readyTimeoutMs ?? 90_000);
  while (Date.now() < deadline) {
    if (exitCode !== undefined) throw new Error(`${options.name} exited with ${exitCode} before it was ready:\n${log.slice(-4000)}`);
    const status = await fetch(`${base}/v1/health/ready`).then((r) => r.status, () => 0);
    if (status === 200) return service;
    await sleep(150);
  }
  await service.stop(2000);
  throw new Error(`${options.name} was not ready within ${options.readyTimeoutMs ?? 90_000} ms:\n${log.slice(-4000)}`);
}

/**
 * An API key of a running service, through its own account routes: register, the code from the
 * development outbox in its log (SMTP_URL unset), verify.
 */
export async function issueKey(service: ServiceProcess, email: string): Promise<string> {
  await fetch(`${service.base}/v1/auth/register?email=${encodeURIComponent(email)}`).then((r) => r.arrayBuffer());
  let code: string | undefined;
  for (let i = 0; i < 50 && !code; i++) {
    code = /code is (\d{6})/.exec(service.log())?.[1];
    if (!code) await sleep(100);
  }
  if (!code) throw new Error(`${service.name}: no verification code in the service log`);
  return (await fetch(`${service.base}/v1/auth/verify?email=${encodeURIComponent(email)}&code=${code}`).then((r) => r.json())) as string;
}

interface ProcInfo {
  pid: number;
  ppid: number;
  comm: string;
  rssBytes: number;
}

function readProc(pid: number): ProcInfo | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm is in parentheses and may contain spaces; the fields after it are space-separated.
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const fields = stat.slice(close + 2).split(' ');
    if (fields[0] === 'Z') return undefined;
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const rssKb = Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1] ?? 0);
    return { pid, ppid: Number(fields[1]), comm, rssBytes: rssKb * 1024 };
  } catch {
    return undefined; // exited between listing and reading
  }
}

export interface TreeMemory {
  /** RSS of the service process itself (Node, with its worker threads). */
  nodeBytes: number;
  /** RSS of every soffice process below it. */
  officeBytes: number;
  /** RSS of the other descendants (the python UNO bridges). */
  otherBytes: number;
  totalBytes: number;
  officePids: number[];
}

/** Memory of a process and all its descendants, from /proc (Linux only). */
export function processTreeMemory(rootPid: number): TreeMemory {
  const all = readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map((name) => readProc(Number(name)))
    .filter((p): p is ProcInfo => p !== undefined);
  const family = new Set([rootPid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all) if (family.has(p.ppid) && !family.has(p.pid)) (family.add(p.pid), (grew = true));
  }
  const memory: TreeMemory = { nodeBytes: 0, officeBytes: 0, otherBytes: 0, totalBytes: 0, officePids: [] };
  for (const p of all) {
    if (!family.has(p.pid)) continue;
    if (p.pid === rootPid) memory.nodeBytes += p.rssBytes;
    else if (p.comm.startsWith('soffice')) {
      memory.officeBytes += p.rssBytes;
      memory.officePids.push(p.pid);
    } else memory.otherBytes += p.rssBytes;
    memory.totalBytes += p.rssBytes;
  }
  return memory;
}

export const mb = (bytes: number) => Math.round(bytes / 1048576);
