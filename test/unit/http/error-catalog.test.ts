import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { ErrorCode } from '../../../src/errors/app-error.js';
import { ERROR_CATALOG } from '../../../src/errors/catalog.js';

const root = path.resolve(import.meta.dirname, '../../..');

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    return statSync(full).isDirectory() ? sources(full) : name.endsWith('.ts') ? [full] : [];
  });
}

describe('error catalog', () => {
  it('has an entry for every ErrorCode', () => {
    expect(Object.keys(ERROR_CATALOG).sort()).toEqual(Object.values(ErrorCode).sort());
  });

  it('lists every status the code throws it with (AppError(status, code) and unprocessable(code) in src/ and workers/)', () => {
    const thrown = new Map<string, Set<number>>();
    const add = (code: string, status: number) => thrown.set(code, (thrown.get(code) ?? new Set()).add(status));
    for (const file of [...sources(path.join(root, 'src')), ...sources(path.join(root, 'workers'))]) {
      const text = readFileSync(file, 'utf8');
      for (const m of text.matchAll(/new AppError\(\s*(\d{3}),\s*(?:ErrorCode\.|')([A-Z_]+)/g)) add(m[2]!, Number(m[1]));
      for (const m of text.matchAll(/unprocessable\(\s*ErrorCode\.([A-Z_]+)/g)) add(m[1]!, 422);
    }
    expect(thrown.size).toBeGreaterThan(20);
    for (const [code, statuses] of thrown) {
      expect(ERROR_CATALOG[code as ErrorCode], code).toBeDefined();
      for (const status of statuses) expect(ERROR_CATALOG[code as ErrorCode].statuses, `${code} is thrown with ${status}`).toContain(status);
    }
  });

  it('is the README table, row for row', () => {
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    const rows = [...readme.matchAll(/^\| `([A-Z_]+)` \| ([\d, ]+) \| (.+) \|$/gm)].map((m) => ({ code: m[1], statuses: m[2]!.split(', ').map(Number), meaning: m[3] }));
    expect(rows).toEqual(Object.entries(ERROR_CATALOG).map(([code, e]) => ({ code, statuses: e.statuses, meaning: e.meaning })));
  });
});
