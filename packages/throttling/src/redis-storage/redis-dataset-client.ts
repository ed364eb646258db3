import type * as storage from '@crawlee/types';
import type { Dictionary } from '@crawlee/types';

import type { RedisStorageConnection } from './redis-storage-options';
import { RedisStorageError } from './redis-storage-error';
import { iterablePromise, readMeta } from './storage-meta';
import type { StorageRegistry } from './storage-registry';
import type { StorageKeys } from './storage-keys';
import { storageKeys } from './storage-keys';

/** Items a `listItems` call returns when it gives no limit. */
const DEFAULT_LIST_LIMIT = 250_000;

/**
 * Crawlee's `DatasetClient` on Redis: items are JSON strings in one list, appended with RPUSH
 * (atomic), so items pushed by many processes interleave but none is lost or split.
 */
export class RedisDatasetClient<Data extends Dictionary = Dictionary> implements storage.DatasetClient<Data> {
    // The id once resolved from `idOrName` through the registry.
    private resolvedId?: string;

    constructor(
        private readonly redis: RedisStorageConnection,
        private readonly prefix: string,
        private readonly registry: StorageRegistry,
        // The id or name this client was made for.
        private readonly idOrName: string,
    ) {}

    async get(): Promise<storage.DatasetInfo | undefined> {
        const keys = await this.keysOrUndefined();
        const meta = keys && (await readMeta(this.redis, keys.meta));
        return meta ? { ...meta, itemCount: await this.redis.llen(keys.data) } : undefined;
    }

    async update(newFields: storage.DatasetClientUpdateOptions): Promise<Partial<storage.DatasetInfo>> {
        const info = await this.get();
        if (!info) throw this.missing('update');
        if (newFields.name && newFields.name !== info.name)
            await this.registry.rename(info.id, info.name ?? '', newFields.name);
        return (await this.get())!;
    }

    async delete(): Promise<void> {
        const keys = await this.keysOrUndefined();
        if (!keys) return;
        const name = await this.redis.hget(keys.meta, 'name');
        await this.redis.del(keys.meta, keys.data);
        await this.registry.forget(this.resolvedId!, name ?? '');
    }

    async downloadItems(): Promise<Buffer> {
        const { items } = await this.listPage({});
        return Buffer.from(JSON.stringify(items));
    }

    listItems(
        options: storage.DatasetClientListOptions = {},
    ): AsyncIterable<Data> & Promise<storage.PaginatedList<Data>> {
        return iterablePromise(this.listPage(options), (page) => page.items);
    }

    async pushItems(items: Data | Data[] | string | string[]): Promise<void> {
        const list = (Array.isArray(items) ? items : [items]).map((item) =>
            typeof item === 'string' ? (JSON.parse(item) as unknown) : item,
        );
        const flat = list.flatMap((item) => (Array.isArray(item) ? item : [item]));
        for (const item of flat)
            if (typeof item !== 'object' || item === null)
                throw new RedisStorageError(`pushItems: each item must be an object, got ${JSON.stringify(item)}`);
        if (flat.length === 0) return;
        const keys = await this.requireKeys('pushItems');
        await this.redis
            .multi()
            .rpush(keys.data, ...flat.map((item) => JSON.stringify(item)))
            .hset(keys.meta, 'modifiedAt', Date.now())
            .exec();
    }

    private async listPage(options: storage.DatasetClientListOptions): Promise<storage.PaginatedList<Data>> {
        const { offset = 0, limit = DEFAULT_LIST_LIMIT, desc = false } = options;
        for (const [name, value, min] of [
            ['offset', offset, 0],
            ['limit', limit, 1],
        ] as const)
            if (!Number.isInteger(value) || value < min)
                throw new RedisStorageError(`listItems: ${name} must be an integer >= ${min}, got ${String(value)}`);
        const keys = await this.requireKeys('listItems');
        const total = await this.redis.llen(keys.data);
        // Descending pages count from the newest item: offset 0 is the last one pushed.
        const end = desc ? total - offset : Math.min(offset + limit, total);
        const start = desc ? Math.max(end - limit, 0) : offset;
        const raw = end > start ? await this.redis.lrange(keys.data, start, end - 1) : [];
        const items = raw.map((json) => JSON.parse(json) as Data);
        if (desc) items.reverse();
        return { total, count: items.length, offset, limit, desc, items };
    }

    private async requireKeys(what: string): Promise<StorageKeys> {
        const keys = await this.keysOrUndefined();
        if (!keys || !(await this.redis.exists(keys.meta))) throw this.missing(what);
        return keys;
    }

    private missing(what: string): RedisStorageError {
        return new RedisStorageError(`${what}: dataset ${this.idOrName} does not exist`);
    }

    private async keysOrUndefined(): Promise<StorageKeys | undefined> {
        this.resolvedId ??= await this.registry.resolve(this.idOrName);
        return this.resolvedId === undefined ? undefined : storageKeys(this.prefix, 'ds', this.resolvedId);
    }
}
