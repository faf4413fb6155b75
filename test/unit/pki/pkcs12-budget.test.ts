import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { hostilePkcs12 } from '../../support/pkcs12-hostile.js';

/**
 * The PKCS#12 work counter bounds the real cost. node:crypto is wrapped to measure what the reader
 * really does: every digest of a createHash (the PKCS#12 KDF's rounds) and, for pbkdf2Sync,
 * iterations × output blocks. Over OpenSSL-made archives of random schemes, iteration counts and
 * passwords, the measured work never exceeds the count the reader charged, nor the budget.
 */
const measured = vi.hoisted(() => ({ hashes: 0, pbkdf2: 0 }));
vi.mock('node:crypto', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:crypto')>();
  const hmacBytes: Record<string, number> = { sha1: 20, sha224: 28, sha256: 32, sha384: 48, sha512: 64 };
  return {
    ...real,
    createHash: (...args: Parameters<typeof real.createHash>) => {
      const hash = real.createHash(...args);
      const digest = hash.digest.bind(hash);
      (hash as { digest: unknown }).digest = (...rest: []) => {
        measured.hashes++;
        return digest(...rest);
      };
      return hash;
    },
    pbkdf2Sync: (password: Buffer, salt: Buffer, iterations: number, keylen: number, digest: string) => {
      measured.pbkdf2 += iterations * Math.ceil(keylen / hmacBytes[digest]!);
      return real.pbkdf2Sync(password, salt, iterations, keylen, digest);
    },
  };
});

const { readPkcs12, PKCS12_BUDGET } = await import('../../../src/documents/pki/pkcs12/read.js');

let dir: string;
const openssl = (args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });

beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'docproc-pkcs12-budget-'));
  openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'key.pem', '-out', 'cert.pem', '-days', '3', '-subj', '/CN=budget']);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let counter = 0;
function makeP12(password: string, options: string[]): Buffer {
  const out = `b${counter++}.p12`;
  openssl(['pkcs12', '-export', '-in', 'cert.pem', '-inkey', 'key.pem', '-passout', `pass:${password}`, ...options, '-out', out]);
  return readFileSync(path.join(dir, out));
}


describe('PKCS#12 key-derivation budget', () => {
  it('property: the rounds charged bound the hash calls and PBKDF2 rounds really made, within the budget', () => {
    const scheme = fc.constantFrom<string[]>(
      [], ['-legacy'], ['-nomac'], ['-legacy', '-nomac'], ['-keypbe', 'PBE-SHA1-3DES', '-certpbe', 'PBE-SHA1-2DES'],
      ['-keypbe', 'AES-128-CBC', '-certpbe', 'NONE'], ['-macalg', 'sha512'], ['-legacy', '-macalg', 'sha1'],
    );
    fc.assert(fc.property(scheme, fc.integer({ min: 1, max: 30_000 }), fc.constantFrom('', 'pw'), fc.boolean(), fc.integer({ min: 1_000, max: 200_000 }), (options, iterations, password, wrong, budget) => {
      const p12 = makeP12(password, [...options, '-iter', String(iterations)]);
      measured.hashes = 0;
      measured.pbkdf2 = 0;
      let spent = -1;
      try {
        readPkcs12(p12, wrong ? password + 'x' : password, { maxKdfRounds: budget, onWork: (n) => (spent = n) });
      } catch {
        // a refusal (budget, password) is measured like a success
      }
      const real = measured.hashes + measured.pbkdf2;
      expect(real).toBeLessThanOrEqual(spent);
      expect(spent).toBeLessThanOrEqual(budget);
      // The count is exact, not a loose bound: every round charged is run (the KDF hashes nothing else).
      expect(real).toBe(spent);
    }), { numRuns: 40, seed: 26 });
  });

  it('a 4 KB file of 20 shrouded keys × 1 000 000 iterations is refused before any derivation', () => {
    const p12 = hostilePkcs12(20, 1_000_000);
    expect(p12.length).toBeLessThan(4096);
    measured.hashes = 0;
    measured.pbkdf2 = 0;
    const started = performance.now();
    expect(() => readPkcs12(p12, '')).toThrow(expect.objectContaining({ problem: 'budget', work: { rounds: 62_000_000, max: PKCS12_BUDGET.maxKdfRounds } }));
    const elapsed = performance.now() - started;
    expect(measured.hashes + measured.pbkdf2).toBe(0);
    console.log(`20 bags × 1 000 000 iterations (${p12.length} bytes): refused in ${elapsed.toFixed(1)} ms, 0 rounds run`);
  });
});
