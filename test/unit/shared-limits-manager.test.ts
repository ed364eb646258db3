import type { Request } from '@crawlee/core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { FileDomainClock, ManualClock, ThrottlingRequestManager } from 'crawlee-throttling';
import { RedisDomainClock } from 'crawlee-throttling/redis';
import type { SharedDomainClock, ThrottlingRequestManagerOptions } from 'crawlee-throttling';
import { REDIS_URL, describeRedis } from '../helpers/redis';
import { handoutTracker } from '../helpers/handout-tracker';
import { redisClockHosts } from '../helpers/redis-clock-hosts';
import { memoryConfig } from '../helpers/storage';

const HOST = 'shop.example';
/** What a test leaves in flight is finished after it (before its store goes), so no slot renewal outlives it. */
const handouts = handoutTracker();
const url = (p: string) => `https://${HOST}/${p}`;
const refused = { statusCode: 429, headers: {} };

/** Two (or more) managers with their own storage, as separate crawler processes, sharing one store. */
interface Processes {
    make(options?: Partial<ThrottlingRequestManagerOptions>): ThrottlingRequestManager;
    /** How many shared slots of the key are held now. */
    slotsHeld(key: string): Promise<number>;
    /** The shared backoff level of the key. */
    level(key: string): Promise<number>;
    /** Lets `ms` pass (the manual clock moves; with Redis, real time passes). */
    pass(ms: number): Promise<void>;
}

async function fill(manager: ThrottlingRequestManager, prefix: string, count: number): Promise<void> {
    for (let i = 0; i < count; i++) await manager.addRequest({ url: url(`${prefix}/${i}`) });
}

async function fetchAll(manager: ThrottlingRequestManager): Promise<Request[]> {
    const got: Request[] = [];
    for (let r = await manager.fetchNextRequest(); r; r = await manager.fetchNextRequest()) got.push(r);
    return got;
}

/** A refused request, as the crawler reports it: the response, then the reclaim of the free retry. */
async function refuse(manager: ThrottlingRequestManager, request: Request): Promise<void> {
    await expect(manager.handleResponse({ request }, refused)).rejects.toThrow(/429/);
    await manager.reclaimRequest(request);
}

/**
 * The rules of shared limits, for any store that shares them: run with FileDomainClock on a manual
 * clock and with RedisDomainClock on the real one (none of these rules needs time to pass).
 */
function sharedLimitRules(setup: () => Processes) {
    let p: Processes;
    beforeEach(() => {
        p = setup();
    });

    test('concurrency: 2 is 2 across processes, and a completion in one frees a slot for the other', async () => {
        const [a, b] = [p.make({ concurrency: 2 }), p.make({ concurrency: 2 })];
        await fill(a, 'a', 3);
        await fill(b, 'b', 3);
        const fromA = await fetchAll(a);
        expect(fromA).toHaveLength(2);
        // B has two slots of its own, but the key's two are taken.
        expect(await b.fetchNextRequest()).toBeNull();
        expect(await p.slotsHeld(HOST)).toBe(2);

        await a.markRequestHandled(fromA[0]);
        // B asks the shared clock again 100 ms after it said no.
        await p.pass(100);
        const fromB = await b.fetchNextRequest();
        expect(fromB?.url).toMatch(/\/b\//);
        expect(await a.fetchNextRequest()).toBeNull();
        // A reclaim (a failed attempt to be retried) frees its slot too.
        await b.reclaimRequest(fromB!);
        await p.pass(100);
        expect((await a.fetchNextRequest())?.url).toMatch(/\/a\//);
        expect(await p.slotsHeld(HOST)).toBe(2);
    });

    test('a dispatch undone before anything is sent gives its shared slot back', async () => {
        // One interval of 1 s: B's slot is granted, then the window is refused, and the slot must go back.
        const [a, b] = [p.make({ concurrency: 2, delaySecs: 1 }), p.make({ concurrency: 2, delaySecs: 1 })];
        await fill(a, 'a', 1);
        await fill(b, 'b', 1);
        expect(await a.fetchNextRequest()).not.toBeNull();
        expect(await b.fetchNextRequest()).toBeNull();
        expect(await p.slotsHeld(HOST)).toBe(1);
    });

    test('a quota is spent once for all processes', async () => {
        const options = { concurrency: 10, scopes: { [HOST]: { quota: 3, quotaWindowSecs: 3_600 } } };
        const [a, b] = [p.make(options), p.make(options)];
        await fill(a, 'a', 2);
        await fill(b, 'b', 3);
        expect(await fetchAll(a)).toHaveLength(2);
        const fromB = await fetchAll(b);
        expect(fromB).toHaveLength(1);
        // The head request is back in its queue, held until the window ends: none is lost.
        expect(await b.checkReadiness()).toMatchObject({ kind: 'waiting' });
        expect(await b.isFinished()).toBe(false);
    });

    test('a reported cost corrects the shared spend too', async () => {
        const options = { concurrency: 10, scopes: { [HOST]: { quota: 2, quotaWindowSecs: 3_600 } } };
        const [a, b] = [p.make(options), p.make(options)];
        await fill(a, 'a', 2);
        await fill(b, 'b', 1);
        const fromA = await fetchAll(a);
        expect(fromA).toHaveLength(2);
        // The first request turned out free: room for B's. (A process the quota already refused waits
        // for the next window: it cannot know of the correction.)
        a.reportCost(fromA[0], 0);
        expect((await b.fetchNextRequest())?.url).toMatch(/\/b\//);
    });

    test('refusals in one burst escalate the shared backoff once, whichever processes saw them', async () => {
        const [a, b] = [p.make({ concurrency: 2 }), p.make({ concurrency: 2 })];
        await fill(a, 'a', 1);
        await fill(b, 'b', 1);
        const fromA = await a.fetchNextRequest();
        const fromB = await b.fetchNextRequest();
        await refuse(a, fromA!);
        await refuse(b, fromB!);
        await new Promise((resolve) => setImmediate(resolve));
        expect(await p.level(HOST)).toBe(1);
    });
}

describe('shared limits through FileDomainClock (manual clock)', () => {
    let dir: string;
    let clock: ManualClock;
    afterEach(() => handouts.finishAll());
    const processes = (): Processes => {
        const store = () => new FileDomainClock(dir, { clock });
        return {
            make: (options = {}) =>
                handouts.track(
                    new ThrottlingRequestManager(
                        { domains: 'all', clock, respectCrawlDelay: false, sharedClock: store(), ...options },
                        memoryConfig(),
                    ),
                ),
            slotsHeld: async (key) =>
                Object.values(store().readRecord(key).slots).filter((expires) => expires > clock.now()).length,
            level: async (key) => store().readRecord(key).level,
            pass: async (ms) => void clock.advance(ms),
        };
    };
    beforeEach(() => {
        dir = mkdtempSync(join(tmpdir(), 'shared-limits-'));
        clock = new ManualClock();
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    sharedLimitRules(processes);

    test('the next burst, seen by a process that missed the first, takes the shared level: a longer backoff', async () => {
        const p = processes();
        // The steps of the plain exponential backoff (2, 4 s); adaptive pacing (the default) starts at 1 s.
        const [a, b] = [p.make({ concurrency: 2, rampup: false }), p.make({ concurrency: 2, rampup: false })];
        await fill(a, 'a', 1);
        await fill(b, 'b', 1);
        await refuse(a, (await a.fetchNextRequest())!);
        // Past A's 2 s backoff, within its quiet period: B's first refusal is the key's second burst.
        clock.advance(2_000);
        const t = clock.now();
        await refuse(b, (await b.fetchNextRequest())!);
        const snapshot = b.snapshot().find((s) => s.domain === HOST)!;
        // B alone would wait its own first step (2 s); the key's level 2 says 4 s.
        expect(snapshot.backoffUntil).toBe(t + 4_000);
        await expect(p.level(HOST)).resolves.toBe(2);
    });

    test('without shared limits in the store, each process keeps its own (what the rules above change)', async () => {
        const plain = (): SharedDomainClock => {
            const file = new FileDomainClock(dir, { clock });
            return {
                reserve: (k, n, at) => file.reserve(k, n, at),
                extend: (k, c) => file.extend(k, c),
                settle: (k, l, at) => file.settle(k, l, at),
            };
        };
        const make = () =>
            new ThrottlingRequestManager(
                { domains: 'all', clock, respectCrawlDelay: false, concurrency: 2, sharedClock: plain() },
                memoryConfig(),
            );
        const [a, b] = [make(), make()];
        await fill(a, 'a', 2);
        await fill(b, 'b', 2);
        expect(await fetchAll(a)).toHaveLength(2);
        expect(await fetchAll(b)).toHaveLength(2);
    });
});

describeRedis('shared limits through RedisDomainClock', () => {
    afterEach(() => handouts.finishAll());
    const hosts = redisClockHosts('manager-limits');

    sharedLimitRules(() => {
        const store = () => hosts.track(new RedisDomainClock({ url: REDIS_URL, keyPrefix: hosts.prefix }));
        const reader = store();
        return {
            make: (options = {}) =>
                handouts.track(
                    new ThrottlingRequestManager(
                        { domains: 'all', respectCrawlDelay: false, sharedClock: store(), ...options },
                        memoryConfig(),
                    ),
                ),
            slotsHeld: async (key) => hosts.redis.zcount(reader.keysOf(key).slots, `(${Date.now()}`, '+inf'),
            level: async (key) => (await reader.read(key)).level,
            pass: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
        };
    });
});
