/**
 * What docproc keeps between requests: verification codes (hashed), API key hashes, and
 * counters for rate and concurrency limits. Redis when REDIS_URL is set (shared by all
 * replicas); otherwise an in-process map for a single instance.
 * Every method either answers or throws StoreUnavailableError quickly; none hangs.
 */
export interface ApiKeyRecord {
  email: string;
  createdAt: string;
}

export type CodeCheck = 'ok' | 'wrong' | 'burnt' | 'missing';

export interface WindowHit {
  count: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
}

export interface Store {
  readonly kind: 'redis' | 'memory';
  /** Saves (replacing any earlier one) the keyed hash of a verification code. */
  putCode(emailId: string, codeHash: string, ttlSeconds: number): Promise<void>;
  /**
   * Checks a code hash and, in the same atomic step, consumes it on success, counts a wrong
   * try otherwise, and burns the code when the tries run out.
   */
  checkCode(emailId: string, codeHash: string, maxAttempts: number): Promise<CodeCheck>;
  putApiKey(keyHash: string, record: ApiKeyRecord): Promise<void>;
  getApiKey(keyHash: string): Promise<ApiKeyRecord | undefined>;
  /**
   * Ends a key: at once (afterSeconds 0), or once afterSeconds have passed — never later than an
   * end already set. False when the key does not exist (any more).
   */
  expireApiKey(keyHash: string, afterSeconds: number): Promise<boolean>;
  /** Counts one hit in a fixed window named `bucket`. */
  hit(bucket: string, windowSeconds: number): Promise<WindowHit>;
  /**
   * Takes one of `limit` slots for `holder` (unique per request); false when all are taken. A slot
   * expires `ttlSeconds` after it was taken or last refreshed by its own holder.
   */
  acquireSlot(bucket: string, holder: string, limit: number, ttlSeconds: number): Promise<boolean>;
  /** Moves the holder's expiry forward; false when its slot has already expired. */
  refreshSlot(bucket: string, holder: string, ttlSeconds: number): Promise<boolean>;
  releaseSlot(bucket: string, holder: string): Promise<void>;
  ping(): Promise<void>;
  /** Waits for the first connection; false when it did not come in time. */
  connected(timeoutMs?: number): Promise<boolean>;
  close(): Promise<void>;
}

export class StoreUnavailableError extends Error {
  constructor(cause?: unknown) {
    super('The key store is unreachable.', { cause });
    this.name = 'StoreUnavailableError';
  }
}
