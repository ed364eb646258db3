import type { RedisStorageConnection } from './redis-storage-options';

/** A storage's metadata as its hash holds it (times in Redis ms). */
export interface StorageMeta {
    id: string;
    name?: string;
    createdAt: Date;
    modifiedAt: Date;
    accessedAt: Date;
}

/** Reads a store's or dataset's metadata hash; undefined when the storage does not exist. */
export async function readMeta(redis: RedisStorageConnection, metaKey: string): Promise<StorageMeta | undefined> {
    const m = await redis.hgetall(metaKey);
    if (!m.id) return undefined;
    return {
        id: m.id,
        name: m.name || undefined,
        createdAt: new Date(Number(m.createdAt)),
        modifiedAt: new Date(Number(m.modifiedAt)),
        accessedAt: new Date(Number(m.accessedAt)),
    };
}

/** A promise that can also be iterated with `for await`, as Crawlee 3.x's list calls answer. */
export function iterablePromise<T, Item>(
    promise: Promise<T>,
    itemsOf: (page: T) => Item[],
): Promise<T> & AsyncIterable<Item> {
    return Object.assign(promise, {
        async *[Symbol.asyncIterator]() {
            for (const item of itemsOf(await promise)) yield item;
        },
    });
}
