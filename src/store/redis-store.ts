import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import type { Admitted, ApiKeyRecord, CodeCheck, CodeTryLimits, RateCheck, RotationLimit, RotationOutcome, SlotRequest, Store, WindowHit } from './store.js';
import { StoreUnavailableError } from './store.js';

/*
 * Lua keeps each read-modify-write atomic across replicas: two racing verifications of the
 * same code cannot both succeed, a rotation and a revocation of one lineage never interleave, and
 * a limit counted on one instance holds on all.
 */
/**
 * A code record (hash `code:<address>`) holds the address's pending codes (`c:<hash>` → expiry in
 * ms), the clients that asked for them (`k:<client>`), wrong tries per client (`t:<client>`) and in
 * all (`wrong`). Adding a code keeps the others; the record lives as long as its newest code.
 */
const PUT_CODE = `
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local ttl = tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'c:' .. ARGV[1], nowMs + ttl, 'k:' .. ARGV[3], '1')
if redis.call('PTTL', KEYS[1]) < ttl then redis.call('PEXPIRE', KEYS[1], ttl) end
return 1`;

const CHECK_CODE = `
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
local fields = redis.call('HGETALL', KEYS[1])
local live = {}
local pending = false
for i = 1, #fields, 2 do
  local name = fields[i]
  if string.sub(name, 1, 2) == 'c:' then
    if tonumber(fields[i + 1]) > nowMs then
      live[string.sub(name, 3)] = true
      pending = true
    else
      redis.call('HDEL', KEYS[1], name)
    end
  end
end
if not pending then return 'missing' end
local client = ARGV[2]
if tonumber(redis.call('HGET', KEYS[1], 't:' .. client) or '0') >= tonumber(ARGV[3]) then return 'locked' end
if tonumber(redis.call('HGET', KEYS[1], 'wrong') or '0') >= tonumber(ARGV[4]) and redis.call('HEXISTS', KEYS[1], 'k:' .. client) == 0 then return 'locked' end
if live[ARGV[1]] then redis.call('DEL', KEYS[1]) return 'ok' end
redis.call('HINCRBY', KEYS[1], 't:' .. client, 1)
redis.call('HINCRBY', KEYS[1], 'wrong', 1)
return 'wrong'`;

/**
 * Key records (hash `key:<hash>`): email, createdAt, lineage, and the links of rotation: `parent`
 * (the key it was minted from) and `successor` (set once it is rotated: it is then in its grace
 * period and may not rotate again). Rotation and revocation are one script each, so they are
 * atomic against each other on every replica.
 */
const ROTATE_KEY = `
if redis.call('EXISTS', KEYS[1]) == 0 then return {'missing'} end
if redis.call('HEXISTS', KEYS[1], 'successor') == 1 then return {'not-active'} end
local count = redis.call('INCR', KEYS[3])
if count == 1 then redis.call('PEXPIRE', KEYS[3], ARGV[6]) end
if count > tonumber(ARGV[5]) then return {'rate-limited', redis.call('PTTL', KEYS[3])} end
local lineage = redis.call('HGET', KEYS[1], 'lineage') or ARGV[7]
redis.call('HSET', KEYS[2], 'email', ARGV[2], 'createdAt', ARGV[3], 'lineage', lineage, 'parent', ARGV[7])
local grace = tonumber(ARGV[4])
if grace <= 0 then
  redis.call('DEL', KEYS[1])
else
  redis.call('HSET', KEYS[1], 'successor', ARGV[1])
  redis.call('PEXPIRE', KEYS[1], grace)
end
return {'rotated'}`;

/** Deletes the key, its successors and its predecessors still in grace (each link read from the one before). */
const REVOKE_KEY = `
local prefix = ARGV[1]
local start = ARGV[2]
if redis.call('EXISTS', prefix .. start) == 0 then return 0 end
local doomed = {start}
for _, link in ipairs({'parent', 'successor'}) do
  local hash = redis.call('HGET', prefix .. start, link)
  while hash and #doomed < 10000 and redis.call('EXISTS', prefix .. hash) == 1 do
    table.insert(doomed, hash)
    hash = redis.call('HGET', prefix .. hash, link)
  end
end
for _, hash in ipairs(doomed) do redis.call('DEL', prefix .. hash) end
return #doomed`;

const HIT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) ttl = tonumber(ARGV[1]) end
return {count, ttl}`;

/**
 * Concurrency slots: one sorted-set member per holder, scored with its expiry (Redis's clock, so
 * replicas never disagree). Expired members are dropped before counting, and only the holder
 * moves its own expiry forward: a slot whose request died is free again within one TTL, however
 * busy the key stays.
 */
const ACQUIRE = `
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', nowMs)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], nowMs + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;

/**
 * HIT then ACQUIRE in one script (one round trip per request): KEYS[1] the rate window, KEYS[2] the
 * slots; ARGV: window ms, rate max, then (when there are slots to take) holder, limit, slot TTL ms.
 * Returns {count, window TTL, acquired: 1 / 0, or -1 when no slot was tried}.
 */
const ADMIT = `
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) ttl = tonumber(ARGV[1]) end
if #KEYS < 2 or count > tonumber(ARGV[2]) then return {count, ttl, -1} end
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', nowMs)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[4]) then return {count, ttl, 0} end
redis.call('ZADD', KEYS[2], nowMs + tonumber(ARGV[5]), ARGV[3])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return {count, ttl, 1}`;

const REFRESH = `
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], 'XX', nowMs + tonumber(ARGV[2]), ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1`;

const RELEASE = `
redis.call('ZREM', KEYS[1], ARGV[1])
return 1`;

/** SHA-1 of each script, as Redis names it in its script cache. */
const scriptShas = new Map<string, string>();
const shaOf = (lua: string): string => {
  let sha = scriptShas.get(lua);
  if (!sha) scriptShas.set(lua, (sha = createHash('sha1').update(lua).digest('hex')));
  return sha;
};

export class RedisStore implements Store {
  readonly kind = 'redis' as const;
  private readonly redis: Redis;

  constructor(url: string, private readonly prefix = 'docproc:') {
    this.redis = new Redis(url, {
      // Fail fast instead of queueing commands while Redis is away: callers get a 503.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: 2000,
      connectTimeout: 2000,
      lazyConnect: false,
      retryStrategy: (times) => Math.min(times * 200, 2000),
    });
    // Connection errors are reported through failing commands and readiness, not as crashes.
    this.redis.on('error', () => {});
  }

  /** Resolves once connected (or after `timeoutMs`, leaving readiness to report the outage). */
  async connected(timeoutMs = 3000): Promise<boolean> {
    if (this.redis.status === 'ready') return true;
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.redis.off('ready', onReady);
        resolve(ok);
      };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(false), timeoutMs);
      this.redis.on('ready', onReady);
    });
  }

  /**
   * Runs a script by its SHA-1 (EVALSHA: a few dozen bytes instead of its text on every request,
   * and Redis skips hashing it), sending the text only when this Redis does not have it cached yet
   * (NOSCRIPT: after a restart or a SCRIPT FLUSH).
   */
  private async evalScript(lua: string, numKeys: number, ...args: string[]): Promise<unknown> {
    try {
      return await this.redis.evalsha(shaOf(lua), numKeys, ...args);
    } catch (err) {
      if (!String((err as Error).message).startsWith('NOSCRIPT')) throw err;
      return this.redis.eval(lua, numKeys, ...args);
    }
  }

  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw new StoreUnavailableError(err);
    }
  }

  putCode(emailId: string, codeHash: string, ttlSeconds: number, requester: string): Promise<void> {
    return this.call(async () => {
      await this.evalScript(PUT_CODE, 1, `${this.prefix}code:${emailId}`, codeHash, String(ttlSeconds * 1000), requester);
    });
  }

  checkCode(emailId: string, codeHash: string, client: string, limits: CodeTryLimits): Promise<CodeCheck> {
    return this.call(async () => {
      const result = await this.evalScript(CHECK_CODE, 1, `${this.prefix}code:${emailId}`, codeHash, client, String(limits.perClient), String(limits.perAddress));
      return result as CodeCheck;
    });
  }

  putApiKey(keyHash: string, record: ApiKeyRecord): Promise<void> {
    return this.call(async () => {
      await this.redis.hset(`${this.prefix}key:${keyHash}`, { email: record.email, createdAt: record.createdAt, lineage: record.lineage ?? keyHash });
    });
  }

  getApiKey(keyHash: string): Promise<ApiKeyRecord | undefined> {
    return this.call(async () => {
      const found = await this.redis.hgetall(`${this.prefix}key:${keyHash}`);
      return found.email ? { email: found.email, createdAt: found.createdAt!, lineage: found.lineage ?? keyHash } : undefined;
    });
  }

  rotateApiKey(keyHash: string, successorHash: string, successor: ApiKeyRecord, graceSeconds: number, limit: RotationLimit): Promise<RotationOutcome> {
    return this.call(async () => {
      const [status, resetMs] = (await this.evalScript(
        ROTATE_KEY, 3, `${this.prefix}key:${keyHash}`, `${this.prefix}key:${successorHash}`, `${this.prefix}rl:${limit.bucket}`,
        successorHash, successor.email, successor.createdAt, String(graceSeconds * 1000), String(limit.max), String(limit.windowSeconds * 1000), keyHash,
      )) as [RotationOutcome['status'], number?];
      return status === 'rate-limited' ? { status, resetMs: Number(resetMs) } : ({ status } as RotationOutcome);
    });
  }

  revokeApiKey(keyHash: string): Promise<boolean> {
    return this.call(async () => ((await this.evalScript(REVOKE_KEY, 0, `${this.prefix}key:`, keyHash)) as number) > 0);
  }

  hit(bucket: string, windowSeconds: number): Promise<WindowHit> {
    return this.call(async () => {
      const [count, ttl] = (await this.evalScript(HIT, 1, `${this.prefix}rl:${bucket}`, String(windowSeconds * 1000))) as [number, number];
      return { count, resetMs: ttl };
    });
  }

  acquireSlot(bucket: string, holder: string, limit: number, ttlSeconds: number): Promise<boolean> {
    return this.call(async () => {
      const ok = await this.evalScript(ACQUIRE, 1, `${this.prefix}slots:${bucket}`, holder, String(limit), String(ttlSeconds * 1000));
      return ok === 1;
    });
  }

  admit(rate: RateCheck, slot?: SlotRequest): Promise<Admitted> {
    return this.call(async () => {
      const window = String(rate.windowSeconds * 1000);
      const [count, ttl, acquired] = (await (slot
        ? this.evalScript(ADMIT, 2, `${this.prefix}rl:${rate.bucket}`, `${this.prefix}slots:${slot.bucket}`, window, String(rate.max), slot.holder, String(slot.limit), String(slot.ttlSeconds * 1000))
        : this.evalScript(ADMIT, 1, `${this.prefix}rl:${rate.bucket}`, window, String(rate.max)))) as [number, number, number];
      const hit = { count, resetMs: ttl };
      return acquired < 0 ? { hit } : { hit, acquired: acquired === 1 };
    });
  }

  refreshSlot(bucket: string, holder: string, ttlSeconds: number): Promise<boolean> {
    return this.call(async () => {
      const ok = await this.evalScript(REFRESH, 1, `${this.prefix}slots:${bucket}`, holder, String(ttlSeconds * 1000));
      return ok === 1;
    });
  }

  releaseSlot(bucket: string, holder: string): Promise<void> {
    return this.call(async () => {
      await this.evalScript(RELEASE, 1, `${this.prefix}slots:${bucket}`, holder);
    });
  }

  ping(): Promise<void> {
    return this.call(async () => {
      await this.redis.ping();
    });
  }

  async close(): Promise<void> {
    try {
      await this.redis.quit();
    } catch {
      this.redis.disconnect();
    }
  }
}
