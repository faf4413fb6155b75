import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bubblewrapArgs, decideJail, JAIL_WORK_DIR, officeEnvironment, probeJail } from '../../../src/office/jail.js';
import { BRIDGE_PATH } from '../../../src/office/office-process.js';
import { OfficePool } from '../../../src/office/index.js';
import { projectRoot } from '../../../src/project-root.js';

/**
 * The LibreOffice jail, checked from the inside and from the outside: a probe run in the same
 * sandbox cannot read DATA_DIR, the application directory or the service's environment, and has no
 * network; the soffice.bin the pool runs lives in other namespaces with a clean environment.
 */
const SECRET_ENV = 'DOCPROC_JAIL_TEST_SECRET';
const SECRET_VALUE = 'pepper-that-must-not-leak-5e1f';
let dataDir: string;
let workDir: string;
let server: http.Server;
let port: number;
let hits = 0;

beforeAll(async () => {
  process.env[SECRET_ENV] = SECRET_VALUE;
  // Not under /tmp: the jail hides /tmp anyway, DATA_DIR must be hidden wherever it is.
  dataDir = mkdtempSync(path.join(os.homedir(), '.docproc-jail-data-'));
  writeFileSync(path.join(dataDir, 'signing-key.pem'), 'PRIVATE KEY MATERIAL');
  workDir = mkdtempSync(path.join(os.tmpdir(), 'docproc-jail-work-'));
  mkdirSync(path.join(workDir, 'jobs'));
  server = http.createServer((_req, res) => {
    hits++;
    res.end('reached');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  delete process.env[SECRET_ENV];
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(workDir, { recursive: true, force: true });
  await new Promise((resolve) => server.close(resolve));
});

const PROBE = `
import json, os, socket
out = {}
def attempt(name, fn):
    try:
        out[name] = ["ok", str(fn())[:200]]
    except Exception as e:
        out[name] = ["error", type(e).__name__]
attempt("data_dir", lambda: open(os.environ.get("PROBE_DATA") or "/nonexistent").read())
attempt("data_dir_listing", lambda: os.listdir(os.path.dirname(os.environ.get("PROBE_DATA") or "/nonexistent")))
attempt("app_dir", lambda: open(os.environ.get("PROBE_APP") or "/nonexistent").read())
attempt("loopback", lambda: socket.create_connection(("127.0.0.1", int(os.environ["PROBE_PORT"])), timeout=3).close())
attempt("internet", lambda: socket.create_connection(("1.1.1.1", 53), timeout=3).close())
attempt("dns", lambda: socket.getaddrinfo("example.com", 80))
attempt("shadow", lambda: open("/etc/shadow").read())
attempt("own_work_dir", lambda: open(os.path.join(os.environ["HOME"], "job.txt")).read())
out["env"] = sorted(os.environ)
out["pids"] = sorted(int(p) for p in os.listdir("/proc") if p.isdigit())
out["tmp"] = sorted(os.listdir("/tmp"))
out["document_dir"] = sorted(os.listdir("/document"))
print(json.dumps(out))
`;

describe('the office jail', () => {
  it('bubblewrap works on this machine (the service refuses to start where it does not)', () => {
    expect(probeJail()).toEqual({ available: true });
  });

  it('from the inside: no DATA_DIR, no application directory, no service environment, no network, no other processes', () => {
    writeFileSync(path.join(workDir, 'job.txt'), 'the job file');
    const env = {
      ...officeEnvironment(JAIL_WORK_DIR, `${JAIL_WORK_DIR}/tmp`, 60_000),
      PROBE_DATA: path.join(dataDir, 'signing-key.pem'),
      PROBE_APP: path.join(projectRoot, 'package.json'),
      PROBE_PORT: String(port),
    };
    const run = spawnSync('bwrap', [...bubblewrapArgs({ workDir, bridgePath: BRIDGE_PATH, env }), '/usr/bin/python3', '-c', PROBE], {
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(run.status, run.stderr).toBe(0);
    const probe = JSON.parse(run.stdout) as Record<string, [string, string] | string[] | number[]>;
    for (const key of ['data_dir', 'data_dir_listing', 'app_dir', 'loopback', 'internet', 'dns', 'shadow']) expect(probe[key]?.[0], key).toBe('error');
    expect(probe.own_work_dir).toEqual(['ok', 'the job file']);
    expect(hits).toBe(0);
    expect(probe.env).not.toContain(SECRET_ENV);
    expect(probe.env).toEqual(['DOCPROC_OFFICE_START_TIMEOUT', 'HOME', 'LANG', 'PATH', 'PROBE_APP', 'PROBE_DATA', 'PROBE_PORT', 'PWD', 'TMPDIR']);
    expect((probe.pids as number[]).length).toBeLessThanOrEqual(3);
    expect(probe.tmp).toEqual(['office']);
    expect(probe.document_dir).toEqual([]);
  });

  it('from the outside: the pool’s soffice.bin runs in other namespaces with only the office environment', async () => {
    const pool = new OfficePool({ size: 1 });
    await pool.start();
    try {
      expect(pool.jail).toBe(true);
      const [group] = pool.processGroups();
      const soffice = readdirSync('/proc')
        .filter((p) => /^\d+$/.test(p))
        .find((pid) => {
          try {
            const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
            const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
            return stat.includes('(soffice.bin)') && Number(fields[2]) === group!.pgid;
          } catch {
            return false;
          }
        });
      expect(soffice, 'soffice.bin in the pool process group').toBeDefined();
      const environ = readFileSync(`/proc/${soffice}/environ`, 'latin1').split('\0');
      expect(environ.join('\n')).not.toContain(SECRET_VALUE);
      expect(environ.some((e) => e.startsWith('REDIS_URL=') || e.startsWith('API_KEY_PEPPER='))).toBe(false);
      for (const ns of ['net', 'pid', 'mnt', 'ipc']) expect(readlinkSync(`/proc/${soffice}/ns/${ns}`), ns).not.toBe(readlinkSync(`/proc/self/ns/${ns}`));
    } finally {
      await pool.close();
    }
  }, 90_000);

  it('start-up policy: no jail means no start, unless OFFICE_ALLOW_UNJAILED says so (with a warning)', () => {
    const warnings: string[] = [];
    expect(decideJail({ available: true }, false, (m) => warnings.push(m))).toBe(true);
    expect(() => decideJail({ available: false, reason: 'bwrap: not found' }, false, (m) => warnings.push(m))).toThrow(/OFFICE_ALLOW_UNJAILED/);
    expect(decideJail({ available: false, reason: 'bwrap: not found' }, true, (m) => warnings.push(m))).toBe(false);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/WITHOUT its jail/);
  });
});
