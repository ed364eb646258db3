/**
 * The rate adaptive pacing learned is kept per scope in a named key-value store
 * that survives `purgeOnStart`, and the next crawl of that scope starts from it. Time is a
 * ManualClock; the site is a simulated token bucket answering 429 with Retry-After.
 */
import type { Request } from '@crawlee/core';
import { Configuration, KeyValueStore } from '@crawlee/core';
import { MemoryStorage } from '@crawlee/memory-storage';

import { ManualClock, RequestThrottledError, ThrottlingRequestManager } from 'crawlee-throttling';
import type { ThrottlingRequestManagerOptions } from 'crawlee-throttling';
import {
    LEARNED_RATES_KEY,
    mergeLearnedRates,
    parseLearnedRates,
} from '../../packages/throttling/src/persistence/learned-rate-record';
import { nextReadyAt } from '../helpers/next-ready-at';

const STORE = 'crawlee-throttling-learned-rates';
const DAY_MS = 24 * 3600 * 1000;

/** One storage, purged of its default stores on every start, as a crawler's `run()` would be. */
function purgingConfig(): Configuration {
    return new Configuration({
        persistStorage: false,
        purgeOnStart: true,
        storageClient: new MemoryStorage({ persistStorage: false, writeMetadata: false }),
    });
}

/**
 * Crawls `pages` pages of a simulated site (`rate` requests per second, bucket of `burst`, 429 with
 * Retry-After) and ends the crawl as a crawler would (`isFinished()`, which saves).
 */
async function crawl(
    config: Configuration,
    clock: ManualClock,
    options: Partial<ThrottlingRequestManagerOptions> = {},
    site: { rate: number; burst: number; pages: number; host?: string } = { rate: 4, burst: 1, pages: 30 },
) {
    const host = site.host ?? 'site.example';
    const manager = new ThrottlingRequestManager(
        {
            domains: 'all',
            queueLayout: 'perDomain',
            clock,
            respectCrawlDelay: false,
            rampup: true,
            baseDelaySecs: 1,
            ...options,
        },
        config,
    );
    await manager.addRequestsBatched(
        Array.from({ length: site.pages }, (_, i) => `https://${host}/${i}`),
        { waitForAllRequestsToBeAdded: true },
    );
    let tokens = site.burst;
    let last = clock.now();
    let refused = 0;
    let done = 0;
    const sentAt: number[] = [];
    for (let guard = 0; guard < 100_000 && done < site.pages; guard++) {
        const request = await manager.fetchNextRequest();
        if (!request) {
            clock.set(Math.max((await nextReadyAt(manager)) ?? clock.now() + 1, clock.now()));
            continue;
        }
        const now = clock.now();
        sentAt.push(now);
        tokens = Math.min(site.burst, tokens + ((now - last) * site.rate) / 1000);
        last = now;
        clock.advance(5); // latency
        if (tokens >= 1) {
            tokens -= 1;
            done++;
            await manager.handleResponse({ request }, { statusCode: 200, headers: {} });
            await manager.markRequestHandled(request as Request);
        } else {
            refused++;
            const wait = Math.max(1, Math.ceil((1 - tokens) / site.rate));
            const error = await manager
                .handleResponse({ request }, { statusCode: 429, headers: { 'retry-after': String(wait) } })
                .catch((e) => e);
            expect(error).toBeInstanceOf(RequestThrottledError);
            await manager.reclaimRequest(request as Request);
        }
    }
    expect(await manager.isFinished()).toBe(true);
    const gaps = sentAt.slice(1).map((t, i) => t - sentAt[i]);
    const learned = manager.stats().find((s) => s.domain === host)?.learnedRate;
    return { manager, done, refused, gaps, learned };
}

async function storedRates(config: Configuration, name = STORE) {
    const store = await KeyValueStore.open(name, { config });
    return parseLearnedRates(await store.getValue(LEARNED_RATES_KEY));
}

describe('the learned-rates record', () => {
    test('read defensively: another version, or a malformed entry, is dropped without a throw', () => {
        expect(parseLearnedRates(undefined).size).toBe(0);
        expect(parseLearnedRates({ version: 2, rates: { 'a.example': { rate: 1, learnedAt: 1 } } }).size).toBe(0);
        const parsed = parseLearnedRates(
            JSON.parse(
                JSON.stringify({
                    version: 1,
                    rates: {
                        'a.example': { rate: 4, unsafeRate: 5, learnedAt: 10 },
                        'b.example': { rate: -1, learnedAt: 10 },
                        'c.example': { rate: 4, learnedAt: 'yesterday' },
                        'd.example': { rate: 4, unsafeRate: Infinity, learnedAt: 10 },
                        'e.example': [1, 2],
                    },
                }),
            ).valueOf(),
        );
        expect([...parsed]).toEqual([['a.example', { rate: 4, unsafeRate: 5, learnedAt: 10 }]]);
        const hostile = parseLearnedRates(JSON.parse('{"version":1,"rates":{"__proto__":{"rate":2,"learnedAt":1}}}'));
        expect(hostile.get('__proto__')).toEqual({ rate: 2, learnedAt: 1 });
        expect(({} as Record<string, unknown>).rate).toBeUndefined();
    });

    test('merged: ours over what is stored when newer, too old dropped, the most recent kept within the cap', () => {
        const stored = new Map([
            ['a.example', { rate: 1, learnedAt: 100 }],
            ['b.example', { rate: 2, learnedAt: 900 }],
            ['old.example', { rate: 3, learnedAt: 0 }],
        ]);
        const ours = new Map([
            ['a.example', { rate: 5, learnedAt: 1000 }],
            ['b.example', { rate: 7, learnedAt: 800 }],
        ]);
        expect(mergeLearnedRates(stored, ours, 1000, 950).rates).toEqual({
            'a.example': { rate: 5, learnedAt: 1000 },
            'b.example': { rate: 2, learnedAt: 900 },
        });
        expect(Object.keys(mergeLearnedRates(stored, ours, 1000, 10_000, 1).rates)).toEqual(['a.example']);
    });
});

describe('starting from what the last run learned', () => {
    test('the second crawl starts at the learned rate: paced from its first request, fewer refusals', async () => {
        const config = purgingConfig();
        const clock = new ManualClock(Date.UTC(2026, 0, 1));
        const first = await crawl(config, clock);
        expect(first.done).toBe(30);
        expect(first.learned).toBeGreaterThan(2);
        // The first crawl starts unpaced: its first requests go back to back, and the site refuses.
        expect(first.gaps[0]).toBeLessThan(50);
        expect(first.refused).toBeGreaterThanOrEqual(2);
        const stored = (await storedRates(config)).get('site.example')!;
        expect(stored).toMatchObject({ learnedAt: clock.now() });
        expect(stored.rate).toBeCloseTo(first.learned!, 6);

        clock.advance(3600_000);
        const second = await crawl(config, clock);
        expect(second.done).toBe(30);
        // The first window (1 s) is sent at the learned rate; a quiet one may raise the pace after it.
        expect(Math.min(...second.gaps.slice(0, 4))).toBeGreaterThanOrEqual(1000 / (stored.rate * 1.05));
        // Measured: 4 refusals, then 0 (and 13.5 s of simulated time, then 10.1 s).
        expect(second.refused).toBeLessThan(first.refused);
        expect(second.refused).toBeLessThanOrEqual(1);
        // Crawled again at that rate: the entry is confirmed (learnedAt moves on).
        expect((await storedRates(config)).get('site.example')!.learnedAt).toBe(clock.now());
    });

    test('rememberLearnedRates: false probes from scratch every time, and writes nothing', async () => {
        const config = purgingConfig();
        const clock = new ManualClock(Date.UTC(2026, 0, 1));
        const first = await crawl(config, clock, { rememberLearnedRates: false });
        const second = await crawl(config, clock, { rememberLearnedRates: false });
        expect(second.refused).toBe(first.refused);
        expect(second.gaps[0]).toBeLessThan(50);
        expect((await storedRates(config)).size).toBe(0);
    });

    test('a rate older than maxAgeSecs is ignored', async () => {
        const config = purgingConfig();
        const clock = new ManualClock(Date.UTC(2026, 0, 1));
        const options = { rememberLearnedRates: { maxAgeSecs: 24 * 3600 } };
        await crawl(config, clock, options);
        clock.advance(DAY_MS - 1);
        const young = await crawl(config, clock, options, { rate: 4, burst: 1, pages: 2 });
        expect(young.gaps[0]).toBeGreaterThan(200); // paced from the learned rate
        clock.advance(DAY_MS + 1);
        const old = await crawl(config, clock, options, { rate: 4, burst: 1, pages: 2 });
        expect(old.gaps[0]).toBeLessThan(50); // unpaced again: probing from scratch
    });

    test('a save drops the entries that aged out, and keeps the others', async () => {
        const config = purgingConfig();
        const clock = new ManualClock(Date.UTC(2026, 0, 1));
        const options = { rememberLearnedRates: { maxAgeSecs: 24 * 3600 } };
        await crawl(config, clock, options, { rate: 4, burst: 1, pages: 10, host: 'old.example' });
        clock.advance(DAY_MS / 2);
        await crawl(config, clock, options, { rate: 4, burst: 1, pages: 10, host: 'recent.example' });
        clock.advance(DAY_MS / 2 + 1);
        expect([...(await storedRates(config)).keys()].sort()).toEqual(['old.example', 'recent.example']);
        await crawl(config, clock, options, { rate: 4, burst: 1, pages: 10, host: 'new.example' });
        expect([...(await storedRates(config)).keys()].sort()).toEqual(['new.example', 'recent.example']);
    });

    test('a named store of your own; the default store is left alone', async () => {
        const config = purgingConfig();
        const clock = new ManualClock(Date.UTC(2026, 0, 1));
        await crawl(config, clock, { rememberLearnedRates: { storeName: 'my-rates' } });
        expect((await storedRates(config, 'my-rates')).get('site.example')).toBeDefined();
        expect((await storedRates(config)).size).toBe(0);
    });

    test('a resumed crawl keeps its own saved pacing; a new crawl starts from the learned rate', async () => {
        const config = purgingConfig();
        const clock = new ManualClock(Date.UTC(2026, 0, 1));
        const first = await crawl(config, clock);
        const own = first.manager.snapshot().find((s) => s.domain === 'site.example')!.rampup!;
        // A learned rate unlike the crawl's own, to tell them apart.
        const store = await KeyValueStore.open(STORE, { config });
        await store.setValue(LEARNED_RATES_KEY, {
            version: 1,
            rates: { 'site.example': { rate: 0.5, learnedAt: clock.now() } },
        });
        const open = async (purgeOnStart: boolean) => {
            const reuse = new Configuration({
                persistStorage: false,
                purgeOnStart,
                storageClient: config.getStorageClient(),
            });
            const manager = new ThrottlingRequestManager(
                { domains: 'all', queueLayout: 'perDomain', clock, respectCrawlDelay: false, rampup: true },
                reuse,
            );
            await manager.addRequest({ url: 'https://site.example/more' });
            return manager.snapshot().find((s) => s.domain === 'site.example')!;
        };
        const resumed = await open(false);
        expect(resumed.rampup).toEqual(own);
        const fresh = await open(true);
        expect(fresh).toMatchObject({ dispatched: 0, intervalMs: 2000, intervalReason: 'rampup' });
    });

    test('without adaptive pacing the store is never opened', async () => {
        const config = purgingConfig();
        const open = jest.spyOn(KeyValueStore, 'open');
        try {
            const clock = new ManualClock(Date.UTC(2026, 0, 1));
            await crawl(config, clock, { rampup: false }, { rate: 100, burst: 10, pages: 3 });
            expect(open.mock.calls.filter(([name]) => name === STORE)).toHaveLength(0);
        } finally {
            open.mockRestore();
        }
    });

    test('options are validated with messages naming them', () => {
        const make = (rememberLearnedRates: unknown) =>
            new ThrottlingRequestManager({
                domains: 'all',
                queueLayout: 'perDomain',
                rememberLearnedRates,
            } as ThrottlingRequestManagerOptions);
        expect(() => make('yes')).toThrow(
            '`rememberLearnedRates`: rememberLearnedRates must be true/false or an object with storeName, maxAgeSecs',
        );
        expect(() => make({ storeName: 'my rates' })).toThrow(
            /rememberLearnedRates.storeName must be 1-63 letters, digits or hyphens/,
        );
        expect(() => make({ maxAgeSecs: 0 })).toThrow(/rememberLearnedRates.maxAgeSecs must be > 0/);
        expect(() => make({ maxAge: 5 })).toThrow('unknown option(s) `maxAge` in `rememberLearnedRates`');
        expect(make(undefined).options.learnedRates).toEqual({ storeName: STORE, maxAgeMs: 7 * DAY_MS });
        expect(make(false).options.learnedRates).toBeUndefined();
    });
});
