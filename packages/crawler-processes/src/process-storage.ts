import { Configuration } from '@crawlee/core';
import { RedisDomainClock, RedisStorageClient } from 'crawlee-throttling/redis';

import { memoryConfig } from './memory-config';

/** The Redis a crawler process shares its clocks in, and with `storage` its frontier too. */
export interface ProcessRedis {
    url: string;
    /** The RedisDomainClock's key prefix. */
    clockPrefix: string;
    /**
     * Every storage of the process (the throttler's queues included) as a RedisStorageClient under
     * this prefix: all processes crawl one frontier. Without it the process keeps its own storage in memory.
     */
    storage?: { prefix: string; lockLimit?: number };
}

/** A crawler process's storage and clock, for its throttler and its crawler. */
export interface ProcessStorage {
    config: Configuration;
    storageClient?: RedisStorageClient;
    clock?: RedisDomainClock;
    /** Closes the clock's and the storage's connections (at the end of the crawl). */
    close(): Promise<void>;
}

/** The storage and clock of one crawler process: shared in `redis`, or its own without it. */
export function processStorage(redis: ProcessRedis | undefined): ProcessStorage {
    const shared = redis?.storage;
    const storageClient = shared
        ? new RedisStorageClient({
              url: redis.url,
              prefix: shared.prefix,
              ...(shared.lockLimit === undefined ? {} : { lockLimit: shared.lockLimit }),
          })
        : undefined;
    // Nothing is purged on start: the other processes are filling the same queues.
    const config = storageClient ? new Configuration({ storageClient, purgeOnStart: false }) : memoryConfig();
    const clock = redis ? new RedisDomainClock({ url: redis.url, keyPrefix: redis.clockPrefix }) : undefined;
    return {
        config,
        storageClient,
        clock,
        async close() {
            await clock?.close();
            await storageClient?.teardown();
        },
    };
}
