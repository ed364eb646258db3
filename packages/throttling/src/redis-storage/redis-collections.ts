import type * as storage from '@crawlee/types';

import { RedisDatasetClient } from './redis-dataset-client';
import { RedisKeyValueStoreClient } from './redis-key-value-store-client';
import { RedisRequestQueueClient } from './redis-request-queue-client';
import type { StorageParts } from './redis-storage-base';

/** Every storage of a kind on this Redis and prefix, whichever process created it, oldest first. */
async function listAll<Info extends { createdAt: Date }>(
    parts: StorageParts,
    infoOf: (id: string) => Promise<Info | undefined>,
): Promise<storage.PaginatedList<Info>> {
    const ids = await parts.patience.call('list of storages', () => parts.registry.list());
    const infos: Info[] = [];
    for (const info of await Promise.all(ids.map(({ id }) => infoOf(id)))) if (info) infos.push(info);
    infos.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
    return { total: infos.length, count: infos.length, offset: 0, limit: infos.length, desc: false, items: infos };
}

/** Opens (or creates) the storage named `name`, ridden through an outage; answers its id. */
function openOrCreate(parts: StorageParts, name: string | undefined): Promise<string> {
    return parts.patience.call(`open of storage ${name ?? '(unnamed)'}`, () => parts.registry.getOrCreate(name));
}

export class RedisRequestQueueCollectionClient implements storage.RequestQueueCollectionClient {
    constructor(private readonly parts: StorageParts) {}

    list(): Promise<storage.PaginatedList<storage.RequestQueueInfo>> {
        return listAll(this.parts, (id) => this.client(id).get());
    }

    async getOrCreate(name?: string): Promise<storage.RequestQueueInfo> {
        const id = await openOrCreate(this.parts, name);
        return (await this.client(id).get())!;
    }

    private client(id: string): RedisRequestQueueClient {
        return new RedisRequestQueueClient(this.parts, id, 'collection');
    }
}

export class RedisKeyValueStoreCollectionClient implements storage.KeyValueStoreCollectionClient {
    constructor(private readonly parts: StorageParts) {}

    list(): Promise<storage.PaginatedList<storage.KeyValueStoreInfo>> {
        return listAll(this.parts, (id) => this.client(id).get());
    }

    async getOrCreate(name?: string): Promise<storage.KeyValueStoreInfo> {
        const id = await openOrCreate(this.parts, name);
        return (await this.client(id).get())!;
    }

    private client(id: string): RedisKeyValueStoreClient {
        return new RedisKeyValueStoreClient(this.parts, id);
    }
}

export class RedisDatasetCollectionClient implements storage.DatasetCollectionClient {
    constructor(private readonly parts: StorageParts) {}

    list(): Promise<storage.PaginatedList<storage.Dataset>> {
        return listAll(this.parts, (id) => this.client(id).get());
    }

    async getOrCreate(name?: string): Promise<storage.DatasetCollectionData> {
        const id = await openOrCreate(this.parts, name);
        return (await this.client(id).get())!;
    }

    private client(id: string): RedisDatasetClient {
        return new RedisDatasetClient(this.parts, id);
    }
}
