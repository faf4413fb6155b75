import { createHmac, randomBytes } from 'node:crypto';
import { crc32 } from 'node:zlib';

/**
 * API keys: `dps_` + 32 random base62 characters + a 6-character base62 CRC32 of them.
 * The checksum lets a mistyped or truncated key be refused without a store lookup; only an
 * HMAC of the whole key (peppered) is ever stored.
 */
export const API_KEY_PREFIX = 'dps_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_LENGTH = 32;
const CHECKSUM_LENGTH = 6;
const KEY_PATTERN = new RegExp(`^${API_KEY_PREFIX}[0-9A-Za-z]{${RANDOM_LENGTH + CHECKSUM_LENGTH}}$`);

function randomBase62(length: number): string {
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      // 248 = 4 * 62: rejecting larger bytes keeps every character equally likely.
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

function checksum(body: string): string {
  let n = crc32(body) >>> 0;
  let out = '';
  for (let i = 0; i < CHECKSUM_LENGTH; i++) {
    out = BASE62[n % 62] + out;
    n = Math.floor(n / 62);
  }
  return out;
}

export function generateApiKey(): string {
  const body = randomBase62(RANDOM_LENGTH);
  return `${API_KEY_PREFIX}${body}${checksum(body)}`;
}

export type KeyShape = 'ok' | 'malformed' | 'bad-checksum';

export function checkKeyShape(key: string): KeyShape {
  if (!KEY_PATTERN.test(key)) return 'malformed';
  const body = key.slice(API_KEY_PREFIX.length, API_KEY_PREFIX.length + RANDOM_LENGTH);
  return key.endsWith(checksum(body)) ? 'ok' : 'bad-checksum';
}

export function hashApiKey(key: string, pepper: string): string {
  return createHmac('sha256', pepper).update(`key:${key}`).digest('hex');
}
