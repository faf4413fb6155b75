import type { Config } from '../config.js';
import { MemoryStore } from './memory-store.js';
import { RedisStore } from './redis-store.js';
import type { Store } from './store.js';

export * from './store.js';
export { MemoryStore, RedisStore };

export function createStore(config: Pick<Config, 'redisUrl'>): Store {
  return config.redisUrl ? new RedisStore(config.redisUrl) : new MemoryStore();
}
