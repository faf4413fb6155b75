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
  private readonly keys = new Map<string, ApiKeyRecord>();
  private readonly windows = new Map<string, Expiring<number>>();
  private readonly slots = new Map<string, Expiring<number>>();
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
    for (const map of [this.codes, this.windows, this.slots] as Map<string, Expiring<unknown>>[]) {
      for (const [key, entry] of map) if (entry.expiresAt <= now) map.delete(key);
    }
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
    return this.keys.get(keyHash);
  }

  async hit(bucket: string, windowSeconds: number): Promise<WindowHit> {
    const now = Date.now();
    const entry = this.live(this.windows, bucket) ?? { value: 0, expiresAt: now + windowSeconds * 1000 };
    entry.value += 1;
    this.windows.set(bucket, entry);
    return { count: entry.value, resetMs: entry.expiresAt - now };
  }

  async acquireSlot(bucket: string, limit: number, ttlSeconds: number): Promise<boolean> {
    const entry = this.live(this.slots, bucket) ?? { value: 0, expiresAt: 0 };
    if (entry.value >= limit) return false;
    entry.value += 1;
    entry.expiresAt = Date.now() + ttlSeconds * 1000;
    this.slots.set(bucket, entry);
    return true;
  }

  async releaseSlot(bucket: string): Promise<void> {
    const entry = this.live(this.slots, bucket);
    if (!entry) return;
    entry.value -= 1;
    if (entry.value <= 0) this.slots.delete(bucket);
  }

  async ping(): Promise<void> {}

  async connected(): Promise<boolean> {
    return true;
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
  }
}
