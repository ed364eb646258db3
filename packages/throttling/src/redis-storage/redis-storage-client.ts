import { randomUUID } from 'node:crypto';

import type * as storage from '@crawlee/types';

import { RedisCollectionClient } from './redis-collections';
import { RedisDatasetClient } from './redis-dataset-client';
import { RedisKeyValueStoreClient } from './redis-key-value-store-client';
import { OutagePatience } from './outage-patience';
import type { StorageParts } from './redis-storage-base';
import { RedisRequestQueueClient } from './redis-request-queue-client';
import type { RedisStorageClientOptions, RedisStorageConnection } from './redis-storage-options';
import { resolveRedisStorageOptions } from './redis-storage-options';
import { REQUEST_QUEUE_SCRIPTS, REQUEST_QUEUE_SCRIPT_KEYS } from './request-queue-scripts';
import type { StorageKind } from './storage-keys';
import { REGISTRY_SCRIPTS, StorageRegistry } from './storage-registry';

/**
 * Crawlee's `StorageClient` on Redis: every request queue, key-value store and dataset of a crawl
 * lives in one Redis, so crawler processes on many machines share one frontier (and, through the
 * throttler's stores, its persisted domains and learned rates).
 *
 * ```ts
 * Configuration.getGlobalConfig().useStorageClient(new RedisStorageClient({ url: 'redis://host:6379' }));
 * ```
 *
 * Storages open by name across processes: two processes opening `throttled-example.com` get the
 * same queue. Nothing is purged on start (Crawlee's `purgeOnStart` would empty the queue other
 * processes are filling): start a fresh crawl under a new `prefix`, or call {@link dropAll}.
 */
export class RedisStorageClient implements storage.StorageClient {
    /** The ioredis connection (the one given, or the one this client opened). */
    readonly connection: RedisStorageConnection;
    /** The prefix inside every key's hash tag. */
    readonly prefix: string;
    /** Tells the throttler that other processes open queues here live (it looks for theirs before ending). */
    readonly sharesQueuesAcrossProcesses = true;
    // Whether teardown() closes the connection (only one this client opened).
    private readonly ownsConnection: boolean;
    // Most requests one listAndLockHead locks (the lockLimit option).
    private readonly lockLimit: number;
    // Per kind: the connection, the prefix, the registry (names to ids, shared by every process) and the patience.
    private readonly kinds: Record<StorageKind, StorageParts>;

    constructor(options: RedisStorageClientOptions = {}) {
        const resolved = resolveRedisStorageOptions(options);
        this.connection = resolved.connection;
        this.ownsConnection = resolved.ownsConnection;
        this.prefix = resolved.prefix;
        this.lockLimit = resolved.lockLimit;
        for (const [name, lua] of Object.entries(REQUEST_QUEUE_SCRIPTS))
            this.connection.defineCommand(name, { numberOfKeys: REQUEST_QUEUE_SCRIPT_KEYS, lua });
        for (const [name, script] of Object.entries(REGISTRY_SCRIPTS)) this.connection.defineCommand(name, script);
        // A lost connection is told by the calls it fails (and ridden through); without a listener
        // ioredis prints every reconnect attempt as an unhandled error.
        if (this.ownsConnection) this.connection.on('error', () => undefined);
        const patience = new OutagePatience(this.connection, resolved.outageMs, resolved.clock);
        const parts = (kind: StorageKind): StorageParts => ({
            redis: this.connection,
            prefix: this.prefix,
            registry: new StorageRegistry(this.connection, this.prefix, kind),
            patience,
            clock: resolved.clock,
        });
        this.kinds = { rq: parts('rq'), kvs: parts('kvs'), ds: parts('ds') };
    }

    requestQueues(): storage.RequestQueueCollectionClient {
        const { rq } = this.kinds;
        return new RedisCollectionClient(rq, (id) => new RedisRequestQueueClient(rq, id, 'collection').get());
    }

    requestQueue(id: string, options: storage.RequestQueueOptions = {}): storage.RequestQueueClient {
        // Without a client key (a caller other than Crawlee's RequestQueue) each client locks for itself.
        const clientKey = options.clientKey ?? randomUUID();
        return new RedisRequestQueueClient(this.kinds.rq, id, clientKey, this.lockLimit);
    }

    keyValueStores(): storage.KeyValueStoreCollectionClient {
        const { kvs } = this.kinds;
        return new RedisCollectionClient(kvs, (id) => new RedisKeyValueStoreClient(kvs, id).get());
    }

    keyValueStore(id: string): storage.KeyValueStoreClient {
        return new RedisKeyValueStoreClient(this.kinds.kvs, id);
    }

    datasets(): storage.DatasetCollectionClient {
        const { ds } = this.kinds;
        return new RedisCollectionClient(ds, (id) => new RedisDatasetClient(ds, id).get());
    }

    dataset(id: string): storage.DatasetClient {
        return new RedisDatasetClient(this.kinds.ds, id);
    }

    /** Closes the connection this client opened (a given one is left open). */
    async teardown(): Promise<void> {
        if (this.ownsConnection && this.connection.status !== 'end')
            await this.connection.quit().catch(() => undefined);
    }

    /**
     * Deletes every storage under this prefix, on every machine's behalf: for tests and for starting
     * a crawl afresh. Not called by Crawlee.
     */
    async dropAll(): Promise<void> {
        for (const node of 'nodes' in this.connection ? this.connection.nodes('master') : [this.connection]) {
            let cursor = '0';
            do {
                const [next, keys] = await node.scan(cursor, 'MATCH', `{${this.prefix}:*`, 'COUNT', 500);
                for (const key of keys) await node.unlink(key);
                cursor = next;
            } while (cursor !== '0');
        }
    }
}
