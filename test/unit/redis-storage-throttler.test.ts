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
