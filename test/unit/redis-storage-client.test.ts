import type { RequestQueueClient } from '@crawlee/types';

import { ThrottlingOptionsError } from 'crawlee-throttling';
import { RedisStorageClient } from 'crawlee-throttling/redis';
import { REDIS_URL, describeRedis, testRedis, uniquePrefix } from '../helpers/redis';
import { redisStorage } from '../helpers/redis-storage';

describe('RedisStorageClient options', () => {
    it('names the bad option and what it allows', () => {
        expect(() => new RedisStorageClient({ url: 'http://x' })).toThrow(ThrottlingOptionsError);
        expect(() => new RedisStorageClient({ url: 'http://x' })).toThrow(
            /`url`: must be a redis:\/\/ or rediss:\/\/ URL/,
        );
        expect(() => new RedisStorageClient({ prefix: 'a{b' })).toThrow(/`prefix`: .*no \{ or \}/);
        expect(() => new RedisStorageClient({ timeoutMs: 0 })).toThrow(/`timeoutMs`: must be a number of ms > 0/);
        expect(() => new RedisStorageClient({ client: {} as never })).toThrow(/`client`: must be an ioredis/);
        expect(() => new RedisStorageClient({ urls: 'x' } as never)).toThrow(/unknown option\(s\) `urls`/);
        expect(() => new RedisStorageClient({ lockLimit: 0 })).toThrow(/`lockLimit`: must be from 1 to 25/);
        const given = testRedis();
        expect(() => new RedisStorageClient({ url: REDIS_URL, client: given })).toThrow(/either `url` or `client`/);
        given.disconnect();
    });
});

describeRedis('RedisStorageClient across processes', () => {
    const prefix = uniquePrefix('rs-client');
    const under = redisStorage(prefix);
    afterAll(() => under.close());

    async function queue(name: string, clientKey: string): Promise<RequestQueueClient> {
        const storage = under.client();
        const { id } = await storage.requestQueues().getOrCreate(name);
        return storage.requestQueue(id, { clientKey });
    }

    it('opens one queue by name from two connections, and lists it from a third', async () => {
        const [one, two] = [under.client(), under.client()];
        const a = await one.requestQueues().getOrCreate('throttled-example.com');
        const b = await two.requestQueues().getOrCreate('throttled-example.com');
        expect(b.id).toBe(a.id);
        // Opening by name where an id is expected works too (Crawlee's StorageManager does it).
        await expect(under.client().requestQueue('throttled-example.com').get()).resolves.toMatchObject({ id: a.id });
        const listed = await under.client().requestQueues().list();
        expect(listed.items.map((q) => q.name)).toContain('throttled-example.com');
    });

    it("refuses to prolong or delete another client's live lock", async () => {
        const a = await queue('locks', 'A');
        const b = await queue('locks', 'B');
        await a.addRequest({ url: 'http://x.test/1', uniqueKey: 'http://x.test/1' });
        const [one] = (await a.listAndLockHead({ limit: 1, lockSecs: 60 })).items;
        await expect(b.prolongRequestLock(one.id, { lockSecs: 60 })).rejects.toThrow(/another client holds the lock/);
        await expect(b.deleteRequestLock(one.id)).rejects.toThrow(/another client holds the lock/);
        await expect(a.prolongRequestLock(one.id, { lockSecs: 60 })).resolves.toHaveProperty('lockExpiresAt');
        await a.deleteRequestLock(one.id);
        await expect(b.listAndLockHead({ limit: 1, lockSecs: 60 })).resolves.toMatchObject({ items: [{ id: one.id }] });
    });

    it('locks at most lockLimit requests per call, so a small queue spreads over processes', async () => {
        const storage = new RedisStorageClient({ url: REDIS_URL, prefix, lockLimit: 2 });
        const { id } = await storage.requestQueues().getOrCreate('spread');
        const a = storage.requestQueue(id, { clientKey: 'A' });
        await a.batchAddRequests(['1', '2', '3'].map((n) => ({ url: `http://x.test/${n}`, uniqueKey: n })));
        await expect(a.listAndLockHead({ limit: 25, lockSecs: 60 })).resolves.toMatchObject({ limit: 2 });
        const b = await queue('spread', 'B');
        expect((await b.listAndLockHead({ limit: 25, lockSecs: 60 })).items.map((i) => i.uniqueKey)).toEqual(['3']);
        await storage.teardown();
    });

    it('keeps every key of one queue in one hash slot, under the prefix', async () => {
        const a = await queue('slots', 'A');
        await a.addRequest({ url: 'http://x.test/1', uniqueKey: 'http://x.test/1' });
        await a.listAndLockHead({ limit: 1, lockSecs: 60 });
        const { id } = (await a.get())!;
        const redis = testRedis();
        const keys = await redis.keys(`*${id}*`);
        await redis.quit();
        expect(keys.length).toBeGreaterThanOrEqual(4);
        const tag = `{${prefix.replace(/:+$/, '')}:rq:${id}}`;
        expect(keys.every((k) => k.startsWith(tag))).toBe(true);
    });

    it('says which queue is missing once it is deleted', async () => {
        const a = await queue('gone', 'A');
        await a.delete();
        await expect(a.get()).resolves.toBeUndefined();
        await expect(a.addRequest({ url: 'http://x.test/1', uniqueKey: 'k' })).rejects.toThrow(/does not exist/);
    });
});
