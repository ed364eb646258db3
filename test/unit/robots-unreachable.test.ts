/**
 * A robots.txt that answers 5xx or 429, or not at all. The origin is paused and
 * read again a bounded number of times; then it is disallowed for a while (RFC 9309 §2.3.1.4), or
 * keeps the rules of an earlier good read (RFC 9309 §2.4).
 */
import type { Request } from '@crawlee/core';
import { log, LogLevel } from '@crawlee/core';

import type { ThrottlingRequestManagerOptions } from 'crawlee-throttling';
import type { AttachableCrawler, NavigationContext, RobotsFetcher, RobotsFetchResult } from 'crawlee-throttling/types';
import { ManualClock, RobotsUnreachableError, ThrottlingRequestManager } from 'crawlee-throttling';
import { RobotsCrawlDelayCache } from '../../packages/throttling/src/robots/robots-crawl-delay';
import { robotsReadFailure } from '../../packages/throttling/src/robots/robots-crawl-delay';
import { decideRobotsFailure } from '../../packages/throttling/src/robots/robots-failure';
import { memoryConfig } from '../helpers/storage';
import { withPort } from '../helpers/throttler-port';
import { nextReadyAt } from '../helpers/next-ready-at';

const T0 = 1_700_000_000_000;
const DAY = 24 * 60 * 60 * 1000;

const previousLevel = log.getLevel();
beforeAll(() => log.setLevel(LogLevel.OFF));
afterAll(() => log.setLevel(previousLevel));

/** Lets promise callbacks (a settled robots.txt read, a queue write) run. */
const settle = async () => {
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
};

const file = (body: string): RobotsFetchResult => ({ status: 200, body, headers: {} });
const answer = (status: number, headers: RobotsFetchResult['headers'] = {}): RobotsFetchResult => ({
    status,
    body: '',
    headers,
});
const NO_ANSWER = new Error('connect ECONNREFUSED');

/** A robots.txt fetcher that answers from a script: one entry per read, the last one repeated. */
function scripted(script: (RobotsFetchResult | Error)[]) {
    const reads: { url: string; at: number }[] = [];
    let clock: ManualClock | undefined;
    const fetcher: RobotsFetcher = async (url) => {
        reads.push({ url, at: clock?.now() ?? 0 });
        const next = script.length > 1 ? script.shift()! : script[0];
        if (next instanceof Error) throw next;
        return next;
    };
    /** From now on, reads answer from `next`. */
    const from = (next: (RobotsFetchResult | Error)[]) => void script.splice(0, script.length, ...next);
    return { fetcher, reads, from, useClock: (c: ManualClock) => (clock = c) };
}

/** A manager attached to a stand-in crawler (its hooks are called by hand), robots.txt from `fetcher`. */
function setup(fetcher: ReturnType<typeof scripted>, options: Partial<ThrottlingRequestManagerOptions> = {}) {
    const clock = new ManualClock(T0);
    fetcher.useClock(clock);
    const manager = new ThrottlingRequestManager(
        { domains: 'all', queueLayout: 'perDomain', clock, robotsFetcher: fetcher.fetcher, ...options },
        memoryConfig(),
    );
    const crawler: AttachableCrawler = { requestQueue: manager, preNavigationHooks: [], postNavigationHooks: [] };
    manager.attach(crawler);
    /** The pre-navigation hook attach() installed: throws when the request is to fail unsent. */
    const beforeSending = async (request: Request) => crawler.preNavigationHooks![0]({ request } as NavigationContext);
    return { clock, manager, beforeSending };
}

const snap = (manager: ThrottlingRequestManager, key: string) => manager.snapshot().find((s) => s.domain === key);

describe('what a failed robots.txt read leads to (decideRobotsFailure)', () => {
    const failure = { reason: 'answered 503', answered: true };
    const base = { retriesLeft: 0, hasGoodRead: false, disallowMs: 60_000, errorBudgetSpent: false, now: T0 };

    test('while retries are left: read again, after Retry-After when the answer had one', () => {
        expect(decideRobotsFailure(failure, { ...base, retriesLeft: 2 })).toEqual({ action: 'retry' });
        expect(decideRobotsFailure({ ...failure, retryAfterHeader: '7' }, { ...base, retriesLeft: 1 })).toEqual({
            action: 'retry',
            waitMs: 7_000,
        });
        const date = new Date(T0 + 30_000).toUTCString();
        expect(decideRobotsFailure({ ...failure, retryAfterHeader: date }, { ...base, retriesLeft: 1 })).toEqual({
            action: 'retry',
            waitMs: 30_000,
        });
    });

    test("reads with no answer that spent the domain's error budget leave the rest to it, retries or not", () => {
        const none = { reason: 'did not answer (timeout or network error)', answered: false };
        expect(decideRobotsFailure(none, { ...base, retriesLeft: 3, errorBudgetSpent: true })).toEqual({
            action: 'errorBudget',
        });
    });

    test('retries spent: an earlier good read stays; else disallow for the period; a period of 0 allows', () => {
        expect(decideRobotsFailure(failure, { ...base, hasGoodRead: true })).toEqual({ action: 'keepLastGood' });
        expect(decideRobotsFailure(failure, base)).toEqual({ action: 'disallow', forMs: 60_000 });
        expect(decideRobotsFailure(failure, { ...base, disallowMs: 0 })).toEqual({ action: 'allow' });
    });

    test('which reads failed: 5xx (with its Retry-After), 429 and no answer; a 4xx or a file did not', () => {
        expect(robotsReadFailure({ kind: 'none', reason: 'server-error', status: 503, retryAfterHeader: '5' })).toEqual(
            { reason: 'answered 503', answered: true, retryAfterHeader: '5' },
        );
        expect(robotsReadFailure({ kind: 'rateLimited' })).toEqual({ reason: 'answered 429', answered: true });
        expect(robotsReadFailure({ kind: 'none', reason: 'unreachable' })).toEqual({
            reason: 'did not answer (timeout or network error)',
            answered: false,
        });
        expect(robotsReadFailure({ kind: 'none', reason: 'client-error' })).toBeUndefined();
        expect(robotsReadFailure({ kind: 'none', reason: 'missing' })).toBeUndefined();
        expect(robotsReadFailure({ kind: 'none', reason: 'no-crawl-delay' })).toBeUndefined();
    });
});

describe('RobotsCrawlDelayCache and failed reads', () => {
    test('a failed read is not cached (the next lookup reads again); the last good read is kept across it', async () => {
        const clock = new ManualClock(T0);
        const robots = scripted([file('User-agent: *\nCrawl-delay: 2\n'), answer(503), answer(503), NO_ANSWER]);
        const cache = new RobotsCrawlDelayCache({ fetcher: robots.fetcher, now: () => clock.now() });
        const url = 'https://a.com/x';
        expect(cache.lastGood(url)).toBeUndefined();
        await cache.get(url);
        expect(cache.lastGood(url)).toMatchObject({ kind: 'crawlDelay', delayMs: 2_000 });

        clock.advance(DAY);
        await expect(cache.get(url)).resolves.toEqual({ kind: 'none', reason: 'server-error', status: 503 });
        await expect(cache.get(url)).resolves.toMatchObject({ reason: 'server-error' });
        await expect(cache.get(url)).resolves.toEqual({ kind: 'none', reason: 'unreachable' });
        expect(robots.reads).toHaveLength(4);
        expect(cache.peek(url)).toBeUndefined();
        expect(cache.lastGood(url)).toMatchObject({ kind: 'crawlDelay', delayMs: 2_000 });
    });
});

describe('a robots.txt that answers 5xx or 429, or not at all', () => {
    test('503: the origin is paused through growing backoffs, nothing is sent, robots.txt is read after each; its file then applies', async () => {
        const robots = scripted([answer(503), answer(503), file('User-agent: *\nCrawl-delay: 1\n')]);
        // The steps of the plain exponential backoff (2, 4 s); adaptive pacing (the default) starts at 1 s.
        const { manager, clock } = setup(robots, { rampup: false });
        await manager.addRequest({ url: 'https://a.com/1' });
        await manager.addRequest({ url: 'https://a.com/2' });
        await settle();
        expect(robots.reads).toHaveLength(1);
        expect(snap(manager, 'a.com')).toMatchObject({ backingOff: true });

        // The first backoff (2 s): nothing goes out, and no read either.
        clock.advance(1_999);
        expect(await manager.fetchNextRequest()).toBeNull();
        expect(robots.reads).toHaveLength(1);
        clock.advance(1);
        expect(await manager.fetchNextRequest()).toBeNull();
        await settle();
        expect(robots.reads.map((r) => r.at - T0)).toEqual([0, 2_000]);

        // The second failure doubles the wait (4 s).
        clock.advance(3_999);
        expect(await manager.fetchNextRequest()).toBeNull();
        expect(robots.reads).toHaveLength(2);
        clock.advance(1);
        expect(await manager.fetchNextRequest()).toBeNull();
        await settle();
        expect(robots.reads.map((r) => r.at - T0)).toEqual([0, 2_000, 6_000]);
        // The file's delay applies; the failed reads were not refusals of pages: no pacing raised, none counted.
        expect(snap(manager, 'a.com')).toMatchObject({
            crawlDelayMs: 1_000,
            penaltyMs: 0,
            intervalMs: 1_000,
            refusals: 0,
        });

        // The read itself took a window of the key: the first page follows one crawl delay later.
        clock.advance(999);
        expect(await manager.fetchNextRequest()).toBeNull();
        clock.advance(1);
        const first = await manager.fetchNextRequest();
        expect(first?.url).toBe('https://a.com/1');
        // Waiting cost no retry.
        expect(first?.retryCount).toBe(0);
    });

    test("429 and a 503's Retry-After: the next read waits at least as long as the answer asked", async () => {
        const robots = scripted([
            answer(429, { 'retry-after': '7' }),
            answer(503, { 'Retry-After': '30' }),
            file('User-agent: *\n'),
        ]);
        const { manager, clock } = setup(robots);
        await manager.addRequest({ url: 'https://a.com/1' });
        await settle();
        clock.advance(6_999);
        expect(await manager.fetchNextRequest()).toBeNull();
        clock.advance(1);
        expect(await manager.fetchNextRequest()).toBeNull();
        await settle();
        clock.advance(29_999);
        expect(await manager.fetchNextRequest()).toBeNull();
        clock.advance(1);
        expect(await manager.fetchNextRequest()).toBeNull();
        await settle();
        expect(robots.reads.map((r) => r.at - T0)).toEqual([0, 7_000, 37_000]);
        clock.set((await nextReadyAt(manager))!);
        expect(await manager.fetchNextRequest()).not.toBeNull();
    });

    test('a 404 means no rules at once (RFC 9309 §2.3.1.3): no pause, no second read', async () => {
        const robots = scripted([answer(404)]);
        const { manager } = setup(robots);
        await manager.addRequest({ url: 'https://a.com/1' });
        await settle();
        expect(await manager.fetchNextRequest()).not.toBeNull();
        expect(robots.reads).toHaveLength(1);
        expect(snap(manager, 'a.com')).toMatchObject({ backingOff: false });
    });

    test('after maxRobotsRetries the origin is disallowed: its requests go out at once and fail unsent with RobotsUnreachableError; after the period robots.txt is read again', async () => {
        const robots = scripted([NO_ANSWER]);
        const { manager, clock, beforeSending } = setup(robots, {
            maxRobotsRetries: 1,
            robotsUnreachableDisallowSecs: 600,
            delaySecs: 30,
        });
        for (let i = 1; i <= 3; i++) await manager.addRequest({ url: `https://a.com/${i}` });
        await settle();
        // The read took a window of the key like a request: the retry waits for delaySecs too.
        clock.advance(29_999);
        expect(await manager.fetchNextRequest()).toBeNull();
        clock.advance(1);
        expect(await manager.fetchNextRequest()).toBeNull();
        await settle();
        expect(robots.reads).toHaveLength(2);

        // Handed out at once, one slot at a time, without waiting for delaySecs: they are to fail.
        const failures: unknown[] = [];
        for (let i = 0; i < 3; i++) {
            const request = (await manager.fetchNextRequest())!;
            expect(request).not.toBeNull();
            const error = await beforeSending(request).catch((e: unknown) => e);
            failures.push(error);
            // Crawlee marks a failed request handled: its slot is free again.
            await manager.markRequestHandled(request);
        }
        expect(robots.reads).toHaveLength(2);
        for (const error of failures) {
            expect(error).toBeInstanceOf(RobotsUnreachableError);
            expect(error).toMatchObject({
                code: 'ERR_THROTTLING_ROBOTS_UNREACHABLE',
                origin: 'https://a.com',
                attempts: 2,
                disallowedUntil: T0 + 30_000 + 600_000,
            });
            expect((error as Error).message).toMatch(
                /robots\.txt of https:\/\/a\.com did not answer \(timeout or network error\) \(2 reads in a row\); RFC 9309 says to assume complete disallow/,
            );
        }

        // Within the period a new request fails too, without a read.
        clock.advance(599_000);
        await manager.addRequest({ url: 'https://a.com/4' });
        await settle();
        const inPeriod = (await manager.fetchNextRequest())!;
        await expect(beforeSending(inPeriod)).rejects.toBeInstanceOf(RobotsUnreachableError);
        await manager.markRequestHandled(inPeriod);
        expect(robots.reads).toHaveLength(2);

        // After it, robots.txt is read again; a good answer lifts the block.
        clock.advance(1_000);
        robots.from([file('User-agent: *\n')]);
        await manager.addRequest({ url: 'https://a.com/5' });
        await settle();
        // The read waits for the key's pace (delaySecs after the last request handed out).
        expect(robots.reads).toHaveLength(2);
        clock.set((await nextReadyAt(manager))!);
        expect(await manager.fetchNextRequest()).toBeNull();
        await settle();
        expect(robots.reads).toHaveLength(3);
        clock.set((await nextReadyAt(manager))!);
        const after = (await manager.fetchNextRequest())!;
        expect(after.url).toBe('https://a.com/5');
        await expect(beforeSending(after)).resolves.toBeUndefined();
    });

    test('a re-read (24 h on) that stays unreachable keeps the delay of the last good read (RFC 9309 §2.4); nothing fails', async () => {
        const robots = scripted([file('User-agent: *\nCrawl-delay: 2\n')]);
        const { manager, clock, beforeSending } = setup(robots, { maxRobotsRetries: 1 });
        await manager.addRequest({ url: 'https://a.com/1' });
        await manager.addRequest({ url: 'https://a.com/2' });
        await settle();
        clock.advance(2_000);
        const first = (await manager.fetchNextRequest())!;
        await manager.markRequestHandled(first);

        robots.from([answer(500)]);
        clock.advance(DAY);
        expect(await manager.fetchNextRequest()).toBeNull();
        await settle();
        clock.advance(2_000);
        expect(await manager.fetchNextRequest()).toBeNull();
        await settle();
        expect(robots.reads).toHaveLength(3);
        expect(snap(manager, 'a.com')).toMatchObject({ crawlDelayMs: 2_000 });
        clock.advance(2_000);
        const second = (await manager.fetchNextRequest())!;
        expect(second.url).toBe('https://a.com/2');
        await expect(beforeSending(second)).resolves.toBeUndefined();
    });

    test("defaults: a robots.txt that never answers spends the domain's error budget (5): its requests fail with DomainUnreachableError", async () => {
        const robots = scripted([NO_ANSWER]);
        const { manager, clock, beforeSending } = setup(robots);
        await manager.addRequest({ url: 'https://a.com/1' });
        await settle();
        for (const wait of [2_000, 4_000, 8_000, 16_000]) {
            clock.advance(wait);
            expect(await manager.fetchNextRequest()).toBeNull();
            await settle();
        }
        expect(robots.reads.map((r) => r.at - T0)).toEqual([0, 2_000, 6_000, 14_000, 30_000]);
        expect(snap(manager, 'a.com')).toMatchObject({ consecutiveErrors: 5 });
        // Handed out at once, to fail unsent: the host is down.
        const request = (await manager.fetchNextRequest())!;
        await expect(beforeSending(request)).rejects.toMatchObject({
            name: 'DomainUnreachableError',
            consecutiveErrors: 5,
        });
        expect(robots.reads).toHaveLength(5);
    });

    test("a robots.txt answer (even a 503) ends a run of network errors in the domain's error budget", async () => {
        const robots = scripted([NO_ANSWER, answer(503), NO_ANSWER, file('User-agent: *\n')]);
        const { manager, clock } = setup(robots);
        await manager.addRequest({ url: 'https://a.com/1' });
        await settle();
        expect(snap(manager, 'a.com')).toMatchObject({ consecutiveErrors: 1 });
        clock.advance(2_000);
        await manager.fetchNextRequest();
        await settle();
        expect(snap(manager, 'a.com')).toMatchObject({ consecutiveErrors: 0 });
        clock.advance(4_000);
        await manager.fetchNextRequest();
        await settle();
        expect(snap(manager, 'a.com')).toMatchObject({ consecutiveErrors: 1 });
    });

    test('robotsUnreachableDisallowSecs: 0 crawls the origin without rules once the retries are spent', async () => {
        const robots = scripted([answer(502)]);
        const { manager, clock, beforeSending } = setup(robots, {
            maxRobotsRetries: 2,
            robotsUnreachableDisallowSecs: 0,
        });
        await manager.addRequest({ url: 'https://a.com/1' });
        await settle();
        for (const wait of [2_000, 4_000]) {
            clock.advance(wait);
            expect(await manager.fetchNextRequest()).toBeNull();
            await settle();
        }
        expect(robots.reads).toHaveLength(3);
        clock.set((await nextReadyAt(manager))!);
        const request = (await manager.fetchNextRequest())!;
        await expect(beforeSending(request)).resolves.toBeUndefined();
    });

    test('maxRobotsRetries: 0 disallows on the first failed read', async () => {
        const robots = scripted([answer(503)]);
        const { manager, beforeSending } = setup(robots, { maxRobotsRetries: 0 });
        await manager.addRequest({ url: 'https://a.com/1' });
        await settle();
        const request = (await manager.fetchNextRequest())!;
        await expect(beforeSending(request)).rejects.toMatchObject({ attempts: 1, reason: 'answered 503' });
        expect(robots.reads).toHaveLength(1);
    });

    test.each([
        ['an hour', 3_600],
        ['two days (longer than the 24 h a robots.txt read is kept)', 2 * 86_400],
    ])(
        'robotsUnreachableDisallowSecs is the length of the block, not the robots.txt re-read period: %s',
        async (_name, disallowSecs) => {
            const robots = scripted([answer(503)]);
            const { manager, clock, beforeSending } = setup(robots, {
                maxRobotsRetries: 0,
                robotsUnreachableDisallowSecs: disallowSecs,
            });
            const failsUnsent = async (n: number) => {
                await manager.addRequest({ url: `https://a.com/${n}` });
                await settle();
                const request = (await manager.fetchNextRequest())!;
                const error = await beforeSending(request).catch((e: unknown) => e);
                await manager.markRequestHandled(request);
                return error;
            };
            expect(await failsUnsent(1)).toMatchObject({ disallowedUntil: T0 + disallowSecs * 1000 });
            // Until the block ends its requests fail without a read, past the 24 h re-read period too.
            clock.set(T0 + disallowSecs * 1000 - 1);
            expect(await failsUnsent(2)).toBeInstanceOf(RobotsUnreachableError);
            expect(robots.reads).toHaveLength(1);
            // Then robots.txt is read again (as early as an hour on, not after 24 h), and its file applies.
            clock.set(T0 + disallowSecs * 1000);
            robots.from([file('User-agent: *\n')]);
            await manager.addRequest({ url: 'https://a.com/3' });
            await settle();
            clock.set((await nextReadyAt(manager))!);
            const after = (await manager.fetchNextRequest())!;
            expect(robots.reads).toHaveLength(2);
            expect(after.url).toBe('https://a.com/3');
            await expect(beforeSending(after)).resolves.toBeUndefined();
        },
    );

    test("under registrableDomain a blocked origin fails alone: another origin of the key goes on at the key's pace", async () => {
        const robots = scripted([]);
        const fetcher: RobotsFetcher = async (url, options) => {
            if (url.startsWith('https://down.example.com')) return answer(503);
            return robots.fetcher(url, options);
        };
        const clock = new ManualClock(T0);
        const manager = new ThrottlingRequestManager(
            {
                domains: 'all',
                queueLayout: 'perDomain',
                clock,
                throttleBy: 'registrableDomain',
                maxRobotsRetries: 0,
                robotsFetcher: fetcher,
            },
            memoryConfig(),
        );
        robots.from([file('User-agent: *\n')]);
        const crawler: AttachableCrawler = { requestQueue: manager, preNavigationHooks: [], postNavigationHooks: [] };
        manager.attach(crawler);
        const beforeSending = async (request: Request) =>
            crawler.preNavigationHooks![0]({ request } as NavigationContext);
        await manager.addRequest({ url: 'https://down.example.com/1' });
        await manager.addRequest({ url: 'https://up.example.com/1' });
        for (let i = 0; i < 4; i++) {
            await settle();
            await manager.fetchNextRequest().then(async (r) => r && manager.reclaimRequest(r, { forefront: true }));
        }
        await settle();
        const outcomes: Record<string, string> = {};
        for (let i = 0; i < 2; i++) {
            const request = (await manager.fetchNextRequest())!;
            expect(request).not.toBeNull();
            outcomes[new URL(request.url).hostname] = await beforeSending(request).then(
                () => 'sent',
                (e: Error) => e.name,
            );
            await manager.markRequestHandled(request);
        }
        expect(outcomes).toEqual({ 'down.example.com': 'RobotsUnreachableError', 'up.example.com': 'sent' });
    });

    test('a gate answering retry for ever is bounded by maxRetries: then the origin counts as checked', async () => {
        const clock = new ManualClock(T0);
        const { manager, port } = withPort(
            () => new ThrottlingRequestManager({ domains: 'all', queueLayout: 'perDomain', clock }, memoryConfig()),
        );
        const seen: number[] = [];
        port.setDomainGate(
            async (_key, _url, { retriesLeft }) => {
                seen.push(retriesLeft);
                return 'retry';
            },
            { maxRetries: 3 },
        );
        await manager.addRequest({ url: 'https://a.com/1' });
        let request: Request | null = null;
        for (let i = 0; i < 10 && !request; i++) {
            await settle();
            request = await manager.fetchNextRequest();
        }
        expect(request?.url).toBe('https://a.com/1');
        expect(seen).toEqual([3, 2, 1, 0]);
    });

    test('the options are validated', () => {
        const make = (o: Partial<ThrottlingRequestManagerOptions>) => () =>
            new ThrottlingRequestManager({ domains: 'all', queueLayout: 'perDomain', ...o });
        expect(make({ maxRobotsRetries: -1 })).toThrow(
            '`maxRobotsRetries`: maxRobotsRetries must be a whole number >= 0',
        );
        expect(make({ maxRobotsRetries: 1.5 })).toThrow('maxRobotsRetries must be a whole number >= 0');
        expect(make({ maxRobotsRetries: '3' as never })).toThrow('maxRobotsRetries must be a whole number >= 0');
        expect(make({ robotsUnreachableDisallowSecs: -1 })).toThrow(
            '`robotsUnreachableDisallowSecs`: robotsUnreachableDisallowSecs must be >= 0',
        );
        expect(new ThrottlingRequestManager({ domains: 'all', queueLayout: 'perDomain' }).options).toMatchObject({
            maxRobotsRetries: 5,
            robotsUnreachableDisallowMs: DAY,
        });
    });
});
