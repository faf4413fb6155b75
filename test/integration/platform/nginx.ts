import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';

/**
 * A foreground nginx (daemon off) load balancer on loopback whose config, pid, logs and temp
 * paths all live in `dir`. Round-robin over the upstreams; retries on connection errors,
 * timeouts, 502 and 503, POSTs included (`non_idempotent`, as deploy/nginx.conf: docproc's POSTs
 * have no side effects, and a stopping replica may reset a connection accepted an instant before
 * its listener closed).
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

/** The X-Forwarded-For line of the shipped deploy/nginx.conf, so the tests run what users get. */
function shippedForwardedFor(): string {
  const shipped = readFileSync(path.resolve(import.meta.dirname, '../../../deploy/nginx.conf'), 'utf8');
  const line = /^\s*(proxy_set_header X-Forwarded-For [^;]+;)/m.exec(shipped);
  if (!line) throw new Error('deploy/nginx.conf sets no X-Forwarded-For');
  return line[1]!;
}

export function nginxConfig(dir: string, port: number, upstreamPorts: number[]): string {
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
  client_max_body_size 50m;
  upstream docproc {
    # max_fails=0: a refused upstream is never taken out of the rotation, so every request
    # that lands on a stopped instance shows the retry in the access log.
${upstreamPorts.map((p) => `    server 127.0.0.1:${p} max_fails=0;`).join('\n')}
  }
  server {
    listen 127.0.0.1:${port};
    location / {
      proxy_pass http://docproc;
      ${shippedForwardedFor()}
      proxy_connect_timeout 2s;
      proxy_read_timeout 180s;
      proxy_next_upstream error timeout http_502 http_503 non_idempotent;
      proxy_next_upstream_tries 3;
      proxy_next_upstream_timeout 10s;
    }
  }
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

export async function startNginx(dir: string, port: number, upstreamPorts: number[]): Promise<Nginx> {
  mkdirSync(dir, { recursive: true });
  const conf = path.join(dir, 'nginx.conf');
  writeFileSync(conf, nginxConfig(dir, port, upstreamPorts));
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
