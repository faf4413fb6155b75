import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { ErrorCode, FINER_CODES, type AnsweredCode } from '../../../src/errors/domain-error.js';
import { HTTP_ERRORS } from '../../../src/http/error-status.js';
import { ERROR_CATALOG } from '../../../src/errors/catalog.js';

const root = path.resolve(import.meta.dirname, '../../..');

describe('error catalog', () => {
  it('has an entry for every code an answer carries', () => {
    expect(Object.keys(ERROR_CATALOG).sort()).toEqual(Object.values(ErrorCode).filter((code) => !(FINER_CODES as readonly string[]).includes(code)).sort());
  });

  it('lists exactly the statuses src/http/error-status.ts answers each code with', () => {
    const answered = new Map<string, Set<number>>();
    for (const [code, { status, answerAs }] of Object.entries(HTTP_ERRORS)) {
      const shown = answerAs ?? code;
      answered.set(shown, (answered.get(shown) ?? new Set()).add(status));
    }
    expect([...answered.keys()].sort()).toEqual(Object.keys(ERROR_CATALOG).sort());
    for (const [code, statuses] of answered) {
      expect([...statuses].sort(), code).toEqual([...ERROR_CATALOG[code as AnsweredCode].statuses].sort());
    }
  });

  it('is the README table, row for row', () => {
    const readme = readFileSync(path.join(root, 'README.md'), 'utf8');
    const rows = [...readme.matchAll(/^\| `([A-Z_]+)` \| ([\d, ]+) \| (.+) \|$/gm)].map((m) => ({ code: m[1], statuses: m[2]!.split(', ').map(Number), meaning: m[3] }));
    expect(rows).toEqual(Object.entries(ERROR_CATALOG).map(([code, e]) => ({ code, statuses: e.statuses, meaning: e.meaning })));
  });
});
