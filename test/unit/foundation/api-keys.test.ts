import { describe, expect, it } from 'vitest';
import { checkKeyShape, generateApiKey, hashApiKey } from '../../../src/accounts/api-keys.js';
import { emailId, generateCode, hashCode } from '../../../src/accounts/codes.js';

describe('API keys', () => {
  it('have the prefix, 38 base62 characters and a checksum that catches any single-character typo', () => {
    const key = generateApiKey();
    expect(key).toMatch(/^dps_[0-9A-Za-z]{38}$/);
    expect(checkKeyShape(key)).toBe('ok');
    for (let i = 4; i < key.length; i++) {
      const typo = key.slice(0, i) + (key[i] === 'x' ? 'y' : 'x') + key.slice(i + 1);
      expect(checkKeyShape(typo)).toBe('bad-checksum');
    }
    expect(checkKeyShape(key.slice(0, -1))).toBe('malformed');
    expect(checkKeyShape(`abc_${key.slice(4)}`)).toBe('malformed');
  });

  it('are unique and stored only as a peppered hash', () => {
    const keys = new Set(Array.from({ length: 500 }, generateApiKey));
    expect(keys.size).toBe(500);
    const key = generateApiKey();
    expect(hashApiKey(key, 'pepper-one-0123456')).not.toBe(hashApiKey(key, 'pepper-two-0123456'));
    expect(hashApiKey(key, 'pepper-one-0123456')).not.toContain(key.slice(4));
  });
});

describe('verification codes', () => {
  it('are six digits and hashed per address', () => {
    const codes = Array.from({ length: 200 }, generateCode);
    expect(codes.every((c) => /^\d{6}$/.test(c))).toBe(true);
    expect(new Set(codes).size).toBeGreaterThan(190);
    expect(hashCode('a@x.io', '123456', 'p'.repeat(16))).not.toBe(hashCode('b@x.io', '123456', 'p'.repeat(16)));
    expect(emailId('A@X.io ', 'p'.repeat(16))).toBe(emailId('a@x.io', 'p'.repeat(16)));
  });
});
