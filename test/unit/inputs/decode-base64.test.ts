import { describe, expect, it } from 'vitest';
import { decodeBase64 } from '../../../src/inputs/document-source.js';

/** The strict decoder as it was (regular expressions only): the one-pass fast path must agree with it. */
function reference(value: string): Buffer | 'invalid' | 'empty' {
  const payload = value.startsWith('data:') ? value.slice(value.indexOf(',') + 1) : value;
  const normalized = payload.replace(/\s+/g, '').replace(/-/g, '+').replace(/_/g, '/');
  if (!/^[A-Za-z0-9+/\r\n]*={0,2}\s*$/.test(normalized) || normalized.length % 4 === 1) return 'invalid';
  const data = Buffer.from(normalized, 'base64');
  return data.length === 0 ? 'empty' : data;
}

function outcome(value: string): Buffer | 'invalid' | 'empty' {
  try {
    return decodeBase64(value, 'document.base64', 1 << 20);
  } catch (err) {
    return /empty/.test((err as Error).message) ? 'empty' : 'invalid';
  }
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_';
const NOISE = ['=', '==', '===', ' ', '\n', '\r\n', '!', '.', '*', 'é', '\0', '%'];

// A small deterministic generator: the same cases on every run.
function* cases(count: number): Generator<string> {
  let seed = 26;
  const next = (n: number) => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) % n);
  for (let i = 0; i < count; i++) {
    const bytes = Buffer.from(Array.from({ length: next(40) }, () => next(256)));
    let text = next(2) ? bytes.toString('base64') : bytes.toString('base64url');
    const edits = next(4);
    for (let e = 0; e < edits; e++) {
      const at = next(text.length + 1);
      const choice = next(3);
      if (choice === 0) text = text.slice(0, at) + NOISE[next(NOISE.length)] + text.slice(at);
      else if (choice === 1) text = text.slice(0, at) + text.slice(at + 1);
      else text = text.slice(0, at) + ALPHABET[next(ALPHABET.length)] + text.slice(at);
    }
    yield text;
  }
}

describe('decodeBase64', () => {
  it('agrees with the strict regular-expression decoder on clean, padded, url-safe, broken and noisy base64', () => {
    let accepted = 0;
    for (const text of cases(20_000)) {
      const expected = reference(text);
      const actual = outcome(text);
      expect(actual, JSON.stringify(text)).toEqual(expected);
      if (Buffer.isBuffer(actual)) accepted++;
    }
    expect(accepted).toBeGreaterThan(5_000); // the clean cases are really exercised
  });
});
