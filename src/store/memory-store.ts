import { timingSafeEqual } from 'node:crypto';
import type { ApiKeyRecord, CodeCheck, Store, WindowHit } from './store.js';

interface Expiring<T> {
  value: T;
  expiresAt: number;
}

const sameHash = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** Single-process store for the embedded default (one instance, nothing shared, lost on restart). */
export class MemoryStore implements Store {
  readonly kind = 'memory' as const;
  private readonly codes = new Map<string, Expiring<{ hash: string; attempts: number }>>();
  private readonly keys = new Map<string, ApiKeyRecord & { expiresAt?: number }>();
  private readonly windows = new Map<string, Expiring<number>>();
  /** bucket → holder → expiry (ms). */
  private readonly slots = new Map<string, Map<string, number>>();
  private readonly sweeper = setInterval(() => this.sweep(), 60_000).unref();

  private live<T>(map: Map<string, Expiring<T>>, key: string): Expiring<T> | undefined {
    const entry = map.get(key);
    if (entry && entry.expiresAt <= Date.now()) {
      map.delete(key);
      return undefined;
    }
    return entry;
  }

  private sweep(): void {
    const now = Date.now();
    for (const map of [this.codes, this.windows] as Map<string, Expiring<unknown>>[]) {
      for (const [key, entry] of map) if (entry.expiresAt <= now) map.delete(key);
    }
    for (const bucket of this.slots.keys()) this.liveHolders(bucket);
  }

  async putCode(emailId: string, codeHash: string, ttlSeconds: number): Promise<void> {
    this.codes.set(emailId, { value: { hash: codeHash, attempts: 0 }, expiresAt: Date.now() + ttlSeconds * 1000 });
  }

  async checkCode(emailId: string, codeHash: string, maxAttempts: number): Promise<CodeCheck> {
    const entry = this.live(this.codes, emailId);
    if (!entry) return 'missing';
    if (sameHash(entry.value.hash, codeHash)) {
      this.codes.delete(emailId);
      return 'ok';
    }
    entry.value.attempts += 1;
    if (entry.value.attempts >= maxAttempts) {
      this.codes.delete(emailId);
      return 'burnt';
    }
    return 'wrong';
  }

  async putApiKey(keyHash: string, record: ApiKeyRecord): Promise<void> {
    this.keys.set(keyHash, record);
  }

  async getApiKey(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const found = this.keys.get(keyHash);
    if (found?.expiresAt !== undefined && found.expiresAt <= Date.now()) {
      this.keys.delete(keyHash);
      return undefined;
    }
    return found && { email: found.email, createdAt: found.createdAt };
  }

  async expireApiKey(keyHash: string, afterSeconds: number): Promise<boolean> {
    if (!(await this.getApiKey(keyHash))) return false;
    if (afterSeconds <= 0) return this.keys.delete(keyHash);
    const record = this.keys.get(keyHash)!;
    record.expiresAt = Math.min(record.expiresAt ?? Infinity, Date.now() + afterSeconds * 1000);
    return true;
  }

  async hit(bucket: string, windowSeconds: number): Promise<WindowHit> {
    const now = Date.now();
    const entry = this.live(this.windows, bucket) ?? { value: 0, expiresAt: now + windowSeconds * 1000 };
    entry.value += 1;
    this.windows.set(bucket, entry);
    return { count: entry.value, resetMs: entry.expiresAt - now };
  }

  private liveHolders(bucket: string): Map<string, number> {
    const holders = this.slots.get(bucket) ?? new Map<string, number>();
    const now = Date.now();
    for (const [holder, expiresAt] of holders) if (expiresAt <= now) holders.delete(holder);
    if (holders.size === 0) this.slots.delete(bucket);
    return holders;
  }

  async acquireSlot(bucket: string, holder: string, limit: number, ttlSeconds: number): Promise<boolean> {
    const holders = this.liveHolders(bucket);
    if (holders.size >= limit) return false;
    holders.set(holder, Date.now() + ttlSeconds * 1000);
    this.slots.set(bucket, holders);
    return true;
  }

  async refreshSlot(bucket: string, holder: string, ttlSeconds: number): Promise<boolean> {
    const holders = this.liveHolders(bucket);
    if (!holders.has(holder)) return false;
    holders.set(holder, Date.now() + ttlSeconds * 1000);
    return true;
  }

  async releaseSlot(bucket: string, holder: string): Promise<void> {
    const holders = this.liveHolders(bucket);
    holders.delete(holder);
    if (holders.size === 0) this.slots.delete(bucket);
  }

  async ping(): Promise<void> {}

  async connected(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }
}
