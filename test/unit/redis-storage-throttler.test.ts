import { Configuration } from '@crawlee/core';

import { ManualClock, ThrottlingRequestManager } from 'crawlee-throttling';
import { describeRedis, uniquePrefix } from '../helpers/redis';
import { redisStorage } from '../helpers/redis-storage';

// Two throttlers on one RedisStorageClient prefix stand for two machines sharing one frontier.
describeRedis('the throttler on a shared frontier (RedisStorageClient)', () => {
    const under = redisStorage(uniquePrefix('rs-throttler'));
    afterAll(() => under.close());

    const machine = () =>
        new ThrottlingRequestManager(
            { domains: 'all', respectCrawlDelay: false, clock: new ManualClock(1_000_000) },
            new Configuration({ storageClient: under.client(), purgeOnStart: false }),
        );

    it('serves a domain queue another machine opened after it started, and ends only once it is done', async () => {
        const [a, b] = [machine(), machine()];
        // b starts first: nothing is stored yet, so its own view is empty.
        await expect(b.isFinished()).resolves.toBe(true);
        await a.addRequest({ url: 'http://late.test/1' });
        // b finds late.test's queue on the shared storage before calling the crawl finished.
        await expect(b.isFinished()).resolves.toBe(false);
        const request = await b.fetchNextRequest();
        expect(request?.url).toBe('http://late.test/1');
        // While b holds it, a (which has nothing locally in flight) is not finished either.
        await expect(a.isFinished()).resolves.toBe(false);
        await b.markRequestHandled(request!);
        await expect(b.isFinished()).resolves.toBe(true);
        // a still counts the request it added; asking its queue finds it handled elsewhere.
        await expect(a.fetchNextRequest()).resolves.toBeNull();
        await expect(a.isFinished()).resolves.toBe(true);
    });
});

describeRedis('the throttler on a shared frontier: requests one fetch locked', () => {
    const under = redisStorage(uniquePrefix('rs-held'));
    afterAll(() => under.close());

    const machine = () =>
        new ThrottlingRequestManager(
            {
                domains: 'all',
                respectCrawlDelay: false,
                rampup: false,
                concurrency: 4,
                clock: new ManualClock(1_000_000),
            },
            new Configuration({ storageClient: under.client(), purgeOnStart: false }),
        );

    it("sends the other machine's requests its fetch locked, without waiting to run dry", async () => {
        const [a, b] = [machine(), machine()];
        await a.addRequest({ url: 'http://held.test/a' });
        await b.addRequest({ url: 'http://held.test/b1' });
        await b.addRequest({ url: 'http://held.test/b2' });
        // a counts one request, but its fetch locks the head of held.test (Crawlee asks for 25),
        // b's additions with it: a sends what it holds while its first request is still in flight.
        const first = await a.fetchNextRequest();
        const second = await a.fetchNextRequest();
        expect(first).not.toBeNull();
        expect(second).not.toBeNull();
        // Each request goes out once, whoever sends it.
        const third = (await b.fetchNextRequest()) ?? (await a.fetchNextRequest());
        const urls = [first, second, third].map((r) => r?.url).sort();
        expect(urls).toEqual(['http://held.test/a', 'http://held.test/b1', 'http://held.test/b2']);
    });
});
