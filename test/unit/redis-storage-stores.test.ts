import { Configuration, Dataset, KeyValueStore } from '@crawlee/core';
import type { KeyValueStoreClient } from '@crawlee/types';

import { describeRedis, testRedis, uniquePrefix } from '../helpers/redis';
import type { StorageUnderTest } from '../helpers/redis-storage';
import { memoryStorage, redisStorage } from '../helpers/redis-storage';

// Key-value stores and datasets through Crawlee's own classes, on memory-storage and Redis alike.

function behaviours(make: () => StorageUnderTest) {
    let under: StorageUnderTest;
    const config = () => new Configuration({ storageClient: under.client(), purgeOnStart: false });

    beforeEach(() => {
        under = make();
    });
    afterEach(() => under.close());

    it('keeps records with their content types, and one store opened by name is shared', async () => {
        const store = await KeyValueStore.open('state', { config: config() });
        await store.setValue('json', { domains: ['a.test'], n: 1 });
        await store.setValue('text', 'hello', { contentType: 'text/plain' });
        await store.setValue('bytes', Buffer.from([1, 2, 3]), { contentType: 'application/octet-stream' });
        const other = await KeyValueStore.open('state', { config: config() });
        await expect(other.getValue('json')).resolves.toEqual({ domains: ['a.test'], n: 1 });
        await expect(other.getValue('text')).resolves.toBe('hello');
        expect(Buffer.from((await other.getValue('bytes')) as Buffer)).toEqual(Buffer.from([1, 2, 3]));
        await expect(other.getValue('missing')).resolves.toBeNull();
        await other.setValue('text', null);
        await expect(store.getValue('text')).resolves.toBeNull();
    });

    it('lists keys in order, in pages from an exclusive start key', async () => {
        const store = await KeyValueStore.open('listing', { config: config() });
        for (const key of ['c', 'a', 'e', 'b', 'd']) await store.setValue(key, { key });
        // The store's own client, as Crawlee's KeyValueStore pages through it.
        const client = (store as unknown as { client: KeyValueStoreClient }).client;
        const first = await client.listKeys({ limit: 2 });
        expect(first.items.map((i) => i.key)).toEqual(['a', 'b']);
        expect(first).toMatchObject({ count: 2, isTruncated: true, nextExclusiveStartKey: 'b' });
        const rest = await client.listKeys({ exclusiveStartKey: 'b', limit: 10 });
        expect(rest.items.map((i) => i.key)).toEqual(['c', 'd', 'e']);
        expect(rest.isTruncated).toBe(false);
        expect(rest.items[0].size).toBeGreaterThan(0);
    });

    it('takes pushed items and lists them with offset, limit and desc', async () => {
        const dataset = await Dataset.open('pages', { config: config() });
        await dataset.pushData([{ n: 1 }, { n: 2 }, { n: 3 }]);
        await (await Dataset.open('pages', { config: config() })).pushData({ n: 4 });
        const all = await dataset.getData();
        expect(all.items).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }]);
        expect(all.total).toBe(4);
        expect((await dataset.getData({ offset: 1, limit: 2 })).items).toEqual([{ n: 2 }, { n: 3 }]);
        expect((await dataset.getData({ desc: true, limit: 2 })).items).toEqual([{ n: 4 }, { n: 3 }]);
        await expect(dataset.getInfo()).resolves.toMatchObject({ itemCount: 4 });
    });
}

describe('stores and datasets on memory-storage', () => behaviours(memoryStorage));

describeRedis('stores and datasets on RedisStorageClient', () => {
    behaviours(() => redisStorage(uniquePrefix('rs-kv')));

    it('answers, renames and deletes a store and a dataset through their clients', async () => {
        const under = redisStorage(uniquePrefix('rs-kv'));
        const client = under.client();
        const redis = testRedis();
        const kinds = [
            {
                collection: client.keyValueStores(),
                open: (id: string) => client.keyValueStore(id),
                fill: (id: string) => client.keyValueStore(id).setRecord({ key: 'k', value: { n: 1 } }),
            },
            {
                collection: client.datasets(),
                open: (id: string) => client.dataset(id),
                fill: (id: string) => client.dataset(id).pushItems({ n: 1 }),
            },
        ];
        try {
            for (const { collection, open, fill } of kinds) {
                const { id } = await collection.getOrCreate('first-name');
                await fill(id);
                const storage = open(id);
                await expect(storage.get()).resolves.toMatchObject({ id, name: 'first-name' });
                await expect(storage.update({ name: 'second-name' })).resolves.toMatchObject({
                    id,
                    name: 'second-name',
                });
                await expect(collection.getOrCreate('second-name')).resolves.toMatchObject({ id });
                await storage.delete();
                await expect(storage.get()).resolves.toBeUndefined();
                // Every key of the storage is gone, not only its metadata.
                await expect(redis.keys(`*${id}*`)).resolves.toEqual([]);
                await expect(storage.update({ name: 'third-name' })).rejects.toThrow(/does not exist/);
            }
        } finally {
            await redis.quit();
            await under.close();
        }
    });
});
