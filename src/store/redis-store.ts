import { Redis } from 'ioredis';
import type { ApiKeyRecord, CodeCheck, Store, WindowHit } from './store.js';
import { StoreUnavailableError } from './store.js';

/*
 * Lua keeps each read-modify-write atomic across replicas: two racing verifications of the
 * same code cannot both succeed, and a limit counted on one instance holds on all.
 */
const CHECK_CODE = `
local hash = redis.call('HGET', KEYS[1], 'hash')
if not hash then return 'missing' end
if hash == ARGV[1] then redis.call('DEL', KEYS[1]) return 'ok' end
local attempts = redis.call('HINCRBY', KEYS[1], 'attempts', 1)
if attempts >= tonumber(ARGV[2]) then redis.call('DEL', KEYS[1]) return 'burnt' end
return 'wrong'`;

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

const REFRESH = `
local now = redis.call('TIME')
local nowMs = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
if not redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
redis.call('ZADD', KEYS[1], 'XX', nowMs + tonumber(ARGV[2]), ARGV[1])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[2]) then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1`;

/** Deletes the key now, or sets its expiry unless an earlier one is already set. */
const EXPIRE_KEY = `
local ttl = redis.call('PTTL', KEYS[1])
if ttl == -2 then return 0 end
local ms = tonumber(ARGV[1])
if ms <= 0 then redis.call('DEL', KEYS[1]) return 1 end
if ttl == -1 or ttl > ms then redis.call('PEXPIRE', KEYS[1], ms) end
return 1`;

const RELEASE = `
redis.call('ZREM', KEYS[1], ARGV[1])
return 1`;

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

  private async call<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw new StoreUnavailableError(err);
    }
  }

  putCode(emailId: string, codeHash: string, ttlSeconds: number): Promise<void> {
    const key = `${this.prefix}code:${emailId}`;
    return this.call(async () => {
      await this.redis.multi().del(key).hset(key, 'hash', codeHash, 'attempts', '0').expire(key, ttlSeconds).exec();
    });
  }

  checkCode(emailId: string, codeHash: string, maxAttempts: number): Promise<CodeCheck> {
    return this.call(async () => {
      const result = await this.redis.eval(CHECK_CODE, 1, `${this.prefix}code:${emailId}`, codeHash, String(maxAttempts));
      return result as CodeCheck;
    });
  }

  putApiKey(keyHash: string, record: ApiKeyRecord): Promise<void> {
    return this.call(async () => {
      await this.redis.hset(`${this.prefix}key:${keyHash}`, { email: record.email, createdAt: record.createdAt });
    });
  }

  getApiKey(keyHash: string): Promise<ApiKeyRecord | undefined> {
    return this.call(async () => {
      const found = await this.redis.hgetall(`${this.prefix}key:${keyHash}`);
      return found.email ? { email: found.email, createdAt: found.createdAt } : undefined;
    });
  }

  expireApiKey(keyHash: string, afterSeconds: number): Promise<boolean> {
    return this.call(async () => (await this.redis.eval(EXPIRE_KEY, 1, `${this.prefix}key:${keyHash}`, String(afterSeconds * 1000))) === 1);
  }

  hit(bucket: string, windowSeconds: number): Promise<WindowHit> {
    return this.call(async () => {
      const [count, ttl] = (await this.redis.eval(HIT, 1, `${this.prefix}rl:${bucket}`, String(windowSeconds * 1000))) as [number, number];
      return { count, resetMs: ttl };
    });
  }

  acquireSlot(bucket: string, holder: string, limit: number, ttlSeconds: number): Promise<boolean> {
    return this.call(async () => {
      const ok = await this.redis.eval(ACQUIRE, 1, `${this.prefix}slots:${bucket}`, holder, String(limit), String(ttlSeconds * 1000));
      return ok === 1;
    });
  }

  refreshSlot(bucket: string, holder: string, ttlSeconds: number): Promise<boolean> {
    return this.call(async () => {
      const ok = await this.redis.eval(REFRESH, 1, `${this.prefix}slots:${bucket}`, holder, String(ttlSeconds * 1000));
      return ok === 1;
    });
  }

  releaseSlot(bucket: string, holder: string): Promise<void> {
    return this.call(async () => {
      await this.redis.eval(RELEASE, 1, `${this.prefix}slots:${bucket}`, holder);
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
