import type { IRequestManager, Request } from '@crawlee/core';
import { RequestQueue } from '@crawlee/core';

import {
    ManualClock,
    PersistentRateLimitError,
    ThrottledDomainLimitError,
    ThrottlingOptionsError,
    ThrottlingRequestManager,
} from 'crawlee-throttling';
import type { ThrottlingRequestManagerOptions } from 'crawlee-throttling';
import { DomainRequestQueue } from '../../packages/throttling/src/queues/domain-request-queue';
import { memoryConfig } from '../helpers/storage';
import { nextReadyAt } from '../helpers/next-ready-at';

function setup(options: Partial<ThrottlingRequestManagerOptions> = {}) {
    const clock = new ManualClock();
    const config = memoryConfig();
    // Issue-2 semantics (two clocks, no concurrency cap) unless a test asks for a cap.
    const manager = new ThrottlingRequestManager(
        { domains: ['a.com', 'b.com'], clock, concurrency: 100, ...options },
        config,
    );
    return { clock, config, manager };
}

async function fetchAll(manager: IRequestManager, max = 1000): Promise<Request[]> {
    const out: Request[] = [];
    for (let i = 0; i < max; i++) {
        const r = await manager.fetchNextRequest();
        if (!r) break;
        out.push(r);
    }
    return out;
}

const hostOf = (r: Request) => new URL(r.url).hostname;

describe('ThrottlingRequestManager: routing', () => {
    test('requests of listed domains go to throttled-<domain> queues, others to inner', async () => {
        const inner = await RequestQueue.open('inner-routing', { config: memoryConfig() });
        const opened: string[] = [];
        const config = memoryConfig();
        const manager = new ThrottlingRequestManager(
            {
                domains: ['A.com.'],
                inner,
                clock: new ManualClock(),
                requestManagerOpener: async (name, opts) => {
                    opened.push(name);
                    return RequestQueue.open(name, opts);
                },
            },
            config,
        );
        await manager.addRequest({ url: 'https://a.com/1' });
        await manager.addRequest({ url: 'https://other.org/1' });
        expect(opened).toEqual(['throttled-a.com']);
        expect(inner.getTotalCount()).toBe(1);
        expect(manager.getTotalCount()).toBe(2);
    });

    test('the manager does not look like the default queue (a second run() would drop it)', () => {
        const { manager } = setup();
        expect((manager as unknown as { name?: string }).name).not.toBe('default');
    });

    test('internalTimeoutMillis and requestLockSecs are forwarded to every queue, also later ones', async () => {
        // The manager's own instance of each domain queue, as it opens them (opening by name would give another).
        const opened = new Map<string, RequestQueue>();
        const { manager } = setup({
            requestManagerOpener: async (name, opts) => {
                const queue = await DomainRequestQueue.open(name, opts);
                opened.set(name, queue);
                return queue;
            },
        });
        manager.internalTimeoutMillis = 12_345;
        manager.requestLockSecs = 99;
        await manager.addRequest({ url: 'https://a.com/1' });
        await manager.addRequest({ url: 'https://x.org/1' });
        const inner = manager.innerManager as RequestQueue;
        expect(inner.internalTimeoutMillis).toBe(12_345);
        expect(inner.requestLockSecs).toBe(99);
        const r = await manager.fetchNextRequest();
        expect(r).not.toBeNull();
        const queue = opened.get('throttled-a.com')!;
        expect(queue.name).toBe('throttled-a.com');
        expect(queue.requestLockSecs).toBe(99);
        expect(queue.internalTimeoutMillis).toBe(12_345);
    });

    test('throttleBy registrableDomain: subdomains share one clock; IPs and localhost stay per host', async () => {
        const { manager, clock } = setup({
            domains: 'all',
            queueLayout: 'perDomain',
            throttleBy: 'registrableDomain',
            minCrawlDelaySecs: 1,
        });
        await manager.addRequestsBatched(
            ['https://a.example.com/1', 'https://b.example.com/1', 'http://127.0.0.1:8080/1', 'http://localhost:9/1'],
            { waitForAllRequestsToBeAdded: true },
        );
        const first = await fetchAll(manager);
        expect(first.map(hostOf).sort()).toEqual(['127.0.0.1', 'a.example.com', 'localhost']);
        clock.advance(1_000);
        expect((await fetchAll(manager)).map(hostOf)).toEqual(['b.example.com']);
        expect(
            manager
                .snapshot()
                .map((s) => s.domain)
                .sort(),
        ).toEqual(['127.0.0.1', 'example.com', 'localhost']);
    });

    test('configuration and URLs share one normaliser: case, trailing dot, punycode, IPv6, ports', async () => {
        const { manager } = setup({ domains: ['Bücher.Example.', '[::1]'], minCrawlDelaySecs: 5 });
        await manager.addRequest({ url: 'http://xn--bcher-kva.example:8080/a' });
        await manager.addRequest({ url: 'http://XN--BCHER-KVA.EXAMPLE./b' });
        await manager.addRequest({ url: 'http://[::1]:3000/c' });
        const got = await fetchAll(manager);
        // One of each domain: the second bücher request waits for the crawl delay of the same key.
        expect(got).toHaveLength(2);
        expect(
            manager
                .snapshot()
                .map((s) => s.domain)
                .sort(),
        ).toEqual(['::1', 'xn--bcher-kva.example']);
    });

    test('wildcards are rejected with a pointer to registrableDomain', () => {
        expect(() => setup({ domains: ['*.example.com'] })).toThrow(/registrableDomain/);
    });
});

describe('ThrottlingRequestManager: options validation', () => {
    test('an unknown option is named', () => {
        expect(
            () => new ThrottlingRequestManager({ domains: 'all', queueLayout: 'perDomain', baseDelay: 3 } as never),
        ).toThrow(/unknown option\(s\) `baseDelay`/);
    });

    test('a wrong value names the option and what is allowed', () => {
        expect(
            () => new ThrottlingRequestManager({ domains: 'all', queueLayout: 'perDomain', maxDelaySecs: -1 }),
        ).toThrow(ThrottlingOptionsError);
        expect(
            () => new ThrottlingRequestManager({ domains: 'all', queueLayout: 'perDomain', maxDelaySecs: -1 }),
        ).toThrow(/`maxDelaySecs`: maxDelaySecs must be >= 0/);
        expect(
            () =>
                new ThrottlingRequestManager({ domains: 'all', queueLayout: 'perDomain', throttleBy: 'host' as never }),
        ).toThrow(/throttleBy must be 'hostname', 'registrableDomain' or 'ip'/);
        expect(() => new ThrottlingRequestManager({} as never)).toThrow(/domains is required/);
        expect(
            () => new ThrottlingRequestManager({ domains: 'all', queueLayout: 'perDomain', maxThrottledDomains: 0 }),
        ).toThrow(/maxThrottledDomains must be >= 1/);
        expect(
            () => new ThrottlingRequestManager({ domains: 'all', queueLayout: 'perDomain', baseDelaySecs: 90 }),
        ).toThrow(/baseDelaySecs.*must not exceed.*maxDelaySecs/);
    });

    test('defaults follow Crawlee v4', () => {
        const { options } = new ThrottlingRequestManager({ domains: 'all', queueLayout: 'perDomain' });
        expect(options).toMatchObject({
            throttleBy: 'hostname',
            baseDelayMs: 2_000,
            maxDelayMs: 60_000,
            minCrawlDelayMs: 0,
            maxDomainStallMs: 900_000,
            maxThrottledDomains: 100,
            persistStateKey: 'CRAWLEE_THROTTLED_DOMAINS',
        });
    });
});

describe('ThrottlingRequestManager: pacing', () => {
    test('a minInterval signal spaces dispatches to that domain; isEmpty is true while only held-back work remains', async () => {
        const { manager, clock } = setup();
        await manager.addRequestsBatched(['https://a.com/1', 'https://a.com/2'], { waitForAllRequestsToBeAdded: true });
        expect(manager.recordPacingSignal({ reason: 'minInterval', url: 'https://a.com/', intervalMs: 500 })).toBe(
            true,
        );
        const first = (await manager.fetchNextRequest())!;
        expect(first).not.toBeNull();
        await manager.markRequestHandled(first);
        expect(await manager.fetchNextRequest()).toBeNull();
        expect(await manager.isEmpty()).toBe(true);
        expect(await manager.isFinished()).toBe(false);
        clock.advance(499);
        expect(await manager.fetchNextRequest()).toBeNull();
        clock.advance(1);
        expect(await manager.isEmpty()).toBe(false);
        expect((await manager.fetchNextRequest())?.url).toBe('https://a.com/2');
    });

    test('a rateLimited signal holds the domain until its backoff deadline; other domains keep going', async () => {
        const { manager, clock } = setup();
        await manager.addRequestsBatched(['https://a.com/1', 'https://a.com/2', 'https://b.com/1'], {
            waitForAllRequestsToBeAdded: true,
        });
        const first = (await manager.fetchNextRequest())!;
        manager.recordPacingSignal({ reason: 'rateLimited', url: first.url, waitMs: 3_000 });
        await manager.reclaimRequest(first);
        const next = await fetchAll(manager);
        expect(next.map(hostOf)).toEqual(['b.com']);
        clock.advance(2_999);
        expect(await manager.fetchNextRequest()).toBeNull();
        clock.advance(1);
        expect(hostOf((await manager.fetchNextRequest())!)).toBe('a.com');
    });

    test('recordPacingSignal reports whether the domain is paced', () => {
        const { manager } = setup();
        expect(manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://unlisted.org/x' })).toBe(false);
        expect(manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://a.com/x' })).toBe(true);
    });

    test('minIntervalEverywhere raises the floor for every domain and never lowers it', async () => {
        const { manager } = setup();
        manager.recordPacingSignal({ reason: 'minIntervalEverywhere', intervalMs: 700 });
        manager.recordPacingSignal({ reason: 'minIntervalEverywhere', intervalMs: 100 });
        expect(manager.floorIntervalMs).toBe(700);
        expect(manager.snapshot().every((s) => s.intervalMs === 700)).toBe(true);
    });

    test('minCrawlDelaySecs is a floor under each domain', async () => {
        const { manager, clock } = setup({ minCrawlDelaySecs: 0.25 });
        await manager.addRequestsBatched(['https://a.com/1', 'https://a.com/2'], { waitForAllRequestsToBeAdded: true });
        expect(await fetchAll(manager)).toHaveLength(1);
        clock.advance(250);
        expect(await fetchAll(manager)).toHaveLength(1);
    });

    test('two concurrent fetches never dispatch into one window', async () => {
        const { manager } = setup({ minCrawlDelaySecs: 1 });
        await manager.addRequestsBatched(['https://a.com/1', 'https://a.com/2', 'https://a.com/3'], {
            waitForAllRequestsToBeAdded: true,
        });
        const results = await Promise.all([
            manager.fetchNextRequest(),
            manager.fetchNextRequest(),
            manager.fetchNextRequest(),
        ]);
        expect(results.filter(Boolean)).toHaveLength(1);
    });

    test('ready domains are served fairly: no domain is drained before the others', async () => {
        const { manager } = setup({ domains: 'all', queueLayout: 'perDomain' });
        const urls = [
            ...Array.from({ length: 6 }, (_, i) => `https://big.com/${i}`),
            'https://small.com/1',
            'https://tiny.com/1',
        ];
        await manager.addRequestsBatched(urls, { waitForAllRequestsToBeAdded: true });
        const order = (await fetchAll(manager)).map(hostOf);
        expect(order.slice(0, 3).sort()).toEqual(['big.com', 'small.com', 'tiny.com']);
    });

    test('a domain whose queue turned out empty gives its window back', async () => {
        const { manager } = setup({ minCrawlDelaySecs: 10 });
        await manager.addRequest({ url: 'https://a.com/1' });
        const r = (await manager.fetchNextRequest())!;
        await manager.markRequestHandled(r);
        const before = manager.snapshot().find((s) => s.domain === 'a.com')!;
        expect(await manager.fetchNextRequest()).toBeNull();
        const after = manager.snapshot().find((s) => s.domain === 'a.com')!;
        expect(after.nextDispatchAt).toBe(before.nextDispatchAt);
        expect(after.dispatched).toBe(1);
    });
});

describe('ThrottlingRequestManager: requests sitting in inner are paced too (apify/crawlee#4039)', () => {
    test('a held-back request in inner is moved into its domain queue, never handed out early', async () => {
        const clock = new ManualClock();
        const inner = await RequestQueue.open('inner-4039', { config: memoryConfig() });
        for (let i = 0; i < 10; i++) await inner.addRequest({ url: `https://a.com/${i}` });
        const manager = new ThrottlingRequestManager(
            { domains: ['a.com'], inner, clock, concurrency: 100 },
            memoryConfig(),
        );
        manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://a.com/', waitMs: 5_000 });
        expect(await fetchAll(manager)).toHaveLength(0);
        expect(await inner.isFinished()).toBe(true); // all moved out of inner
        expect(manager.snapshot()[0].queued).toBe(10);
        expect(manager.getTotalCount()).toBe(10); // moved requests are not counted twice
        clock.advance(5_000);
        // After the backoff the domain is paced at the backoff's wait (it decays per quiet window).
        const got: Request[] = [];
        for (let guard = 0; guard < 100 && got.length < 10; guard++) {
            const r = await manager.fetchNextRequest();
            if (r) got.push(r);
            else clock.set((await nextReadyAt(manager))!);
        }
        expect(got).toHaveLength(10);
        for (const r of got) await manager.markRequestHandled(r);
        expect(await manager.handledCount()).toBe(10);
        expect(await manager.isFinished()).toBe(true);
    });

    test('a ready domain is served straight from inner and its clock is armed', async () => {
        const clock = new ManualClock();
        const inner = await RequestQueue.open('inner-ready', { config: memoryConfig() });
        await inner.addRequest({ url: 'https://a.com/1' });
        await inner.addRequest({ url: 'https://a.com/2' });
        const manager = new ThrottlingRequestManager(
            { domains: ['a.com'], inner, clock, minCrawlDelaySecs: 1 },
            memoryConfig(),
        );
        const got = await fetchAll(manager);
        expect(got.map((r) => r.url)).toEqual(['https://a.com/1']);
        expect(manager.snapshot()[0]).toMatchObject({ dispatched: 1, queued: 1, inFlight: 1 });
    });

    test('if moving fails, the original goes back to the front of inner', async () => {
        const clock = new ManualClock();
        const inner = await RequestQueue.open('inner-fail', { config: memoryConfig() });
        await inner.addRequest({ url: 'https://a.com/1' });
        await inner.addRequest({ url: 'https://x.org/1' });
        const failing = await RequestQueue.open('throttled-a.com', { config: memoryConfig() });
        failing.addRequest = async () => {
            throw new Error('disk full');
        };
        const manager = new ThrottlingRequestManager(
            { domains: ['a.com'], inner, clock, requestManagerOpener: async () => failing },
            memoryConfig(),
        );
        manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://a.com/', waitMs: 5_000 });
        expect(await manager.fetchNextRequest()).toBeNull();
        // Still in inner, at the front, not lost.
        const again = await inner.fetchNextRequest();
        expect(again?.url).toBe('https://a.com/1');
    });
});

describe('ThrottlingRequestManager: completions and reclaims go back to the queue that handed the request out', () => {
    test('the same uniqueKey in inner and in a domain queue does not get mixed up', async () => {
        const clock = new ManualClock();
        const inner = await RequestQueue.open('inner-collide', { config: memoryConfig() });
        await inner.addRequest({ url: 'https://a.com/page', uniqueKey: 'same' });
        const manager = new ThrottlingRequestManager(
            { domains: ['a.com'], inner, clock, concurrency: 2 },
            memoryConfig(),
        );
        await manager.addRequest({ url: 'https://a.com/other', uniqueKey: 'same' });
        const got = await fetchAll(manager);
        expect(got.map((r) => r.url).sort()).toEqual(['https://a.com/other', 'https://a.com/page']);
        const fromInner = got.find((r) => r.url.endsWith('/page'))!;
        const fromDomain = got.find((r) => r.url.endsWith('/other'))!;
        await manager.reclaimRequest(fromInner);
        await manager.markRequestHandled(fromDomain);
        expect(await inner.isEmpty()).toBe(false); // reclaimed back into inner
        expect(await inner.handledCount()).toBe(0);
        const again = (await manager.fetchNextRequest())!;
        expect(again.url).toBe('https://a.com/page');
        await manager.markRequestHandled(again);
        expect(await inner.handledCount()).toBe(1);
        expect(await manager.isFinished()).toBe(true);
    });

    test('a reclaimed request returns to its domain queue and is paced again', async () => {
        const { manager, clock } = setup({ minCrawlDelaySecs: 1 });
        await manager.addRequest({ url: 'https://a.com/1' });
        const r = (await manager.fetchNextRequest())!;
        await manager.reclaimRequest(r);
        expect(await manager.fetchNextRequest()).toBeNull();
        clock.advance(1_000);
        expect((await manager.fetchNextRequest())?.url).toBe('https://a.com/1');
    });
});

describe('ThrottlingRequestManager: stall', () => {
    async function refuseUntilStalled(manager: ThrottlingRequestManager, clock: ManualClock, rounds: number) {
        for (let i = 0; i < rounds; i++) {
            const r = await manager.fetchNextRequest();
            if (!r) {
                clock.set((await nextReadyAt(manager)) ?? clock.now());
                i--;
                continue;
            }
            manager.recordPacingSignal({ reason: 'rateLimited', url: r.url });
            await manager.reclaimRequest(r);
        }
    }

    test('a domain refusing without a break longer than maxDomainStallSecs ends the crawl, requests left queued', async () => {
        const { manager, clock } = setup({ maxDomainStallSecs: 10, baseDelaySecs: 1, rampup: false });
        await manager.addRequestsBatched(['https://a.com/1', 'https://a.com/2'], { waitForAllRequestsToBeAdded: true });
        await refuseUntilStalled(manager, clock, 4); // refused at 0, 1, 3 and 7 s; now backing off 8 s
        expect(await manager.isFinished()).toBe(false); // 7 s of refusing so far
        clock.advance(3_500); // still inside the last backoff: 10.5 s of refusing
        const error = await manager.isFinished().catch((e) => e);
        expect(error).toBeInstanceOf(PersistentRateLimitError);
        expect(error.domains).toEqual([expect.objectContaining({ domain: 'a.com', queued: 2 })]);
        expect(error.message).toMatch(/a\.com has refused every request for \d+ s/);
        expect(manager.getPendingCount()).toBe(2);
    });

    test('below the window it keeps waiting', async () => {
        const { manager, clock } = setup({ maxDomainStallSecs: 60, baseDelaySecs: 1 });
        await manager.addRequest({ url: 'https://a.com/1' });
        await refuseUntilStalled(manager, clock, 3);
        expect(await manager.checkReadiness()).toMatchObject({ kind: 'waiting' });
        expect(await manager.isFinished()).toBe(false);
    });

    test('a stalled domain with no work left is not a stall', async () => {
        const { manager, clock } = setup({ maxDomainStallSecs: 1, baseDelaySecs: 1, rampup: false });
        await manager.addRequest({ url: 'https://a.com/1' });
        await refuseUntilStalled(manager, clock, 3);
        clock.advance(60_000);
        const r = (await manager.fetchNextRequest())!;
        manager.recordPacingSignal({ reason: 'rateLimited', url: r.url });
        // The integration gives up on it (e.g. user code marks it handled after an error).
        await manager.markRequestHandled(r);
        expect(await manager.isFinished()).toBe(true);
    });

    test('a success breaks the run of refusals', async () => {
        const { manager, clock } = setup({ maxDomainStallSecs: 5, baseDelaySecs: 1 });
        await manager.addRequestsBatched(['https://a.com/1', 'https://a.com/2'], { waitForAllRequestsToBeAdded: true });
        await refuseUntilStalled(manager, clock, 3);
        clock.set((await nextReadyAt(manager))!);
        const ok = (await manager.fetchNextRequest())!;
        await manager.markRequestHandled(ok);
        await refuseUntilStalled(manager, clock, 1);
        expect(await manager.isFinished()).toBe(false);
    });

    test('a request given up on (marked handled after failing) does not break the run: failed requests are marked handled too', async () => {
        const { manager, clock } = setup({ maxDomainStallSecs: 5, baseDelaySecs: 1 });
        await manager.addRequestsBatched(['https://a.com/1', 'https://a.com/2'], { waitForAllRequestsToBeAdded: true });
        await refuseUntilStalled(manager, clock, 3);
        clock.set((await nextReadyAt(manager))!);
        const failed = (await manager.fetchNextRequest())!;
        failed.pushErrorMessage(new Error('Request blocked - received 429 status code.'));
        await manager.markRequestHandled(failed);
        await refuseUntilStalled(manager, clock, 1);
        await expect(manager.isFinished()).rejects.toBeInstanceOf(PersistentRateLimitError);
        expect(manager.snapshot()[0]).toMatchObject({ handled: 1 });
    });

    test('an answer that is not a refusal breaks the run even if the request handler then fails', async () => {
        const { manager, clock } = setup({ maxDomainStallSecs: 5, baseDelaySecs: 1 });
        await manager.addRequestsBatched(['https://a.com/1', 'https://a.com/2'], { waitForAllRequestsToBeAdded: true });
        await refuseUntilStalled(manager, clock, 3);
        clock.set((await nextReadyAt(manager))!);
        const answered = (await manager.fetchNextRequest())!;
        await manager.handleResponse({ request: answered }, { statusCode: 200, headers: {} });
        answered.pushErrorMessage(new Error('the page did not parse'));
        await manager.markRequestHandled(answered);
        await refuseUntilStalled(manager, clock, 1);
        expect(await manager.isFinished()).toBe(false);
    });

    test('an idle poll does not ask every domain queue: quiet ones are asked only before the crawl is called finished', async () => {
        const asked = new Map<string, number>();
        const clock = new ManualClock();
        const config = memoryConfig();
        const manager = new ThrottlingRequestManager(
            {
                domains: 'all',
                queueLayout: 'perDomain',
                clock,
                requestManagerOpener: async (name, opts) => {
                    const queue = await RequestQueue.open(name, opts);
                    const isFinished = queue.isFinished.bind(queue);
                    queue.isFinished = async () => {
                        asked.set(name, (asked.get(name) ?? 0) + 1);
                        return isFinished();
                    };
                    return queue;
                },
            },
            config,
        );
        for (const host of ['a.com', 'b.com', 'c.com']) await manager.addRequest({ url: `https://${host}/1` });
        for (const r of await fetchAll(manager)) await manager.markRequestHandled(r);
        await manager.addRequest({ url: 'https://a.com/2' });
        manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://a.com/', waitMs: 5_000 });

        // a.com waits out its backoff: b.com and c.com are quiet, and nobody asks their queues.
        for (let i = 0; i < 5; i++) expect((await manager.checkReadiness()).kind).toBe('waiting');
        expect([...asked.values()].reduce((a, b) => a + b, 0)).toBe(0);

        clock.advance(5_000);
        await manager.markRequestHandled((await manager.fetchNextRequest())!);
        expect(await manager.checkReadiness()).toMatchObject({ status: 'finished' });
        expect(Object.fromEntries(asked)).toEqual({ 'throttled-a.com': 1, 'throttled-b.com': 1, 'throttled-c.com': 1 });
    });

    test('work a quiet queue holds that we did not count is found before the crawl is called finished', async () => {
        const { manager, config } = setup({ domains: 'all', queueLayout: 'perDomain' });
        await manager.addRequest({ url: 'https://a.com/1' });
        await manager.markRequestHandled((await manager.fetchNextRequest())!);
        // Added to the domain's queue behind the manager's back (another process, a user).
        const behind = await DomainRequestQueue.open('throttled-a.com', { config });
        await behind.addRequest({ url: 'https://a.com/behind' });

        expect((await manager.checkReadiness()).kind).toBe('ready');
        expect((await manager.fetchNextRequest())?.url).toBe('https://a.com/behind');
    });

    test('checkReadiness precedence: ready > stalled > waiting > finished', async () => {
        const { manager, clock } = setup({ maxDomainStallSecs: 2, baseDelaySecs: 1 });
        expect(await manager.checkReadiness()).toMatchObject({ status: 'finished' });
        await manager.addRequest({ url: 'https://a.com/1' });
        await refuseUntilStalled(manager, clock, 3);
        expect((await manager.checkReadiness()).kind).toBe('stalled');
        await manager.addRequest({ url: 'https://b.com/1' });
        expect((await manager.checkReadiness()).kind).toBe('ready');
    });
});

describe('ThrottlingRequestManager: adding', () => {
    test('addRequestsBatched honours maxNewRequests and reports requestsOverLimit', async () => {
        const { manager } = setup();
        await manager.addRequest({ url: 'https://a.com/0' });
        const result = await manager.addRequestsBatched(
            ['https://a.com/0', 'https://a.com/1', 'https://x.org/1', 'https://b.com/1', 'https://b.com/2'],
            {
                maxNewRequests: 2,
            },
        );
        const fresh = result.addedRequests.filter((r) => !r.wasAlreadyPresent).map((r) => r.uniqueKey);
        expect(fresh).toEqual(['https://a.com/1', 'https://x.org/1']);
        expect(result.requestsOverLimit?.map((r: any) => r.url)).toEqual(['https://b.com/1', 'https://b.com/2']);
        expect(manager.getTotalCount()).toBe(3);
    });

    test("maxThrottledDomains under 'all': a clear error, and a batch that overflows still stores what fits", async () => {
        const { manager } = setup({ domains: 'all', queueLayout: 'perDomain', maxThrottledDomains: 2 });
        await manager.addRequest({ url: 'https://d1.com/' });
        const error = await manager
            .addRequestsBatched(['https://d1.com/2', 'https://d2.com/', 'https://d3.com/', 'https://d4.com/'], {
                waitForAllRequestsToBeAdded: true,
            })
            .catch((e) => e);
        expect(error).toBeInstanceOf(ThrottledDomainLimitError);
        expect(error.message).toMatch(/maxThrottledDomains \(2\) reached.*d3\.com, d4\.com/);
        expect(manager.getTotalCount()).toBe(3);
        await expect(manager.addRequest({ url: 'https://d5.com/' })).rejects.toThrow(ThrottledDomainLimitError);
    });

    test('the async iterator yields what fetchNextRequest hands out', async () => {
        const { manager } = setup();
        await manager.addRequestsBatched(['https://a.com/1', 'https://x.org/1'], { waitForAllRequestsToBeAdded: true });
        const seen: string[] = [];
        for await (const r of manager) seen.push(r.url);
        expect(seen.sort()).toEqual(['https://a.com/1', 'https://x.org/1']);
    });
});

describe('ThrottlingRequestManager: storage', () => {
    test('purge drops the throttled queues and forgets clocks', async () => {
        const { manager, config } = setup();
        await manager.addRequest({ url: 'https://a.com/1' });
        manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://a.com/1', waitMs: 10_000 });
        await manager.purge();
        expect(manager.snapshot().find((s) => s.domain === 'a.com')?.backoffUntil).toBe(0);
        const reopened = await RequestQueue.open('throttled-a.com', { config });
        expect(await reopened.isEmpty()).toBe(true);
        expect(manager.getTotalCount()).toBe(0);
    });

    test('snapshot is read-only', async () => {
        const { manager } = setup();
        const snap = manager.snapshot();
        expect(Object.isFrozen(snap)).toBe(true);
        expect(Object.isFrozen(snap[0])).toBe(true);
    });
});
