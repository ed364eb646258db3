import type { Request } from '@crawlee/core';
import { log } from '@crawlee/core';

import { ManualClock, RequestThrottledError, seededRandom, ThrottlingRequestManager } from 'crawlee-throttling';
import type { ThrottlingRequestManagerOptions } from 'crawlee-throttling';
import { DomainState } from '../../packages/throttling/src/pacing/domain-state';
import { memoryConfig } from '../helpers/storage';
import { nextReadyAt } from '../helpers/next-ready-at';

function setup(options: Partial<ThrottlingRequestManagerOptions> = {}) {
    const clock = new ManualClock();
    const manager = new ThrottlingRequestManager({ domains: 'all', clock, ...options }, memoryConfig());
    return { clock, manager };
}

async function add(manager: ThrottlingRequestManager, urls: string[]) {
    await manager.addRequestsBatched(urls, { waitForAllRequestsToBeAdded: true });
}

/** Fetches one request at each moment the manager allows, handling each at once (fast responses). */
async function dispatchTimes(
    manager: ThrottlingRequestManager,
    clock: ManualClock,
    count: number,
    handle = true,
): Promise<number[]> {
    const start = clock.now();
    const times: number[] = [];
    for (let guard = 0; guard < 1000 && times.length < count; guard++) {
        const r = await manager.fetchNextRequest();
        if (r) {
            times.push(clock.now() - start);
            if (handle) await manager.markRequestHandled(r);
            continue;
        }
        const next = await nextReadyAt(manager);
        if (next === undefined) break;
        clock.set(Math.max(next, clock.now()));
    }
    return times;
}

const snap = (m: ThrottlingRequestManager, domain: string) => m.snapshot().find((s) => s.domain === domain)!;
const response = (status: number, headers: Record<string, string> = {}) => ({ statusCode: status, headers });

describe('policy: concurrency, delay, per-slot delay', () => {
    test('concurrency 2, delay 0.3 s, per-slot 1.0 s, fast responses: dispatches at 0, 0.3 and 1.0 s', async () => {
        const { manager, clock } = setup({ concurrency: 2, delaySecs: 0.3, delayPerSlotSecs: 1 });
        await add(manager, ['https://a.com/1', 'https://a.com/2', 'https://a.com/3']);
        expect(await dispatchTimes(manager, clock, 3)).toEqual([0, 300, 1000]);
    });

    test('no more than `concurrency` requests in flight; a completion frees a slot', async () => {
        const { manager } = setup({ concurrency: 2 });
        await add(manager, ['https://a.com/1', 'https://a.com/2', 'https://a.com/3']);
        const r1 = (await manager.fetchNextRequest())!;
        const r2 = (await manager.fetchNextRequest())!;
        expect(await manager.fetchNextRequest()).toBeNull();
        expect(await manager.isEmpty()).toBe(true);
        expect(snap(manager, 'a.com')).toMatchObject({ inFlight: 2, concurrencyLimit: 2 });
        await manager.markRequestHandled(r1);
        expect((await manager.fetchNextRequest())?.url).toBe('https://a.com/3');
        await manager.reclaimRequest(r2);
        expect(snap(manager, 'a.com').inFlight).toBe(1);
    });

    test('one at a time: the interval also counts from the response, so the server sees the spacing', async () => {
        const { manager, clock } = setup({ delaySecs: 1 });
        await add(manager, ['https://a.com/1', 'https://a.com/2']);
        const r = (await manager.fetchNextRequest())!;
        clock.advance(300); // the response arrives 300 ms after dispatch
        await manager.handleResponse({ request: r }, response(200));
        await manager.markRequestHandled(r);
        expect(snap(manager, 'a.com').nextDispatchAt).toBe(clock.now() + 1000);
        clock.advance(999);
        expect(await manager.fetchNextRequest()).toBeNull();
        clock.advance(1);
        expect(await manager.fetchNextRequest()).not.toBeNull();
    });

    test('with more than one in flight, the interval counts from dispatches only', async () => {
        const { manager, clock } = setup({ delaySecs: 1, concurrency: 2 });
        await add(manager, ['https://a.com/1']);
        const start = clock.now();
        const r = (await manager.fetchNextRequest())!;
        clock.advance(300);
        await manager.handleResponse({ request: r }, response(200));
        expect(snap(manager, 'a.com').nextDispatchAt).toBe(start + 1000);
    });

    test('the default is one request in flight per domain', async () => {
        const { manager } = setup();
        await add(manager, ['https://a.com/1', 'https://a.com/2', 'https://b.com/1']);
        const got = [
            await manager.fetchNextRequest(),
            await manager.fetchNextRequest(),
            await manager.fetchNextRequest(),
        ];
        expect(
            got
                .filter(Boolean)
                .map((r) => new URL(r!.url).hostname)
                .sort(),
        ).toEqual(['a.com', 'b.com']);
    });

    test('jitter randomises each delay within its bounds, reproducibly with a seeded source', async () => {
        const run = async () => {
            const { manager, clock } = setup({ delaySecs: 1, jitter: 0.5, random: seededRandom(42) });
            await add(
                manager,
                Array.from({ length: 20 }, (_, i) => `https://a.com/${i}`),
            );
            const times = await dispatchTimes(manager, clock, 20);
            return times.slice(1).map((t, i) => t - times[i]);
        };
        const gaps = await run();
        for (const gap of gaps) {
            expect(gap).toBeGreaterThanOrEqual(500);
            expect(gap).toBeLessThanOrEqual(1500);
        }
        expect(new Set(gaps.map((g) => Math.round(g))).size).toBeGreaterThan(5); // really random
        expect(await run()).toEqual(gaps); // and reproducible
    });

    test('a [low, high] jitter pair draws from that range', () => {
        const state = new DomainState('a.com');
        const policy = {
            concurrency: 100,
            delayMs: 1000,
            delayPerSlotMs: 0,
            jitter: [1, 2] as const,
            ignoreRobotsCrawlDelay: false,
            explicit: { concurrency: false, delay: false },
        };
        const random = seededRandom(7);
        let now = 0;
        for (let i = 0; i < 50; i++) {
            state.dispatch(now, 0, policy, random);
            const gap = state.nextDispatchAt - now;
            expect(gap).toBeGreaterThanOrEqual(1000);
            expect(gap).toBeLessThanOrEqual(2000);
            now = state.nextDispatchAt;
        }
    });
});

describe('policy: backoff triggers, factor and recovery', () => {
    test('5xx from backoffStatusCodes back off and retry for free; other statuses pass through', async () => {
        const { manager, clock } = setup({ baseDelaySecs: 1 });
        await add(manager, ['https://a.com/1']);
        const r = (await manager.fetchNextRequest())!;
        await expect(manager.handleResponse({ request: r }, response(503))).rejects.toBeInstanceOf(
            RequestThrottledError,
        );
        expect(snap(manager, 'a.com').backoffUntil).toBe(clock.now() + 1000);
        await expect(manager.handleResponse({ request: r }, response(500))).resolves.toBeUndefined();
        await expect(manager.handleResponse({ request: r }, response(404))).resolves.toBeUndefined();
    });

    test('backoffStatusCodes can be narrowed per scope', async () => {
        const { manager } = setup({ scopes: { 'a.com': { backoffStatusCodes: [429] } } });
        await add(manager, ['https://a.com/1']);
        const r = (await manager.fetchNextRequest())!;
        await expect(manager.handleResponse({ request: r }, response(503))).resolves.toBeUndefined();
        await expect(manager.handleResponse({ request: r }, response(429))).rejects.toBeInstanceOf(
            RequestThrottledError,
        );
    });

    test('a network error or timeout on a reclaimed request backs the domain off; a handler bug does not', async () => {
        const { manager, clock } = setup({ baseDelaySecs: 2, rampup: false });
        await add(manager, ['https://a.com/1', 'https://b.com/1']);
        const a = (await manager.fetchNextRequest())!;
        const b = (await manager.fetchNextRequest())!;
        const [timedOut, buggy] = a.url.includes('a.com') ? [a, b] : [b, a];
        timedOut.pushErrorMessage(new Error('Request timed out: ETIMEDOUT'));
        buggy.pushErrorMessage(new TypeError('Cannot read properties of undefined'));
        await manager.reclaimRequest(timedOut);
        await manager.reclaimRequest(buggy);
        expect(snap(manager, 'a.com').backoffUntil).toBe(clock.now() + 2000);
        expect(snap(manager, 'b.com').backoffUntil).toBe(0);
    });

    test('backoffOnNetworkErrors: false ignores network errors', async () => {
        const { manager } = setup({ backoffOnNetworkErrors: false });
        await add(manager, ['https://a.com/1']);
        const r = (await manager.fetchNextRequest())!;
        r.pushErrorMessage(new Error('socket hang up'));
        await manager.reclaimRequest(r);
        expect(snap(manager, 'a.com').backoffUntil).toBe(0);
    });

    test('backoffFactor and baseDelaySecs shape the exponential waits, capped by maxDelaySecs', async () => {
        const { manager, clock } = setup({ backoffFactor: 3, baseDelaySecs: 1, maxDelaySecs: 20 });
        const waits: number[] = [];
        for (let i = 0; i < 4; i++) {
            manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://a.com/' });
            const s = snap(manager, 'a.com');
            waits.push(s.backoffUntil - clock.now());
            clock.set(s.backoffUntil);
        }
        expect(waits).toEqual([1000, 3000, 9000, 20000]);
    });

    test('recovery: after each quiet window of three of its own intervals the raised pacing steps down one factor towards the configured delay', async () => {
        const { manager, clock } = setup({
            baseDelaySecs: 1,
            backoffWindowSecs: 60,
            delaySecs: 0.25,
            rampup: false,
        });
        const t0 = clock.now();
        manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://a.com/', waitMs: 8000 });
        const at = (ms: number) => {
            clock.set(t0 + ms);
            return snap(manager, 'a.com');
        };
        expect(at(10_000)).toMatchObject({ intervalMs: 8000, intervalReason: 'backoff' });
        expect(at(23_999).intervalMs).toBe(8000);
        expect(at(24_000).intervalMs).toBe(4000); // 3 x 8 s
        expect(at(36_000).intervalMs).toBe(2000); // + 3 x 4 s
        expect(at(42_000).intervalMs).toBe(1000); // + 3 x 2 s
        expect(at(45_000)).toMatchObject({ intervalMs: 250, intervalReason: 'configured' }); // 0.5 s < 1 s
    });

    test('recovery: a quiet window is at most backoffWindowSecs, so long raised pacing steps down once per window', async () => {
        const { manager, clock } = setup({ baseDelaySecs: 1, backoffWindowSecs: 60, rampup: false });
        const t0 = clock.now();
        manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://a.com/', waitMs: 40_000 });
        const at = (ms: number) => {
            clock.set(t0 + ms);
            return snap(manager, 'a.com').intervalMs;
        };
        expect(at(59_999)).toBe(40_000);
        expect(at(60_000)).toBe(20_000);
        expect(at(119_999)).toBe(20_000);
        expect(at(120_000)).toBe(10_000);
    });

    test('a new trigger while raised multiplies the pacing instead of starting over', async () => {
        const { manager, clock } = setup({ baseDelaySecs: 1, rampup: false });
        manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://a.com/' });
        clock.set(snap(manager, 'a.com').backoffUntil);
        manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://a.com/' });
        expect(snap(manager, 'a.com').penaltyMs).toBe(2000);
    });
});

describe('policy: server-announced limits', () => {
    async function refusedWith(
        headers: Record<string, string>,
        options: Partial<ThrottlingRequestManagerOptions> = {},
    ) {
        const { manager, clock } = setup({ baseDelaySecs: 2, rampup: false, ...options });
        await add(manager, ['https://a.com/1']);
        const r = (await manager.fetchNextRequest())!;
        await manager.handleResponse({ request: r }, response(429, headers)).catch(() => undefined);
        return snap(manager, 'a.com').backoffUntil - clock.now();
    }

    test('Retry-After wins over RateLimit fields', async () => {
        expect(
            await refusedWith({ 'retry-after': '7', ratelimit: '"p";r=0;t=30', 'ratelimit-policy': '"p";q=10;w=60' }),
        ).toBe(7000);
    });

    test('IETF RateLimit with nothing remaining waits for the reset', async () => {
        expect(await refusedWith({ ratelimit: '"p";r=0;t=12', 'ratelimit-policy': '"p";q=10;w=60' })).toBe(12000);
    });

    test('legacy X-RateLimit-Reset as epoch seconds and as delta seconds', async () => {
        const clock = new ManualClock();
        const epoch = Math.floor(clock.now() / 1000) + 9;
        const { manager } = setup({ clock });
        await add(manager, ['https://a.com/1']);
        const r = (await manager.fetchNextRequest())!;
        await manager
            .handleResponse(
                { request: r },
                response(429, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(epoch) }),
            )
            .catch(() => undefined);
        expect(snap(manager, 'a.com').backoffUntil).toBe(epoch * 1000);
        expect(await refusedWith({ 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '5' })).toBe(5000);
    });

    test('malformed values are ignored: exponential backoff applies', async () => {
        expect(await refusedWith({ 'retry-after': 'soon', ratelimit: 'garbage;;', 'x-ratelimit-reset': 'x' })).toBe(
            2000,
        );
    });

    test('server waits are capped at maxDelaySecs', async () => {
        expect(await refusedWith({ 'retry-after': '3600' }, { maxDelaySecs: 30 })).toBe(30_000);
    });

    test('a successful response announcing remaining quota spreads it over the window', async () => {
        const { manager } = setup({ rampup: false });
        await add(manager, ['https://a.com/1']);
        const r = (await manager.fetchNextRequest())!;
        await manager.handleResponse(
            { request: r },
            response(200, { ratelimit: '"p";r=10;t=20', 'ratelimit-policy': '"p";q=100;w=60' }),
        );
        expect(snap(manager, 'a.com')).toMatchObject({ intervalMs: 2000, intervalReason: 'announced' });
    });

    test('a successful response with nothing remaining holds the domain until the reset, without counting a refusal', async () => {
        const { manager, clock } = setup();
        await add(manager, ['https://a.com/1']);
        const r = (await manager.fetchNextRequest())!;
        await manager.handleResponse(
            { request: r },
            response(200, { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': '4' }),
        );
        expect(snap(manager, 'a.com')).toMatchObject({ backoffUntil: clock.now() + 4000, refusals: 0 });
    });
});

describe('policy: robots.txt Crawl-delay interplay and scopes', () => {
    test('a declared crawl delay sets the delay and concurrency 1', async () => {
        const { manager } = setup({ concurrency: 4 });
        manager.recordPacingSignal({ reason: 'minInterval', url: 'https://a.com/', intervalMs: 1500 });
        expect(snap(manager, 'a.com')).toMatchObject({
            concurrencyLimit: 1,
            intervalMs: 1500,
            intervalReason: 'crawl-delay',
        });
    });

    test('explicit scope settings win over robots.txt, with one warning', async () => {
        const warn = jest.spyOn(Object.getPrototypeOf(log), 'warningOnce');
        const { manager } = setup({ scopes: { 'a.com': { concurrency: 3, delaySecs: 0.1 } } });
        manager.recordPacingSignal({ reason: 'minInterval', url: 'https://a.com/', intervalMs: 1500 });
        manager.recordPacingSignal({ reason: 'minInterval', url: 'https://a.com/x', intervalMs: 1500 });
        expect(snap(manager, 'a.com')).toMatchObject({ concurrencyLimit: 3, intervalMs: 100, scope: 'a.com' });
        const messages = warn.mock.calls.map((c) => String(c[0])).filter((m) => m.includes('Crawl-delay'));
        expect(new Set(messages).size).toBe(1);
        expect(messages[0]).toMatch(/scope a\.com win/);
        warn.mockRestore();
    });

    test('ignoreRobotsCrawlDelay ignores the declared delay silently', async () => {
        const warn = jest.spyOn(Object.getPrototypeOf(log), 'warningOnce');
        const { manager } = setup({ scopes: { 'a.com': { ignoreRobotsCrawlDelay: true, concurrency: 2 } } });
        manager.recordPacingSignal({ reason: 'minInterval', url: 'https://a.com/', intervalMs: 1500 });
        expect(snap(manager, 'a.com')).toMatchObject({ concurrencyLimit: 2, intervalMs: 0, crawlDelayMs: 0 });
        expect(warn.mock.calls.some((c) => String(c[0]).includes('Crawl-delay'))).toBe(false);
        warn.mockRestore();
    });

    test('per-scope overrides apply to their domain only', async () => {
        const { manager, clock } = setup({
            delaySecs: 1,
            scopes: { 'api.example.com': { concurrency: 16, delaySecs: 0 }, 'slow.example': { delaySecs: 5 } },
        });
        await add(manager, [
            ...Array.from({ length: 3 }, (_, i) => `https://api.example.com/${i}`),
            ...Array.from({ length: 2 }, (_, i) => `https://slow.example/${i}`),
            ...Array.from({ length: 2 }, (_, i) => `https://other.example/${i}`),
        ]);
        const first: Request[] = [];
        for (let r = await manager.fetchNextRequest(); r; r = await manager.fetchNextRequest()) first.push(r);
        // All three api requests at once; one each of the others.
        expect(first.map((r) => new URL(r.url).hostname).sort()).toEqual([
            'api.example.com',
            'api.example.com',
            'api.example.com',
            'other.example',
            'slow.example',
        ]);
        for (const r of first) await manager.markRequestHandled(r);
        clock.advance(1000);
        expect(new URL((await manager.fetchNextRequest())!.url).hostname).toBe('other.example');
        expect(await manager.fetchNextRequest()).toBeNull();
        clock.advance(4000);
        expect(new URL((await manager.fetchNextRequest())!.url).hostname).toBe('slow.example');
    });

    test('an endpoint prefix scope is paced apart from the rest of its host', async () => {
        const { manager } = setup({ scopes: { 'api.example.com/search': { delaySecs: 10 } } });
        await add(manager, [
            'https://api.example.com/search?q=1',
            'https://api.example.com/search/more',
            'https://api.example.com/items/1',
        ]);
        const got: string[] = [];
        for (let r = await manager.fetchNextRequest(); r; r = await manager.fetchNextRequest()) {
            got.push(r.url);
            await manager.markRequestHandled(r);
        }
        expect(got.sort()).toEqual(['https://api.example.com/items/1', 'https://api.example.com/search?q=1']);
        expect(
            manager
                .snapshot()
                .map((s) => s.domain)
                .sort(),
        ).toEqual(['api.example.com', 'api.example.com/search']);
    });
});

describe('policy: validation', () => {
    test.each([
        [{ delaySecs: -1 }, /`delaySecs`: delaySecs must be >= 0/],
        [{ concurrency: 0 }, /`concurrency`: concurrency must be >= 1/],
        [{ jitter: 1.5 }, /jitter/],
        [{ backoffFactor: 0.5 }, /backoffFactor must be >= 1/],
        [{ scopes: { 'http://a.com': {} } }, /scope key "http:\/\/a.com" must not have a scheme/],
        [{ scopes: { '*.a.com': {} } }, /registrableDomain/],
        [{ scopes: { 'a.com': { concurrency: 0 } } }, /`scopes.a.com.concurrency`: concurrency must be >= 1/],
        [{ scopes: { 'a.com': { delay: 1 } } }, /unknown option\(s\) `delay`/],
    ])('%j is rejected with a clear message', (options, message) => {
        expect(() => new ThrottlingRequestManager({ domains: 'all', ...(options as object) })).toThrow(message);
    });
});
