import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/**
 * A foreground nginx (daemon off) load balancer on loopback running the shipped deploy/nginx.conf:
 * its upstream and server blocks as written, with the replicas' loopback ports in place of the
 * Docker service name (nginx 1.22 here has no upstream `resolve`), and its own pid, logs and temp
 * paths in `dir`. The access log records every upstream each request was sent to.
 */
export interface Nginx {
  base: string;
  child: ChildProcess;
  /** Parsed access log: one line per client request, with every upstream tried. */
  accessLog(): AccessEntry[];
  errorLog(): string;
  stop(): Promise<void>;
}

export interface AccessEntry {
  method: string;
  uri: string;
  status: number;
  /** Upstreams tried in order ("127.0.0.1:1234"), and what each answered ("502" for refused). */
  upstreams: string[];
  upstreamStatuses: string[];
}

export interface NginxOptions {
  /**
   * Parameters of each upstream server line instead of the shipped ones, e.g. "max_fails=0" so a
   * stopped replica stays in the rotation and every request that meets it shows its retry.
   */
  serverParameters?: string;
}

const SHIPPED = path.resolve(import.meta.dirname, '../../../deploy/nginx.conf');

/** The shipped upstream and server blocks, pointed at loopback replicas and a loopback port. */
export function shippedSites(port: number, upstreamPorts: number[], options: NginxOptions = {}): string {
  const shipped = readFileSync(SHIPPED, 'utf8').replace(/^\s*#.*$/gm, '');
  const server = /^\s*server docproc:3000 resolve ([^;]*);/m.exec(shipped);
  if (!server) throw new Error('deploy/nginx.conf: no "server docproc:3000 resolve …;" line in its upstream');
  const parameters = options.serverParameters ?? server[1]!;
  const upstreams = upstreamPorts.map((p) => `  server 127.0.0.1:${p} ${parameters};`).join('\n');
  const sites = shipped
    .replace(/^\s*resolver [^;]*;/m, '')
    .replace(server[0], `\n${upstreams}`)
    .replace(/^(\s*)listen 80;/m, `$1listen 127.0.0.1:${port};`);
  if (!sites.includes(`listen 127.0.0.1:${port};`)) throw new Error('deploy/nginx.conf: no "listen 80;" line');
  return sites;
}

export function nginxConfig(dir: string, port: number, upstreamPorts: number[], options: NginxOptions = {}): string {
  const runAsRoot = process.getuid?.() === 0 ? 'user root root;' : '';
  return `daemon off;
${runAsRoot}
worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/error.log notice;
events { worker_connections 512; }
http {
  log_format lb '$request_method|$uri|$status|$upstream_addr|$upstream_status';
  access_log ${dir}/access.log lb;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
${shippedSites(port, upstreamPorts, options)}
}
`;
}

function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host: '127.0.0.1' }, () => {
      socket.destroy();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function killQuietly(pid: number) {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

export async function startNginx(dir: string, port: number, upstreamPorts: number[], options: NginxOptions = {}): Promise<Nginx> {
  mkdirSync(dir, { recursive: true });
  const conf = path.join(dir, 'nginx.conf');
  writeFileSync(conf, nginxConfig(dir, port, upstreamPorts, options));
  // -e: the start-up error log goes to dir too, never to /var/log/nginx.
  const child = spawn('nginx', ['-p', dir, '-c', conf, '-e', path.join(dir, 'error.log')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  let gone = false;
  void exited.then(() => (gone = true));
  for (let i = 0; i < 100 && !(await listening(port)); i++) {
    if (gone) throw new Error(`nginx did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const read = (file: string) => {
    try {
      return readFileSync(path.join(dir, file), 'utf8');
    } catch {
      return '';
    }
  };
  return {
    base: `http://127.0.0.1:${port}`,
    child,
    errorLog: () => read('error.log'),
    accessLog: () =>
      read('access.log')
        .split('\n')
        .filter(Boolean)
        .map((line) => {
          const [method, uri, status, addrs, statuses] = line.split('|');
          return { method: method!, uri: uri!, status: Number(status), upstreams: addrs!.split(', '), upstreamStatuses: statuses!.split(', ') };
        }),
    async stop() {
      if (gone) return;
      const workers = childrenOf(child.pid!);
      child.kill('SIGQUIT'); // graceful: finish open requests, then exit
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        for (const pid of workers) killQuietly(pid);
      }, 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
