import type { Request } from '@crawlee/core';
import { RequestQueue } from '@crawlee/core';

import { ManualClock } from 'crawlee-throttling';
import { DomainState } from '../../packages/throttling/src/pacing/domain-state';
import type { DomainStateData } from '../../packages/throttling/src/pacing/domain-state';
import { adoptSavedState, restoreState } from '../../packages/throttling/src/pacing/domain-state-codec';
import { resolvePolicy } from '../../packages/throttling/src/pacing/policy';
import type { RestViews } from '../../packages/throttling/src/layout/at-rest';
import { isAtRest } from '../../packages/throttling/src/layout/at-rest';
import { FrontierWindow } from '../../packages/throttling/src/layout/frontier-window';
import type { LockProlonger } from '../../packages/throttling/src/layout/lock-keeper';
import { LockKeeper } from '../../packages/throttling/src/layout/lock-keeper';
import { lockProlongerOf } from '../../packages/throttling/src/layout/lock-keeper';
import { DomainQueue } from '../../packages/throttling/src/core/domain-queue';
import { OriginBooks } from '../../packages/throttling/src/robots/origin-books';
import { Scheduler } from '../../packages/throttling/src/scheduling/scheduler';
import { memoryConfig } from '../helpers/storage';

const LOCK_SECS = 60;

function keeper(prolong: LockProlonger | undefined) {
    const clock = new ManualClock();
    const lost: string[] = [];
    const warnings: string[] = [];
    const locks = new LockKeeper({
        clock,
        lockSecs: () => LOCK_SECS,
        prolonger: () => prolong,
        lost: (request) => lost.push(request.url),
        warn: (m) => warnings.push(m),
    });
    return { clock, locks, lost, warnings };
}

const request = (url: string) => ({ url, id: url.slice(-1) }) as Request;

describe('LockKeeper: the locks of windowed requests', () => {
    afterEach(() => jest.restoreAllMocks());

    test('a sweep extends only the locks with less than half a lock time left, from what the queue answers', async () => {
        const calls: string[] = [];
        const { clock, locks } = keeper(async (r, secs) => {
            calls.push(`${r.url}:${secs}`);
            return clock.now() + 2 * secs * 1000;
        });
        const entry = new DomainQueue('a.com', 'throttled-a.com');
        const old = request('https://a.com/1');
        locks.track(old, entry);
        clock.advance(20_000);
        locks.track(request('https://a.com/2'), entry);
        await locks.sweep();
        expect(calls).toEqual([]);
        clock.advance(11_000); // /1 has 29 s left, /2 has 49 s
        await locks.sweep();
        expect(calls).toEqual(['https://a.com/1:60']);
        // Its lock now ends where the queue said: not due again half a lock time later.
        clock.advance(31_000);
        await locks.sweep();
        expect(calls).toEqual(['https://a.com/1:60', 'https://a.com/2:60']);
        locks.clear();
    });

    test('a lock that cannot be extended is reported lost: the request leaves the window and is no longer kept', async () => {
        const clock = new ManualClock();
        const warnings: string[] = [];
        const window: FrontierWindow = new FrontierWindow(
            10,
            10,
            new LockKeeper({
                clock,
                lockSecs: () => LOCK_SECS,
                prolonger: () => async () => Promise.reject(new Error('Request with ID 1 has already been handled')),
                lost: (r, e) => window.drop(e, r),
                warn: (m) => warnings.push(m),
            }),
        );
        const locks = (window as unknown as { locks: LockKeeper }).locks;
        const entry = new DomainQueue('a.com', 'throttled-a.com');
        window.file(entry, request('https://a.com/1'));
        window.file(entry, request('https://a.com/2'));
        entry.addQueued(2);
        clock.advance(20_000);
        await locks.sweep();
        expect(window.count).toBe(2);
        clock.advance(11_000);
        await locks.sweep();
        expect([window.count, entry.queued, locks.size, window.line(entry)]).toEqual([0, 0, 0, []]);
        expect(warnings[0]).toMatch(/Lost the lock of https:\/\/a\.com\/1 .*already been handled/);
    });

    test('a request leaving the window gets a full lock time first; false when its lock is lost', async () => {
        let answer: 'ok' | 'fail' = 'ok';
        const calls: number[] = [];
        const { clock, locks } = keeper(async (_r, secs) => {
            calls.push(secs);
            if (answer === 'fail') throw new Error('lost');
            return clock.now() + secs * 1000;
        });
        const r = request('https://a.com/1');
        expect(await locks.refresh(r, clock.now() + LOCK_SECS * 1000)).toBe(true);
        expect(calls).toEqual([]);
        expect(await locks.refresh(r, clock.now() + 10_000)).toBe(true);
        expect(calls).toEqual([60]);
        answer = 'fail';
        expect(await locks.refresh(r, clock.now() + 10_000)).toBe(false);
    });

    test('without a way to extend locks (inner is no RequestQueue) nothing is swept and every request may leave', async () => {
        const { clock, locks } = keeper(undefined);
        const r = request('https://a.com/1');
        locks.track(r, new DomainQueue('a.com', 'throttled-a.com'));
        clock.advance(10 * LOCK_SECS * 1000);
        await locks.sweep();
        expect(locks.size).toBe(1);
        expect(await locks.refresh(r, 0)).toBe(true);
        locks.clear();
    });

    test("lockProlongerOf extends the lock in a Crawlee RequestQueue's storage, and fails once it is handled", async () => {
        const queue = await RequestQueue.open('prolong-test', { config: memoryConfig() });
        await queue.addRequest({ url: 'https://a.com/1' });
        const fetched = (await queue.fetchNextRequest())!;
        const prolong = lockProlongerOf(queue)!;
        const lockedUntil = async () =>
            (
                (await (queue.client as unknown as { getQueue(): Promise<Record<string, unknown>> }).getQueue()) as {
                    requests: Map<string, { get(): Promise<{ orderNo: number }> }>;
                }
            ).requests
                .get(fetched.id!)!
                .get()
                .then((r) => r.orderNo);
        const before = await lockedUntil();
        const until = await prolong(fetched, 60);
        expect(until).toBe(Math.abs(await lockedUntil()));
        expect(until - Math.abs(before)).toBe(60_000);
        await queue.markRequestHandled(fetched);
        await expect(prolong(fetched, 60)).rejects.toThrow(/already been handled/);
        expect(lockProlongerOf({} as never)).toBeUndefined();
    });
});

describe('isAtRest: when an idle domain may be forgotten', () => {
    const now = Date.UTC(2026, 0, 1);
    const policy = resolvePolicy({}, {});
    const quotaPolicy = resolvePolicy({}, { quota: 10, quotaWindowSecs: 60 });
    const state = () => new DomainState('a.com');
    // Gives a state the fields of a saved one (the fields no method sets directly).
    const saved = (s: DomainState, fields: Partial<DomainStateData>) =>
        adoptSavedState(s, restoreState({ domain: s.domain, ...fields })!, now, Number.POSITIVE_INFINITY);

    /** A domain and the owners of what else is kept of it: the window, the scheduler and the origin gate's books. */
    function domain() {
        const e = new DomainQueue('a.com', 'throttled-a.com');
        const window = new FrontierWindow(10, 10, keeper(undefined).locks);
        const scheduler = new Scheduler({
            readyAt: () => now + 1_000,
            slotBound: () => undefined,
            checksRunning: () => false,
        });
        const books = new OriginBooks();
        // The shared clock's leases, as `SharedClockSync.holdsLease` answers them.
        const leased = new Set<DomainQueue>();
        const views: RestViews = { window, scheduler, origins: books, shared: { holdsLease: (x) => leased.has(x) } };
        return { e, window, scheduler, books, views, leased };
    }
    type Domain = ReturnType<typeof domain>;
    const entry = () => domain();
    const atRest = (d: Domain, s: DomainState | undefined, p: typeof policy, at: number) =>
        isAtRest(d.e, d.views, s, p, at);

    test('a fresh domain with nothing waiting is at rest, with or without a state', () => {
        expect(atRest(entry(), undefined, policy, now)).toBe(true);
        expect(atRest(entry(), state(), policy, now)).toBe(true);
    });

    test.each<[string, (d: Domain, s: DomainState) => void]>([
        ['requests queued', (d) => d.e.addQueued()],
        ['requests in the window', (d) => d.window.file(d.e, request('https://a.com/1'))],
        [
            'filed in the scheduler',
            (d) => {
                d.e.addQueued();
                d.scheduler.touch(d.e, now);
                d.e.takeQueued();
            },
        ],
        ['an origin check running', (d) => (d.books.of(d.e).gatesPending = 1)],
        [
            'an origin check due',
            (d) => (d.books.of(d.e).checksDue ??= new Map()).set('https://a.com', 'https://a.com/'),
        ],
        ['a check retry pending', (d) => (d.books.of(d.e).retryPending ??= new Set()).add('https://a.com')],
        [
            'an origin check retried in a row',
            (d) => (d.books.of(d.e).retriedOrigins ??= new Map()).set('https://a.com', 1),
        ],
        [
            'an origin blocked (robots.txt unreachable)',
            (d) =>
                (d.books.of(d.e).blockedOrigins ??= new Map()).set('https://a.com', {
                    until: now + 1,
                    reason: 'x',
                    attempts: 2,
                }),
        ],
        ['a shared lease', (d) => d.leased.add(d.e)],
        ['held for another scope', (d) => d.e.holdUntil(now + 1)],
        ['its queue opening', (d) => (d.e.opening = Promise.resolve({} as never))],
        ['a request in flight', (_e, s) => s.dispatch(now, 0, policy)],
        ['its crawl-delay clock running', (_e, s) => s.holdDispatchUntil(now + 1)],
        ['backing off', (_e, s) => s.pauseUntil(now + 1)],
        ['its backoff step remembered', (_e, s) => saved(s, { decayAt: now + 1 })],
        ['raised pacing', (_e, s) => saved(s, { penaltyMs: 10_000, lastTriggerAt: now })],
        ['a run of refusals', (_e, s) => saved(s, { refusingSince: now - 1 })],
        ['network errors in a row', (_e, s) => s.noteNetworkError()],
        ['skipped for its crawl delay', (_e, s) => s.skipForCrawlDelay(120)],
        ['an announced pace', (_e, s) => saved(s, { announcedUntil: now + 1 })],
    ])('not at rest with %s', (_name, change) => {
        const d = entry();
        const s = state();
        change(d, s);
        expect(atRest(d, s, policy, now)).toBe(false);
    });

    test('a block on an origin that has ended leaves it at rest: met again, the origin is read again as for a fresh domain', () => {
        const d = entry();
        (d.books.of(d.e).blockedOrigins ??= new Map()).set('https://a.com', { until: now, reason: 'x', attempts: 2 });
        expect(atRest(d, state(), policy, now)).toBe(true);
        expect(atRest(d, state(), policy, now - 1)).toBe(false);
    });

    test('quota spent in the current window keeps it; in an earlier window it does not', () => {
        const s = state();
        s.spend(now, 1, quotaPolicy.quota);
        expect(atRest(entry(), s, quotaPolicy, now)).toBe(false);
        expect(atRest(entry(), s, quotaPolicy, now + 60_000)).toBe(true);
    });
});
