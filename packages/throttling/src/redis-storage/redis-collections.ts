import type * as storage from '@crawlee/types';

import { RedisDatasetClient } from './redis-dataset-client';
import { RedisKeyValueStoreClient } from './redis-key-value-store-client';
import { RedisRequestQueueClient } from './redis-request-queue-client';
import type { RedisStorageConnection } from './redis-storage-options';
import type { StorageRegistry } from './storage-registry';

/** What the three collection clients share: the connection, the prefix and the kind's registry. */
interface CollectionParts {
    redis: RedisStorageConnection;
    prefix: string;
    registry: StorageRegistry;
}

/** Every storage of a kind on this Redis and prefix, whichever process created it, oldest first. */
async function listAll<Info extends { createdAt: Date }>(
    parts: CollectionParts,
    infoOf: (id: string) => Promise<Info | undefined>,
): Promise<storage.PaginatedList<Info>> {
    const ids = await parts.registry.list();
    const infos: Info[] = [];
    for (const info of await Promise.all(ids.map(({ id }) => infoOf(id)))) if (info) infos.push(info);
    infos.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
    return { total: infos.length, count: infos.length, offset: 0, limit: infos.length, desc: false, items: infos };
}

export class RedisRequestQueueCollectionClient implements storage.RequestQueueCollectionClient {
    constructor(private readonly parts: CollectionParts) {}

    list(): Promise<storage.PaginatedList<storage.RequestQueueInfo>> {
        return listAll(this.parts, (id) => this.client(id).get());
    }

    async getOrCreate(name?: string): Promise<storage.RequestQueueInfo> {
        const id = await this.parts.registry.getOrCreate(name);
        return (await this.client(id).get())!;
    }

    private client(id: string): RedisRequestQueueClient {
        const { redis, prefix, registry } = this.parts;
        return new RedisRequestQueueClient(redis, prefix, registry, id, 'collection');
    }
}

export class RedisKeyValueStoreCollectionClient implements storage.KeyValueStoreCollectionClient {
    constructor(private readonly parts: CollectionParts) {}

    list(): Promise<storage.PaginatedList<storage.KeyValueStoreInfo>> {
        return listAll(this.parts, (id) => this.client(id).get());
    }

    async getOrCreate(name?: string): Promise<storage.KeyValueStoreInfo> {
        const id = await this.parts.registry.getOrCreate(name);
        return (await this.client(id).get())!;
    }

    private client(id: string): RedisKeyValueStoreClient {
        const { redis, prefix, registry } = this.parts;
        return new RedisKeyValueStoreClient(redis, prefix, registry, id);
    }
}

export class RedisDatasetCollectionClient implements storage.DatasetCollectionClient {
    constructor(private readonly parts: CollectionParts) {}

    list(): Promise<storage.PaginatedList<storage.Dataset>> {
        return listAll(this.parts, (id) => this.client(id).get());
    }

    async getOrCreate(name?: string): Promise<storage.DatasetCollectionData> {
        const id = await this.parts.registry.getOrCreate(name);
        return (await this.client(id).get())!;
    }

    private client(id: string): RedisDatasetClient {
        const { redis, prefix, registry } = this.parts;
        return new RedisDatasetClient(redis, prefix, registry, id);
    }
}
