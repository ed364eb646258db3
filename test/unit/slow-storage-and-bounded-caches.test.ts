/**
 * Behaviours checked with a manual clock, each of which failed on the code before its fix.
 */
import type { Configuration, IRequestManager } from '@crawlee/core';

import type { ThrottlingRequestManagerOptions } from 'crawlee-throttling';
import { ManualClock, ThrottlingRequestManager } from 'crawlee-throttling';
import { assemble } from '../../packages/throttling/src/orchestration/assemble';
import { resolveThrottlingOptions } from '../../packages/throttling/src/config/resolve-options';
import { MAX_DECLARED_ORIGINS_PER_KEY } from '../../packages/throttling/src/dispatch/pacing-recorder';
import { DomainQueue } from '../../packages/throttling/src/core/domain-queue';
import { DomainRequestQueue } from '../../packages/throttling/src/queues/domain-request-queue';
import { MAX_CHECKED_ORIGINS_PER_KEY, OriginGate } from '../../packages/throttling/src/robots/origin-gate';
import { RobotsCrawlDelayCache } from '../../packages/throttling/src/robots/robots-crawl-delay';
import { memoryConfig } from '../helpers/storage';
import { nextReadyAt } from '../helpers/next-ready-at';

const T0 = 1_700_000_000_000;

/** Domain queues whose first `fetchNextRequest` takes `latencyMs` of the manual clock (slow storage). */
function slowFirstFetch(clock: ManualClock, latencyMs: number) {
    let slow = 1;
    return async (name: string, opts: { config?: Configuration }): Promise<IRequestManager> => {
        const queue = await DomainRequestQueue.open(name, opts);
        const original = queue.fetchNextRequest.bind(queue);
        queue.fetchNextRequest = async () => {
            const request = await original();
            if (slow-- > 0) clock.advance(latencyMs);
            return request;
        };
        return queue;
    };
}

function setup(clock: ManualClock, options: Partial<ThrottlingRequestManagerOptions>) {
    return new ThrottlingRequestManager({ domains: ['a.com'], clock, ...options }, memoryConfig());
}

describe('the dispatch window counts from when the request leaves, not from before a slow storage fetch', () => {
    // With two slots, nothing re-arms the interval at the response: the window armed before the fetch
    // was all that spaced the requests, so a first fetch 300 ms slower than the second let the two
    // leave 700 ms apart under a 1 s delay.
    test('concurrency 2, delay 1 s, first fetch takes 300 ms: the second request leaves 1 s after the first', async () => {
        const clock = new ManualClock(T0);
        const manager = setup(clock, {
            concurrency: 2,
            delaySecs: 1,
            requestManagerOpener: slowFirstFetch(clock, 300),
        });
        await manager.addRequest({ url: 'https://a.com/1' });
        await manager.addRequest({ url: 'https://a.com/2' });

        const first = await manager.fetchNextRequest();
        expect(first?.url).toBe('https://a.com/1');
        const firstLeftAt = clock.now();
        expect(firstLeftAt).toBe(T0 + 300);

        clock.set(T0 + 1000);
        expect(await manager.fetchNextRequest()).toBeNull();
        expect(await nextReadyAt(manager)).toBe(firstLeftAt + 1000);

        clock.set(firstLeftAt + 1000);
        const second = await manager.fetchNextRequest();
        expect(second?.url).toBe('https://a.com/2');
        expect(clock.now() - firstLeftAt).toBeGreaterThanOrEqual(1000);
    });

    test('a fast fetch changes nothing: the next window is the one armed at dispatch', async () => {
        const clock = new ManualClock(T0);
        const manager = setup(clock, { concurrency: 2, delaySecs: 1, requestManagerOpener: slowFirstFetch(clock, 0) });
        await manager.addRequest({ url: 'https://a.com/1' });
        await manager.addRequest({ url: 'https://a.com/2' });
        expect((await manager.fetchNextRequest())?.url).toBe('https://a.com/1');
        expect(await nextReadyAt(manager)).toBe(T0 + 1000);
        clock.set(T0 + 1000);
        expect((await manager.fetchNextRequest())?.url).toBe('https://a.com/2');
    });
});

describe('caches stay bounded over many origins', () => {
    const notFound = async () => ({ status: 404, headers: {}, body: '' });

    test('robots.txt cache: 5,000 origins keep at most maxEntries verdicts; a recently used one survives', async () => {
        let now = T0;
        const cache = new RobotsCrawlDelayCache({ fetcher: notFound, now: () => now, maxEntries: 1_000 });
        await cache.get('https://keep.example/');
        for (let i = 0; i < 5_000; i++) {
            await cache.get(`https://s${i}.example/`);
            // Used all along: never the least recently used.
            if (i % 500 === 0) await cache.get('https://keep.example/');
            now += 1;
        }
        expect(cache.peek('https://s0.example/')).toBeUndefined();
        expect(cache.peek('https://keep.example/')).toEqual({ kind: 'none', reason: 'missing' });
        expect(cache.peek('https://s4999.example/')).toEqual({ kind: 'none', reason: 'missing' });
        expect(cache.storedCount).toBeLessThanOrEqual(1_000);
    });

    test('robots.txt cache: expired verdicts go before unexpired ones', async () => {
        let now = T0;
        const cache = new RobotsCrawlDelayCache({ fetcher: notFound, now: () => now, ttlMs: 1_000, maxEntries: 3 });
        await cache.get('https://old1.example/');
        await cache.get('https://old2.example/');
        now += 600;
        await cache.get('https://fresh.example/');
        now += 500; // old1 and old2 expired, fresh not
        await cache.get('https://new.example/');
        expect(cache.peek('https://fresh.example/')).toBeDefined();
        expect(cache.storedCount).toBe(2);
    });

    test('robots.txt cache: maxEntries must be a positive integer', () => {
        expect(() => new RobotsCrawlDelayCache({ maxEntries: 0 })).toThrow(
            'maxEntries must be a positive integer, got 0',
        );
    });

    test('origin checks: a key spanning 5,000 subdomains remembers at most MAX_CHECKED_ORIGINS_PER_KEY of them', async () => {
        let now = T0;
        const gate = new OriginGate({
            now: () => now,
            readyAt: () => 0,
            openProbe: (e) => ({ entry: e }),
            finishProbe: () => undefined,
            released: () => undefined,
            warn: () => undefined,
        });
        gate.set(async () => undefined, { recheckAfterMs: 24 * 3600_000 });
        const entry = new DomainQueue('example.com', 'throttled-example.com');
        for (let i = 0; i < 5_000; i++) {
            gate.checkIfDue(entry, `https://s${i}.example.com/`);
            await Promise.resolve();
            now += 1;
        }
        await new Promise((resolve) => setImmediate(resolve));
        expect(gate.books.peek(entry)?.gatesPending).toBe(0);
        expect(gate.books.peek(entry)?.checkedOrigins?.size ?? 0).toBeLessThanOrEqual(1_000);
        expect(MAX_CHECKED_ORIGINS_PER_KEY).toBe(1_000);
        // The newest are remembered (not due), the oldest forgotten (due once more).
        expect(gate.isDue(entry, 'https://s4999.example.com/', now)).toBe(false);
        expect(gate.isDue(entry, 'https://s0.example.com/', now)).toBe(true);
    });

    test('declared crawl delays: 1,000 subdomains keep at most MAX_DECLARED_ORIGINS_PER_KEY, and the largest delay', () => {
        const options = resolveThrottlingOptions({ domains: ['example.com'], throttleBy: 'registrableDomain' });
        const quiet = {
            info: () => undefined,
            warning: () => undefined,
            warningOnce: () => undefined,
            error: () => undefined,
        };
        const { recorder, states } = assemble(options, undefined, quiet);
        for (let i = 1; i <= 1_000; i++) {
            // The largest delay is declared first, so it must outlive every eviction.
            const intervalMs = i === 1 ? 5_000 : i;
            recorder.record({ reason: 'minInterval', url: `https://s${i}.example.com/`, intervalMs });
        }
        expect(states.read('example.com')?.crawlDelayMs).toBe(5_000);
        // An origin that declares nothing is not remembered; one re-read without a delay is forgotten.
        recorder.record({ reason: 'minInterval', url: 'https://s1.example.com/', intervalMs: 0 });
        expect(states.read('example.com')?.crawlDelayMs).toBe(1_000);
        // Private on the old code too: how many origins the recorder holds.
        const held = (recorder as unknown as { declaredCrawlDelays: Map<string, Map<string, number>> })
            .declaredCrawlDelays;
        expect(held.get('example.com')?.size ?? 0).toBeLessThanOrEqual(64);
        expect(recorder.declaredOriginCount).toBeLessThanOrEqual(MAX_DECLARED_ORIGINS_PER_KEY);
        for (let i = 1; i <= 1_000; i++) {
            recorder.record({ reason: 'minInterval', url: `https://s${i}.example.com/`, intervalMs: 0 });
        }
        expect(recorder.declaredOriginCount).toBe(0);
        expect(states.read('example.com')?.crawlDelayMs).toBe(0);
    });
});
