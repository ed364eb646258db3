import { MemoryStorage } from '@crawlee/memory-storage';
import type { StorageClient } from '@crawlee/types';

import { RedisStorageClient } from 'crawlee-throttling/redis';
import { REDIS_URL, deletePrefix, testRedis } from './redis';

/** A storage under test: how to make one "process's" client of it, and how to clean up. */
export interface StorageUnderTest {
    name: string;
    /** A client of the one shared storage, as another process would open it (Redis: its own connection). */
    client(): StorageClient;
    close(): Promise<void>;
}

/** Memory-storage: every "process" is the same in-memory instance (it cannot be shared further). */
export function memoryStorage(): StorageUnderTest {
    const storage = new MemoryStorage({ persistStorage: false, writeMetadata: false });
    return { name: 'memory-storage', client: () => storage, close: async () => undefined };
}

/** Redis under `prefix`: each client opens its own connection, as separate machines would. */
export function redisStorage(prefix: string): StorageUnderTest {
    const opened: RedisStorageClient[] = [];
    return {
        name: 'RedisStorageClient',
        client: () => {
            const client = new RedisStorageClient({ url: REDIS_URL, prefix });
            opened.push(client);
            return client;
        },
        close: async () => {
            const redis = testRedis();
            await deletePrefix(redis, prefix);
            await redis.quit();
            await Promise.all(opened.splice(0).map((c) => c.teardown()));
        },
    };
}
