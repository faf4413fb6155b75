import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { DomainError } from '../../../src/errors/domain-error.js';
import { CFB_MAGIC, readCompoundFile } from '../../../src/inputs/compound-file.js';
import { buildCompoundFile, type CfbStream } from '../../support/office/compound-file-builder.js';
import { CORPUS_DIR } from '../../support/corpus.js';

/**
 * The CFB stream reader against python3-olefile (Debian), an independent reader: every root stream of
 * every compound file among the fixtures and the corpus, of generated files (small streams in the mini
 * stream, large ones in shuffled regular sectors), and of mutated ones, where the only way to fail
 * is INVALID_FILE_FORMAT.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 5150);
const FIXTURES = path.resolve(import.meta.dirname, '../../fixtures/formats');
const ORACLE = path.resolve(import.meta.dirname, '../../support/olefile_streams.py');
const work = mkdtempSync(path.join(tmpdir(), 'docproc-cfb-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

type OracleResult = { streams: Record<string, string> } | { error: string };

function olefile(files: string[]): Record<string, OracleResult> {
  return JSON.parse(execFileSync('/usr/bin/python3', [ORACLE, ...files], { encoding: 'utf8', maxBuffer: 1 << 28 })) as Record<string, OracleResult>;
}

/** Ours: name → hex of every root stream, or the error's code. */
function ours(data: Buffer): Record<string, string> | { code: string } | undefined {
  const file = readCompoundFile(data);
  if (!file) return undefined;
  try {
    return Object.fromEntries(file.root.filter((e) => e.type === 2).map((e) => [e.name, file.readStream(e).toString('hex')]));
  } catch (err) {
    if (err instanceof DomainError) return { code: err.code };
    throw err;
  }
}

function compoundFilesUnder(dir: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = path.join(d, name);
      const stat = statSync(p);
      if (stat.isDirectory()) walk(p);
      else if (stat.size >= 512 && readFileSync(p).subarray(0, 8).equals(CFB_MAGIC)) found.push(p);
    }
  };
  walk(dir);
  return found;
}

const streamArb = fc.record({
  name: fc.stringMatching(/^[A-Za-z][A-Za-z0-9 _]{0,20}$/),
  data: fc.oneof(
    fc.uint8Array({ maxLength: 300 }),
    fc.integer({ min: 1, max: 4095 }).map((n) => Uint8Array.from({ length: n }, (_, i) => (i * 31 + n) & 0xff)),
    fc.integer({ min: 4096, max: 20_000 }).map((n) => Uint8Array.from({ length: n }, (_, i) => (i * 17 + n) & 0xff)),
  ),
});
const fileArb = fc.record({
  streams: fc.uniqueArray(streamArb, { minLength: 1, maxLength: 6, selector: (s) => s.name.toUpperCase() }),
  order: fc.array(fc.integer(), { maxLength: 20 }),
});

describe('readCompoundFile: whole streams, against python3-olefile', () => {
  it('reads every root stream of the real compound files as olefile does', () => {
    const files = [...compoundFilesUnder(FIXTURES), ...compoundFilesUnder(CORPUS_DIR)];
    expect(files.map((f) => path.basename(f))).toEqual(expect.arrayContaining(['datasets.xls', 'tables.dot', 'tdf118412.doc', 'tdf124708.ppt']));
    const theirs = olefile(files);
    for (const f of files) {
      const reference = theirs[f]!;
      expect(reference, f).toHaveProperty('streams');
      expect(ours(readFileSync(f)), f).toEqual((reference as { streams: Record<string, string> }).streams);
    }
  });

  it('reads generated files (mini stream, shuffled regular chains) as olefile does, by name too', () => {
    const samples = fc.sample(fileArb, { numRuns: 60, seed: SEED });
    const paths = samples.map((sample, i) => {
      const p = path.join(work, `generated-${i}.cfb`);
      writeFileSync(p, buildCompoundFile(sample.streams, sample.order));
      return p;
    });
    const theirs = olefile(paths);
    samples.forEach((sample, i) => {
      const data = readFileSync(paths[i]!);
      const expected = Object.fromEntries(sample.streams.map((s: CfbStream) => [s.name, Buffer.from(s.data).toString('hex')]));
      expect(theirs[paths[i]!], paths[i]).toEqual({ streams: expected });
      expect(ours(data)).toEqual(expected);
      const file = readCompoundFile(data)!;
      for (const s of sample.streams) expect(file.stream(s.name.toLowerCase())?.equals(s.data)).toBe(true);
      expect(file.stream('No such stream here')).toBeUndefined();
    });
  });

  it('refuses a root holding two streams of one name (in any case): readers could each take another', () => {
    const data = buildCompoundFile([
      { name: 'Workbook', data: Buffer.alloc(100, 1) },
      { name: 'WorkbooX', data: Buffer.alloc(5000, 2) },
    ]);
    const at = data.indexOf(Buffer.from('WorkbooX', 'utf16le'));
    data.write('WORKBOOK', at, 'utf16le');
    const file = readCompoundFile(data)!;
    expect(file.root.map((e) => e.name).sort()).toEqual(['WORKBOOK', 'Workbook']);
    expect(() => file.stream('Workbook')).toThrow(expect.objectContaining({ code: 'INVALID_FILE_FORMAT', message: expect.stringContaining('2 streams named "Workbook"') }));
    expect(file.stream('Nothing')).toBeUndefined();
  });

  it('on mutated files fails only with INVALID_FILE_FORMAT, and agrees with olefile where both read', () => {
    const mutation = fc.array(fc.tuple(fc.nat(), fc.oneof(fc.nat({ max: 255 }), fc.constantFrom(0x00, 0xfe, 0xff))), { minLength: 1, maxLength: 8 });
    const samples = fc.sample(fc.tuple(fileArb, mutation, fc.boolean(), fc.nat()), { numRuns: 300, seed: SEED + 1 });
    const paths: string[] = [];
    const results: ReturnType<typeof ours>[] = [];
    samples.forEach(([sample, bytes, truncate, cut], i) => {
      const data = buildCompoundFile(sample.streams, sample.order);
      // Mutate the structure (header, FAT, directory) more often than the data: the first 512 bytes and every 128-byte boundary.
      for (const [at, value] of bytes) {
        const where = at % 3 === 0 ? at % 512 : at % 3 === 1 ? (at % data.length) - ((at % data.length) % 128) + ((at >> 7) % 128) : at % data.length;
        data[Math.min(where, data.length - 1)] = value;
      }
      const mutated = truncate ? data.subarray(0, 512 + (cut % data.length)) : data;
      const started = performance.now();
      results.push(ours(mutated)); // throws (fails the test) on anything but a DomainError
      expect(performance.now() - started).toBeLessThan(2000);
      const p = path.join(work, `mutated-${i}.cfb`);
      writeFileSync(p, mutated);
      paths.push(p);
    });
    for (const result of results) if (result && 'code' in result) expect(result.code).toBe('INVALID_FILE_FORMAT');
    const theirs = olefile(paths);
    let both = 0;
    results.forEach((result, i) => {
      const reference = theirs[paths[i]!]!;
      if (!result || 'code' in result || !('streams' in reference)) return;
      both++;
      // olefile lists the streams it reached; each one it read whole we read the same.
      for (const [name, hex] of Object.entries(reference.streams)) if (name in result) expect(result[name], `${paths[i]} ${name}`).toBe(hex);
    });
    expect(both).toBeGreaterThan(20);
  });
});
