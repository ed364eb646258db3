import type * as storage from '@crawlee/types';

import type { StorageParts } from './redis-storage-base';

/**
 * Crawlee's collection client of one kind (request queues, key-value stores or datasets) on Redis:
 * every storage of that kind on this Redis and prefix, whichever process created it. The three
 * kinds differ only in the client that reads a storage's info, which `infoOf` stands for.
 */
export class RedisCollectionClient<Info extends { createdAt: Date }> {
    constructor(
        private readonly parts: StorageParts,
        // The info of the storage with this id; undefined once it is gone (deleted by another process).
        private readonly infoOf: (id: string) => Promise<Info | undefined>,
    ) {}

    /** Every storage of the kind, oldest first. */
    async list(): Promise<storage.PaginatedList<Info>> {
        const ids = await this.parts.patience.call('list of storages', () => this.parts.registry.list());
        const infos: Info[] = [];
        for (const info of await Promise.all(ids.map(({ id }) => this.infoOf(id)))) if (info) infos.push(info);
        infos.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
        return { total: infos.length, count: infos.length, offset: 0, limit: infos.length, desc: false, items: infos };
    }

    /** Opens (or creates) the storage named `name`, ridden through an outage; answers its info. */
    async getOrCreate(name?: string): Promise<Info> {
        const id = await this.parts.patience.call(`open of storage ${name ?? '(unnamed)'}`, () =>
            this.parts.registry.getOrCreate(name),
        );
        return (await this.infoOf(id))!;
    }
}
