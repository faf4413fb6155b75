/**
 * What docproc keeps between requests: verification codes (hashed), API key hashes, and
 * counters for rate and concurrency limits. Redis when REDIS_URL is set (shared by all
 * replicas); otherwise an in-process map for a single instance.
 * Every method either answers or throws StoreUnavailableError quickly; none hangs.
 */
export interface ApiKeyRecord {
  email: string;
  createdAt: string;
  /**
   * The key hash of the first key of this key's lineage (itself for a key minted from a code; its
   * predecessor's lineage for one minted by rotation). Rate and concurrency limits count per lineage,
   * so rotating never multiplies a caller's budget. Absent in records stored before lineages.
   */
  lineage?: string;
}

/**
 * Code checks count wrong tries per address: `perClient` for each client, and `perAddress` from all
 * clients together, past which only the clients that asked for a code for the address may still try.
 */
export interface CodeTryLimits {
  perClient: number;
  perAddress: number;
}

/** locked: this client may not try this address's codes any more (its own tries, or the address's cap and it is a stranger). */
export type CodeCheck = 'ok' | 'wrong' | 'locked' | 'missing';

export type RotationOutcome =
  | { status: 'rotated' }
  /** The key does not exist (any more). */
  | { status: 'missing' }
  /** The key was rotated already: it is in its grace period and may not mint another successor. */
  | { status: 'not-active' }
  | { status: 'rate-limited'; resetMs: number };

export interface RotationLimit {
  /** Counter of the account's rotations (one fixed window). */
  bucket: string;
  max: number;
  windowSeconds: number;
}

export interface WindowHit {
  count: number;
  /** Milliseconds until the window resets. */
  resetMs: number;
}

/** A fixed-window rate limit: `max` hits per `windowSeconds` in `bucket`. */
export interface RateCheck {
  bucket: string;
  windowSeconds: number;
  max: number;
}

/** One of `limit` concurrency slots of `bucket` for `holder`, expiring `ttlSeconds` after it was taken or refreshed. */
export interface SlotRequest {
  bucket: string;
  holder: string;
  limit: number;
  ttlSeconds: number;
}

export interface Admitted {
  hit: WindowHit;
  /** Whether the slot was taken; undefined when none was tried. */
  acquired?: boolean;
}

export interface Store {
  readonly kind: 'redis' | 'memory';
  /**
   * Adds a verification code for an address (codes already pending stay valid until their own
   * expiry: nobody else's registration can replace the owner's code), and remembers `requester`,
   * the client that asked for it, as one that may keep trying after the address's cap.
   */
  putCode(emailId: string, codeHash: string, ttlSeconds: number, requester: string): Promise<void>;
  /**
   * In one atomic step: refuses a locked client (`locked`); consumes every pending code of the
   * address when `codeHash` is one of them (`ok`); otherwise counts a wrong try for the client and
   * the address (`wrong`). Pending codes are never burnt by wrong tries.
   */
  checkCode(emailId: string, codeHash: string, client: string, limits: CodeTryLimits): Promise<CodeCheck>;
  /** Stores a key minted from a verification code (a lineage of its own unless `record.lineage` says otherwise). */
  putApiKey(keyHash: string, record: ApiKeyRecord): Promise<void>;
  getApiKey(keyHash: string): Promise<ApiKeyRecord | undefined>;
  /**
   * In one atomic step with revokeApiKey: when `keyHash` is active (not rotated already) and the
   * account's rotations are within `limit`, stores the successor in the same lineage and ends the
   * key after `graceSeconds` (at once for 0).
   */
  rotateApiKey(keyHash: string, successorHash: string, successor: ApiKeyRecord, graceSeconds: number, limit: RotationLimit): Promise<RotationOutcome>;
  /**
   * Ends the key at once together with every key minted from it (its successors) and every key it
   * was minted from that still works (predecessors in their grace period), in one atomic step.
   * False when the key does not exist (any more).
   */
  revokeApiKey(keyHash: string): Promise<boolean>;
  /** Counts one hit in a fixed window named `bucket`. */
  hit(bucket: string, windowSeconds: number): Promise<WindowHit>;
  /**
   * Takes one of `limit` slots for `holder` (unique per request); false when all are taken. A slot
   * expires `ttlSeconds` after it was taken or last refreshed by its own holder.
   */
  acquireSlot(bucket: string, holder: string, limit: number, ttlSeconds: number): Promise<boolean>;
  /**
   * One round trip for what every request does first: counts `rate`'s hit and, when the count is
   * within `rate.max`, takes a slot as acquireSlot does (`slot` absent: no slot taken, e.g. a caller
   * without a key). `acquired` is undefined when no slot was tried (over the rate limit, or no `slot`).
   */
  admit(rate: RateCheck, slot?: SlotRequest): Promise<Admitted>;
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
