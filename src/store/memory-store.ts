import { timingSafeEqual } from 'node:crypto';
import type { Admitted, ApiKeyRecord, CodeCheck, CodeTryLimits, RateCheck, RotationLimit, RotationOutcome, SlotRequest, Store, WindowHit } from './store.js';

interface Expiring<T> {
  value: T;
  expiresAt: number;
}

const sameHash = (a: string, b: string) => a.length === b.length && timingSafeEqual(Buffer.from(a), Buffer.from(b));

/** An address's pending codes (hash → expiry), the clients that asked for them, and wrong tries. */
interface CodeRecord {
  codes: Map<string, number>;
  requesters: Set<string>;
  triesByClient: Map<string, number>;
  wrong: number;
}

interface KeyEntry extends ApiKeyRecord {
  expiresAt?: number;
  parent?: string;
  successor?: string;
}

/** Single-process store for the embedded default (one instance, nothing shared, lost on restart). */
export class MemoryStore implements Store {
  readonly kind = 'memory' as const;
  private readonly codes = new Map<string, Expiring<CodeRecord>>();
  private readonly keys = new Map<string, KeyEntry>();
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

  async putCode(emailId: string, codeHash: string, ttlSeconds: number, requester: string): Promise<void> {
    const expiresAt = Date.now() + ttlSeconds * 1000;
    const entry = this.live(this.codes, emailId) ?? { value: { codes: new Map(), requesters: new Set(), triesByClient: new Map(), wrong: 0 }, expiresAt };
    entry.value.codes.set(codeHash, expiresAt);
    entry.value.requesters.add(requester);
    entry.expiresAt = Math.max(entry.expiresAt, expiresAt);
    this.codes.set(emailId, entry);
  }

  async checkCode(emailId: string, codeHash: string, client: string, limits: CodeTryLimits): Promise<CodeCheck> {
    const record = this.live(this.codes, emailId)?.value;
    const now = Date.now();
    for (const [hash, expiresAt] of record?.codes ?? []) if (expiresAt <= now) record!.codes.delete(hash);
    if (!record || record.codes.size === 0) return 'missing';
    if ((record.triesByClient.get(client) ?? 0) >= limits.perClient) return 'locked';
    if (record.wrong >= limits.perAddress && !record.requesters.has(client)) return 'locked';
    if ([...record.codes.keys()].some((hash) => sameHash(hash, codeHash))) {
      this.codes.delete(emailId);
      return 'ok';
    }
    record.triesByClient.set(client, (record.triesByClient.get(client) ?? 0) + 1);
    record.wrong++;
    return 'wrong';
  }

  async putApiKey(keyHash: string, record: ApiKeyRecord): Promise<void> {
    this.keys.set(keyHash, { email: record.email, createdAt: record.createdAt, lineage: record.lineage ?? keyHash });
  }

  /** The key's entry, unless it has expired (then it is removed). */
  private liveKey(keyHash: string | undefined): KeyEntry | undefined {
    const found = keyHash === undefined ? undefined : this.keys.get(keyHash);
    if (found?.expiresAt !== undefined && found.expiresAt <= Date.now()) {
      this.keys.delete(keyHash!);
      return undefined;
    }
    return found;
  }

  async getApiKey(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const found = this.liveKey(keyHash);
    return found && { email: found.email, createdAt: found.createdAt, lineage: found.lineage ?? keyHash };
  }

  async rotateApiKey(keyHash: string, successorHash: string, successor: ApiKeyRecord, graceSeconds: number, limit: RotationLimit): Promise<RotationOutcome> {
    const key = this.liveKey(keyHash);
    if (!key) return { status: 'missing' };
    if (key.successor !== undefined) return { status: 'not-active' };
    const rotations = this.countHit(limit.bucket, limit.windowSeconds); // no await: check and rotate in one step
    if (rotations.count > limit.max) return { status: 'rate-limited', resetMs: rotations.resetMs };
    this.keys.set(successorHash, { email: successor.email, createdAt: successor.createdAt, lineage: key.lineage ?? keyHash, parent: keyHash });
    if (graceSeconds <= 0) this.keys.delete(keyHash);
    else Object.assign(key, { successor: successorHash, expiresAt: Date.now() + graceSeconds * 1000 });
    return { status: 'rotated' };
  }

  async revokeApiKey(keyHash: string): Promise<boolean> {
    const start = this.liveKey(keyHash);
    if (!start) return false;
    const doomed = [keyHash];
    for (const link of ['parent', 'successor'] as const) {
      for (let hash = start[link]; hash !== undefined && this.liveKey(hash); hash = this.keys.get(hash)![link]) doomed.push(hash);
    }
    for (const hash of doomed) this.keys.delete(hash);
    return true;
  }

  async hit(bucket: string, windowSeconds: number): Promise<WindowHit> {
    return this.countHit(bucket, windowSeconds);
  }

  private countHit(bucket: string, windowSeconds: number): WindowHit {
    const now = Date.now();
    const entry = this.live(this.windows, bucket) ?? { value: 0, expiresAt: now + windowSeconds * 1000 };
    entry.value += 1;
    this.windows.set(bucket, entry);
    return { count: entry.value, resetMs: entry.expiresAt - now };
  }

  async admit(rate: RateCheck, slot?: SlotRequest): Promise<Admitted> {
    const hit = this.countHit(rate.bucket, rate.windowSeconds);
    if (!slot || hit.count > rate.max) return { hit };
    return { hit, acquired: this.takeSlot(slot.bucket, slot.holder, slot.limit, slot.ttlSeconds) };
  }

  private liveHolders(bucket: string): Map<string, number> {
    const holders = this.slots.get(bucket) ?? new Map<string, number>();
    const now = Date.now();
    for (const [holder, expiresAt] of holders) if (expiresAt <= now) holders.delete(holder);
    if (holders.size === 0) this.slots.delete(bucket);
    return holders;
  }

  async acquireSlot(bucket: string, holder: string, limit: number, ttlSeconds: number): Promise<boolean> {
    return this.takeSlot(bucket, holder, limit, ttlSeconds);
  }

  private takeSlot(bucket: string, holder: string, limit: number, ttlSeconds: number): boolean {
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
