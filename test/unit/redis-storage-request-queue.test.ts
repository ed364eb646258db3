import { Configuration, RequestQueue } from '@crawlee/core';
import type { RequestQueueClient, StorageClient } from '@crawlee/types';

import { describeRedis, uniquePrefix } from '../helpers/redis';
import type { StorageUnderTest } from '../helpers/redis-storage';
import { memoryStorage, redisStorage } from '../helpers/redis-storage';

// The request-queue behaviours Crawlee relies on, run against memory-storage and RedisStorageClient
// alike, so the two provably agree.

const req = (path: string, extra: Record<string, unknown> = {}) => ({
    url: `http://site.test/${path}`,
    uniqueKey: `http://site.test/${path}`,
    ...extra,
});

async function openQueue(storage: StorageClient, name: string, clientKey: string): Promise<RequestQueueClient> {
    const { id } = await storage.requestQueues().getOrCreate(name);
    return storage.requestQueue(id, { clientKey });
}

const urls = (items: { url: string }[]) => items.map((i) => i.url.replace('http://site.test/', ''));

function behaviours(make: () => StorageUnderTest) {
    let under: StorageUnderTest;
    let a: RequestQueueClient;
    let b: RequestQueueClient;

    beforeEach(async () => {
        under = make();
        a = await openQueue(under.client(), 'q', 'client-a');
        b = await openQueue(under.client(), 'q', 'client-b');
    });
    afterEach(() => under.close());

    it('deduplicates by uniqueKey and reports present and handled', async () => {
        await expect(a.addRequest(req('1'))).resolves.toMatchObject({
            wasAlreadyPresent: false,
            wasAlreadyHandled: false,
        });
        const again = await b.addRequest(req('1'));
        expect(again).toMatchObject({ wasAlreadyPresent: true, wasAlreadyHandled: false });
        const stored = await a.getRequest(again.requestId);
        await a.updateRequest({ ...(stored as object), handledAt: new Date().toISOString() } as never);
        await expect(b.addRequest(req('1'))).resolves.toMatchObject({
            wasAlreadyPresent: true,
            wasAlreadyHandled: true,
        });
        await expect(a.get()).resolves.toMatchObject({
            totalRequestCount: 1,
            handledRequestCount: 1,
            pendingRequestCount: 0,
        });
    });

    it('answers a batch with processed results, duplicates marked', async () => {
        await a.addRequest(req('1'));
        const { processedRequests, unprocessedRequests } = await b.batchAddRequests([req('1'), req('2'), req('3')]);
        expect(unprocessedRequests).toEqual([]);
        expect(processedRequests.map((p) => [p.uniqueKey.slice(-1), p.wasAlreadyPresent])).toEqual([
            ['1', true],
            ['2', false],
            ['3', false],
        ]);
        expect(processedRequests.every((p) => typeof p.requestId === 'string' && p.requestId.length > 0)).toBe(true);
        await expect(a.get()).resolves.toMatchObject({ totalRequestCount: 3, pendingRequestCount: 3 });
    });

    it('lists the head in order, forefront first, and locks what it lists for one client only', async () => {
        await a.batchAddRequests([req('1'), req('2'), req('3')]);
        await a.addRequest(req('f'), { forefront: true });
        const first = await a.listAndLockHead({ limit: 2, lockSecs: 60 });
        expect(urls(first.items)).toEqual(['f', '1']);
        const second = await b.listAndLockHead({ limit: 10, lockSecs: 60 });
        expect(urls(second.items)).toEqual(['2', '3']);
        const none = await b.listAndLockHead({ limit: 10, lockSecs: 60 });
        expect(none.items).toEqual([]);
        expect(none.queueHasLockedRequests ?? true).toBe(true);
    });

    it('gives a request back when its lock is deleted, where it was or at the front', async () => {
        await a.batchAddRequests([req('1'), req('2'), req('3')]);
        const [one] = (await a.listAndLockHead({ limit: 1, lockSecs: 60 })).items;
        await a.deleteRequestLock(one.id);
        expect(urls((await a.listAndLockHead({ limit: 10, lockSecs: 60 })).items)).toEqual(['1', '2', '3']);
        await a.deleteRequestLock(one.id, { forefront: true });
        expect(urls((await a.listAndLockHead({ limit: 10, lockSecs: 60 })).items)).toEqual(['1']);
    });

    it('hands an expired lock to the next client, and keeps a live one', async () => {
        await a.batchAddRequests([req('1'), req('2')]);
        await a.listAndLockHead({ limit: 1, lockSecs: 60 });
        await a.listAndLockHead({ limit: 1, lockSecs: 0 });
        // The second lock (0 s) has expired; the first holds.
        expect(urls((await b.listAndLockHead({ limit: 10, lockSecs: 60 })).items)).toEqual(['2']);
    });

    it('prolongs a lock and refuses to prolong a handled request', async () => {
        await a.addRequest(req('1'));
        const [one] = (await a.listAndLockHead({ limit: 1, lockSecs: 60 })).items;
        const before = Date.now();
        const { lockExpiresAt } = await a.prolongRequestLock(one.id, { lockSecs: 120 });
        expect(lockExpiresAt.getTime()).toBeGreaterThan(before + 60_000);
        await a.updateRequest({ ...(await a.getRequest(one.id)), handledAt: new Date().toISOString() } as never);
        await expect(a.prolongRequestLock(one.id, { lockSecs: 60 })).rejects.toThrow(/handled/);
        expect((await b.listAndLockHead({ limit: 10, lockSecs: 60 })).items).toEqual([]);
    });

    it('counts handled and pending through updates and deletes', async () => {
        await a.batchAddRequests([req('1'), req('2'), req('3', { handledAt: new Date().toISOString() })]);
        await expect(a.get()).resolves.toMatchObject({
            totalRequestCount: 3,
            handledRequestCount: 1,
            pendingRequestCount: 2,
        });
        const [one] = (await a.listAndLockHead({ limit: 1, lockSecs: 60 })).items;
        await a.deleteRequest(one.id);
        await expect(a.get()).resolves.toMatchObject({
            totalRequestCount: 2,
            handledRequestCount: 1,
            pendingRequestCount: 1,
        });
        expect(urls((await b.listHead({ limit: 10 })).items)).toEqual(['2']);
    });

    it("drives Crawlee's RequestQueue: two consumers share the work and finish together", async () => {
        const open = async () =>
            RequestQueue.open('crawl', {
                config: new Configuration({ storageClient: under.client(), purgeOnStart: false }),
            });
        const [q1, q2] = [await open(), await open()];
        await q1.addRequests(Array.from({ length: 30 }, (_, i) => req(String(i))));
        // Each consumer locks up to 25 at a time: q1 takes 25, q2 the other 5.
        const held = (await q1.fetchNextRequest())!;
        const seen = new Set([held.url]);
        for (const q of [q2, q1])
            for (let r = await q.fetchNextRequest(); r; r = await q.fetchNextRequest()) {
                expect(seen.has(r.url)).toBe(false);
                seen.add(r.url);
                await q.markRequestHandled(r);
            }
        expect(seen.size).toBe(30);
        // q1 still holds one request: q2 is not finished until it is handled.
        await expect(q2.isFinished()).resolves.toBe(false);
        await q1.reclaimRequest(held);
        const again = await q2.fetchNextRequest();
        expect(again?.url).toBe(held.url);
        await q2.markRequestHandled(again!);
        await expect(q2.isFinished()).resolves.toBe(true);
        await expect(q1.isFinished()).resolves.toBe(true);
        await expect(q1.client.get()).resolves.toMatchObject({ handledRequestCount: 30, pendingRequestCount: 0 });
    });
}

describe('request queue behaviours on memory-storage', () => behaviours(memoryStorage));

describeRedis('request queue behaviours on RedisStorageClient', () => {
    behaviours(() => redisStorage(uniquePrefix('rs-rq')));
});
