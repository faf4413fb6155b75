import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createInterface, type Interface } from 'node:readline';

/**
 * pyHanko (../shared/oracles/pyhanko, MIT) as an independent validator and signer for tests: one
 * long-lived Python process (pyHanko takes seconds to import) answering JSON lines, through its
 * documented Python API. Never imported into the project.
 */
const ORACLE = path.resolve(import.meta.dirname, '../../../shared/oracles/pyhanko/run');
const TOOL = path.resolve(import.meta.dirname, 'pyhanko_tool.py');

export const pyhankoAvailable = (): boolean => existsSync(ORACLE);

/** pyHanko's verdict on one signature or document time-stamp. */
export interface PyhankoSignature {
  field: string;
  timestamp: boolean;
  intact?: boolean;
  valid?: boolean;
  coverage?: 'ENTIRE_FILE' | 'ENTIRE_REVISION' | 'CONTIGUOUS_BLOCK_FROM_START' | 'UNCLEAR';
  /** NONE < LTA_UPDATES < FORM_FILLING < ANNOTATIONS < OTHER (OTHER: pyHanko refuses the changes). */
  level?: 'NONE' | 'LTA_UPDATES' | 'FORM_FILLING' | 'ANNOTATIONS' | 'OTHER' | null;
  docmdp_ok?: boolean | null;
  /** The DocMDP permission (1-3) this signature requires (its /Reference or field lock), if any. */
  docmdp?: 1 | 2 | 3 | null;
  why?: string;
  error?: string;
}

export interface SignJob {
  in: string;
  out: string;
  field: string;
  key: string;
  cert: string;
  chain?: string[];
  /** DocMDP permission of a certification signature. */
  certify?: 1 | 2 | 3;
  /** A visible field at this rectangle (an invisible one when absent). */
  box?: [number, number, number, number];
  /** FieldMDP lock written into the new field and applied by this signature. */
  lock?: { action: 'ALL' | 'INCLUDE' | 'EXCLUDE'; fields?: string[] };
  /** A signature time-stamp from this RFC 3161 server. */
  tsa_url?: string;
  /** PAdES level; B-LT and B-LTA fetch revocation data (pyHanko's own way) validating against `trust`. */
  pades?: 'B-T' | 'B-LT' | 'B-LTA';
  trust?: string[];
}

export class Pyhanko {
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly lines: Interface;
  private readonly waiting: Array<(line: string) => void> = [];

  constructor() {
    const pythonPath = execFileSync(ORACLE, ['--pythonpath'], { encoding: 'utf8' }).trim();
    this.child = spawn('python3', [TOOL], { env: { ...process.env, PYTHONPATH: pythonPath }, stdio: ['pipe', 'pipe', 'pipe'] });
    this.child.stderr.resume();
    this.lines = createInterface({ input: this.child.stdout });
    this.lines.on('line', (line) => this.waiting.shift()?.(line));
  }

  private ask<T>(command: object): Promise<T> {
    return new Promise((resolve, reject) => {
      this.waiting.push((line) => {
        const answer = JSON.parse(line) as T & { error?: string };
        if (answer.error && !('signatures' in answer)) reject(new Error(`pyHanko: ${answer.error}`));
        else resolve(answer);
      });
      this.child.stdin.write(`${JSON.stringify(command)}\n`);
    });
  }

  /** pyHanko's verdict on every signature of the file, or `{ error }` when it cannot read the file. */
  /** `certification`: the P of the catalog's /Perms /DocMDP signature (null when the document is not certified). */
  async validate(file: string): Promise<{ signatures?: PyhankoSignature[]; certification?: 1 | 2 | 3 | null; error?: string }> {
    return this.ask<{ signatures?: PyhankoSignature[]; certification?: 1 | 2 | 3 | null; error?: string }>({ op: 'validate', file }).catch((err: Error) => ({ error: err.message }));
  }

  async sign(job: SignJob): Promise<void> {
    await this.ask({ op: 'sign', ...job });
  }

  /** An empty signature field made by pyHanko (visible at `box` when given). */
  async addField(job: { in: string; out: string; field: string; box?: [number, number, number, number] }): Promise<void> {
    await this.ask({ op: 'field', ...job });
  }

  /** A document time-stamp from pyHanko's in-process test TSA (key and certificate given). */
  async timestamp(job: { in: string; out: string; field: string; key: string; cert: string }): Promise<void> {
    await this.ask({ op: 'timestamp', ...job });
  }

  close(): void {
    this.child.stdin.end();
    this.lines.close();
  }
}
