// The Redis entry point, `crawlee-throttling/redis`: everything that needs ioredis (an optional
// peer dependency, loaded when a class first connects) lives behind it, so the main entry works
// without ioredis installed.
export { RedisStorageClient } from './redis-storage/redis-storage-client';
export type { RedisStorageClientOptions, RedisStorageConnection } from './redis-storage/redis-storage-options';
export { RedisStorageError, RedisUnavailableError } from './redis-storage/redis-storage-error';
export { MissingRedisDriverError } from './shared-clock/load-ioredis';
export { RedisDomainClock, SharedClockError } from './shared-clock/redis-domain-clock';
export type { RedisDomainClockOptions, RedisClockClient } from './shared-clock/redis-clock-options';
export type { RedisClockKeys } from './shared-clock/redis-keys';
