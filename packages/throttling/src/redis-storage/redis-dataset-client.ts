import type * as storage from '@crawlee/types';
import type { Dictionary } from '@crawlee/types';

import { RedisStorageError } from './redis-storage-error';
import type { StorageParts } from './redis-storage-base';
import { RedisStorageBase } from './redis-storage-base';
import { iterablePromise, readMeta } from './storage-meta';

/** Items a `listItems` call returns when it gives no limit. */
const DEFAULT_LIST_LIMIT = 250_000;

/**
 * Crawlee's `DatasetClient` on Redis: items are JSON strings in one list, appended with RPUSH
 * (atomic), so items pushed by many processes interleave but none is lost or split.
 */
export class RedisDatasetClient<Data extends Dictionary = Dictionary>
    extends RedisStorageBase<storage.DatasetInfo>
    implements storage.DatasetClient<Data>
{
    constructor(parts: StorageParts, idOrName: string) {
        super(parts, 'ds', idOrName);
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
        const jsons = flat.map((item) => JSON.stringify(item));
        await this.patient('pushItems', async () => {
            const keys = await this.requireKeys('pushItems');
            await this.redis
                .multi()
                .rpush(keys.data, ...jsons)
                .hset(keys.meta, 'modifiedAt', Date.now())
                .exec();
        });
    }

    private async listPage(options: storage.DatasetClientListOptions): Promise<storage.PaginatedList<Data>> {
        const { offset = 0, limit = DEFAULT_LIST_LIMIT, desc = false } = options;
        for (const [name, value, min] of [
            ['offset', offset, 0],
            ['limit', limit, 1],
        ] as const)
            if (!Number.isInteger(value) || value < min)
                throw new RedisStorageError(`listItems: ${name} must be an integer >= ${min}, got ${String(value)}`);
        const { total, raw } = await this.patient('listItems', async () => {
            const keys = await this.requireKeys('listItems');
            const length = await this.redis.llen(keys.data);
            // Descending pages count from the newest item: offset 0 is the last one pushed.
            const end = desc ? length - offset : Math.min(offset + limit, length);
            const start = desc ? Math.max(end - limit, 0) : offset;
            return { total: length, raw: end > start ? await this.redis.lrange(keys.data, start, end - 1) : [] };
        });
        const items = raw.map((json) => JSON.parse(json) as Data);
        if (desc) items.reverse();
        return { total, count: items.length, offset, limit, desc, items };
    }

    protected async info(): Promise<storage.DatasetInfo | undefined> {
        const keys = await this.keysOrUndefined();
        const meta = keys && (await readMeta(this.redis, keys.meta));
        return meta ? { ...meta, itemCount: await this.redis.llen(keys.data) } : undefined;
    }
}
