import { Configuration } from '@crawlee/core';
import { MemoryStorage } from '@crawlee/memory-storage';

/** A Crawlee configuration with its own in-memory storage: nothing touches the disk, runs never share queues. */
export function memoryConfig(): Configuration {
    return new Configuration({
        persistStorage: false,
        purgeOnStart: false,
        storageClient: new MemoryStorage({ persistStorage: false, writeMetadata: false }),
    });
}
