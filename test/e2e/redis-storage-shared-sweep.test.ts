import { setTimeout as sleep } from 'node:timers/promises';
import { Configuration } from '@crawlee/core';
import { ManualClock, ThrottlingRequestManager } from 'crawlee-throttling';
import { RedisStorageClient } from 'crawlee-throttling/redis';

import {
    SHARED_ADOPT_MS,
    SHARED_ADOPT_MS_PER_QUEUE,
    SHARED_SWEEP_MS,
} from '../../packages/throttling/src/readiness/readiness-probe';
import { REDIS_URL, describeRedis, uniquePrefix } from '../helpers/redis';

/**
 * Two managers on one Redis frontier, as two crawler processes are, each with a queue per domain: A adds links to a domain whose
 * queue B also knows, while B is busy with a request of another domain. B must take A's links on
 * its next idle polls, not only once it has nothing in flight.
 */
describeRedis('a busy process takes the work others add to its domains (shared storage)', () => {
    let prefix: string;
    const storages: RedisStorageClient[] = [];
    const clock = new ManualClock(1_000_000);

    beforeEach(() => (prefix = uniquePrefix('shared-sweep').replace(/:+$/, '')));
    afterEach(async () => {
        await storages[0]?.dropAll();
        await Promise.all(storages.splice(0).map((s) => s.teardown()));
    });

    const manager = () => {
        const storageClient = new RedisStorageClient({ url: REDIS_URL, prefix });
        storages.push(storageClient);
        const config = new Configuration({ storageClient, purgeOnStart: false, persistStorage: false });
        return new ThrottlingRequestManager(
            // Domain queues, which both processes open and add to (the shared layout keeps one queue).
            { domains: 'all', queueLayout: 'perDomain', delaySecs: 0, rampup: false, respectCrawlDelay: false, clock },
            config,
        );
    };

    const finishes = async (m: ThrottlingRequestManager) => {
        for (let i = 0; i < 30; i++) {
            if (await m.isFinished()) return true;
            await sleep(100);
        }
        return false;
    };

    it('finds the other process’s additions while its own request is in flight', async () => {
        const a = manager();
        const b = manager();
        await a.addRequest({ url: 'http://x.test/0' });
        // B knows x.test's queue (its add was a duplicate) and is busy with y.test.
        expect((await b.addRequest({ url: 'http://x.test/0' })).wasAlreadyPresent).toBe(true);
        await b.addRequest({ url: 'http://y.test/0' });
        const first = await a.fetchNextRequest();
        expect(first?.url).toBe('http://x.test/0');
        const busy = await b.fetchNextRequest();
        expect(busy?.url).toBe('http://y.test/0');

        // A discovers two more pages of x.test while it handles x.test/0.
        await a.addRequestsBatched([{ url: 'http://x.test/1' }, { url: 'http://x.test/2' }]);
        clock.advance(SHARED_SWEEP_MS);

        expect(await b.isEmpty()).toBe(false);
        const taken = await b.fetchNextRequest();
        expect(taken?.url).toMatch(/^http:\/\/x\.test\/[12]$/);
        // Nothing is lost or handed out twice: between them they take the other page once
        // (x.test takes one request at a time in each process).
        await a.markRequestHandled(first!);
        await b.markRequestHandled(taken!);
        const byA = await a.fetchNextRequest();
        const other = byA ?? (await b.fetchNextRequest());
        expect(other?.url).toMatch(/^http:\/\/x\.test\/[12]$/);
        expect(other?.url).not.toBe(taken?.url);
        expect(await a.fetchNextRequest()).toBeNull();
        expect(await b.fetchNextRequest()).toBeNull();
        await b.markRequestHandled(busy!);
        await (byA ? a : b).markRequestHandled(other!);
        // Each process sees the end, once its idle-poll backoff (at most 500 ms) asks Redis again.
        expect(await finishes(a)).toBe(true);
        expect(await finishes(b)).toBe(true);
    });

    it('asks the quiet queues at most once per sweep interval', async () => {
        const a = manager();
        const b = manager();
        await a.addRequest({ url: 'http://x.test/0' });
        await b.addRequest({ url: 'http://x.test/0' });
        await b.addRequest({ url: 'http://y.test/0' });
        const first = await a.fetchNextRequest();
        const busy = await b.fetchNextRequest();
        clock.advance(SHARED_SWEEP_MS);
        // B's sweep finds x.test empty for it (A holds x.test/0); A then adds within the interval.
        expect(await b.isEmpty()).toBe(true);
        await a.addRequest({ url: 'http://x.test/1' });
        clock.advance(SHARED_SWEEP_MS - 1);
        expect(await b.isEmpty()).toBe(true);
        clock.advance(1);
        expect(await b.isEmpty()).toBe(false);
        await a.markRequestHandled(first!);
        await b.markRequestHandled(busy!);
    });

    const knows = (m: ThrottlingRequestManager, domain: string) => m.snapshot().some((d) => d.domain === domain);

    /** Two processes' managers; B has a request of y.test in flight, so it is busy, not finished. */
    const busyPair = async () => {
        const a = manager();
        const b = manager();
        await b.addRequest({ url: 'http://y.test/0' });
        return { a, b, busy: await b.fetchNextRequest() };
    };

    it('takes a domain only another process met, while its own request is in flight', async () => {
        const { a, b, busy } = await busyPair();
        // A meets z.test, which B never did: its queue is on the storage, unannounced.
        await a.addRequest({ url: 'http://z.test/0' });
        clock.advance(SHARED_ADOPT_MS);
        expect(await b.isEmpty()).toBe(false);
        expect((await b.fetchNextRequest())?.url).toBe('http://z.test/0');
        await b.markRequestHandled(busy!);
    });

    it('leaves alone the empty queues of domains it does not know', async () => {
        const { a, b, busy } = await busyPair();
        await a.addRequest({ url: 'http://done.test/0' });
        await a.markRequestHandled((await a.fetchNextRequest())!);
        clock.advance(SHARED_ADOPT_MS);
        expect(await b.isEmpty()).toBe(true);
        expect(knows(b, 'done.test')).toBe(false);
        await b.markRequestHandled(busy!);
    });

    it('lists the storage less often the more queues it holds', async () => {
        const { a, b, busy } = await busyPair();
        // 80 domains A crawled to the end: their queues stay on the storage, empty.
        for (let i = 0; i < 80; i++) {
            await a.addRequest({ url: `http://d${i}.test/0` });
            await a.markRequestHandled((await a.fetchNextRequest())!);
        }
        clock.advance(SHARED_ADOPT_MS);
        expect(await b.isEmpty()).toBe(true);
        // Over 80 queues listed: the next look waits their per-queue share, well past a second.
        await a.addRequest({ url: 'http://late.test/0' });
        clock.advance(SHARED_ADOPT_MS);
        await b.isEmpty();
        expect(knows(b, 'late.test')).toBe(false);
        // Room for the default queue and y.test's besides the 80 (and late.test's, not yet listed then).
        clock.advance(90 * SHARED_ADOPT_MS_PER_QUEUE - SHARED_ADOPT_MS);
        await b.isEmpty();
        expect(knows(b, 'late.test')).toBe(true);
        await b.markRequestHandled(busy!);
    });
});
