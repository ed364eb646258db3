/**
 * Each defect a review confirmed, driven with the defaults a user has and a
 * fault injected once. Every test here failed on the code before its fix.
 */
import type { Configuration, IRequestManager, Request } from '@crawlee/core';

import type { SharedDomainClock, ThrottlingRequestManagerOptions } from 'crawlee-throttling';
import type { MaybePromise, SharedReservation } from 'crawlee-throttling/types';
import { ManualClock, ThrottlingRequestManager } from 'crawlee-throttling';

import { InMemoryDomainStateStore } from '../../packages/throttling/src/pacing/domain-state-store';
import { resolvePolicy } from '../../packages/throttling/src/pacing/policy';
import { DomainQueue } from '../../packages/throttling/src/core/domain-queue';
import { SHARED_LEASE_MS, SharedClockSync } from '../../packages/throttling/src/shared-clock/shared-clock-sync';
import { SharedClockFailures } from '../../packages/throttling/src/shared-clock/shared-clock-failures';
import { MAX_TIMER_MS, WakeSignal } from '../../packages/throttling/src/readiness/wake-signal';
import { DomainRequestQueue } from '../../packages/throttling/src/queues/domain-request-queue';
import { memoryConfig } from '../helpers/storage';
import { nextReadyAt } from '../helpers/next-ready-at';

const T0 = 1_700_000_000_000;

function setup(options: Partial<ThrottlingRequestManagerOptions> = {}, config: Configuration = memoryConfig()) {
    const clock = new ManualClock(T0);
    const manager = new ThrottlingRequestManager({ domains: ['a.com'], clock, ...options }, config);
    return { clock, manager, config };
}

/** Opens domain queues whose named method throws once (the next call works). */
function failingOnce(method: 'markRequestHandled' | 'reclaimRequest' | 'fetchNextRequest') {
    let failures = 1;
    return async (name: string, opts: { config?: Configuration }): Promise<IRequestManager> => {
        const queue = await DomainRequestQueue.open(name, opts);
        const original = (queue[method] as (...args: unknown[]) => Promise<unknown>).bind(queue);
        (queue as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
            if (failures > 0) {
                failures -= 1;
                throw new Error(`injected ${method} failure`);
            }
            return original(...args);
        };
        return queue;
    };
}

const snap = (manager: ThrottlingRequestManager, domain: string) => manager.snapshot().find((s) => s.domain === domain);

describe('a queue call that throws once loses no slot', () => {
    test.each(['markRequestHandled', 'reclaimRequest'] as const)(
        'with concurrency 1, %s throwing once still frees the slot, and the retry completes once',
        async (method) => {
            const { manager } = setup({ requestManagerOpener: failingOnce(method) });
            await manager.addRequest({ url: 'https://a.com/1' });
            await manager.addRequest({ url: 'https://a.com/2' });
            const first = (await manager.fetchNextRequest())!;
            expect(first.url).toBe('https://a.com/1');
            const call = () =>
                method === 'markRequestHandled' ? manager.markRequestHandled(first) : manager.reclaimRequest(first);
            await expect(call()).rejects.toThrow(`injected ${method} failure`);
            expect(snap(manager, 'a.com')?.inFlight).toBe(0);
            // Crawlee retries the call; it reaches the same queue and frees nothing twice.
            await call();
            expect(snap(manager, 'a.com')?.inFlight).toBe(0);
            if (method === 'markRequestHandled') expect(snap(manager, 'a.com')?.handled).toBe(1);
            const next = await manager.fetchNextRequest();
            expect(next).not.toBeNull();
        },
    );

    test('a markRequestHandled retried while the timed-out first call still runs counts the request once', async () => {
        const { manager } = setup({ concurrency: 2 });
        await manager.addRequest({ url: 'https://a.com/1' });
        const request = (await manager.fetchNextRequest())!;
        await Promise.all([manager.markRequestHandled(request), manager.markRequestHandled(request)]);
        expect(snap(manager, 'a.com')).toMatchObject({ handled: 1, inFlight: 0 });
    });
});

describe('a shared clock that fails does not strand the domain (onSharedClockError)', () => {
    function flaky(failures: number, answerLater = false): SharedDomainClock & { calls: number } {
        const clock = {
            calls: 0,
            reserve: (): MaybePromise<SharedReservation> => {
                clock.calls += 1;
                if (failures-- > 0) {
                    if (answerLater) return Promise.reject(new Error('redis: connection closed'));
                    throw new Error('lock timeout');
                }
                return answerLater ? Promise.resolve({ granted: true as const }) : { granted: true as const };
            },
            extend: () => undefined,
            settle: () => undefined,
        };
        return clock;
    }

    test.each([false, true])(
        "'pause' (the default) holds the domain and asks again a second later (clock answers later: %s)",
        async (answerLater) => {
            const sharedClock = flaky(1, answerLater);
            const { manager, clock } = setup({ sharedClock });
            await manager.addRequest({ url: 'https://a.com/1' });
            expect(await manager.fetchNextRequest()).toBeNull();
            expect(snap(manager, 'a.com')).toMatchObject({ inFlight: 0, dispatched: 0, queued: 1 });
            expect(await manager.fetchNextRequest()).toBeNull();
            expect(await nextReadyAt(manager)).toBe(clock.now() + 1_000);
            clock.advance(1_000);
            expect((await manager.fetchNextRequest())?.url).toBe('https://a.com/1');
            expect(sharedClock.calls).toBe(2);
        },
    );

    test("'local' paces by this process alone while the clock fails", async () => {
        const sharedClock = flaky(10);
        const { manager, clock } = setup({ sharedClock, onSharedClockError: 'local', delaySecs: 0.5 });
        await manager.addRequest({ url: 'https://a.com/1' });
        await manager.addRequest({ url: 'https://a.com/2' });
        const first = await manager.fetchNextRequest();
        expect(first?.url).toBe('https://a.com/1');
        await manager.markRequestHandled(first!);
        expect(await manager.fetchNextRequest()).toBeNull();
        clock.advance(500);
        expect((await manager.fetchNextRequest())?.url).toBe('https://a.com/2');
    });

    test('a clock that answers later: the window is ours from the first moment, so two fetches never share it', async () => {
        let release!: () => void;
        const answered = new Promise<void>((resolve) => (release = resolve));
        const sharedClock: SharedDomainClock = {
            reserve: async () => {
                await answered;
                return { granted: true };
            },
            extend: async () => undefined,
            settle: async () => undefined,
        };
        const { manager } = setup({ sharedClock, delaySecs: 1 });
        await manager.addRequest({ url: 'https://a.com/1' });
        await manager.addRequest({ url: 'https://a.com/2' });
        const both = Promise.all([manager.fetchNextRequest(), manager.fetchNextRequest()]);
        release();
        const [a, b] = await both;
        expect([a?.url, b?.url].filter(Boolean)).toEqual(['https://a.com/1']);
    });

    test('onSharedClockError is validated', () => {
        expect(
            () =>
                new ThrottlingRequestManager({
                    domains: 'all',
                    queueLayout: 'perDomain',
                    onSharedClockError: 'retry' as never,
                }),
        ).toThrow(/onSharedClockError must be 'pause' or 'local'/);
    });
});

describe('restored clocks are capped', () => {
    test('a saved backoff 400 days ahead holds the domain no longer than maxDelaySecs', async () => {
        const config = memoryConfig();
        const { manager: first, clock } = setup({ maxDelaySecs: 60 }, config);
        await first.addRequest({ url: 'https://a.com/1' });
        first.recordPacingSignal({ reason: 'rateLimited', url: 'https://a.com/1', waitMs: 30_000 });
        await first.persistState();
        const { KeyValueStore } = await import('@crawlee/core');
        const store = await KeyValueStore.open(null, { config });
        const record = (await store.getValue('CRAWLEE_THROTTLED_DOMAINS')) as {
            states: Record<string, Record<string, number>>;
        };
        record.states['a.com'].backoffUntil = T0 + 400 * 86_400_000;
        record.states['a.com'].nextDispatchAt = T0 + 400 * 86_400_000;
        await store.setValue('CRAWLEE_THROTTLED_DOMAINS', record);

        const second = new ThrottlingRequestManager({ domains: ['a.com'], clock, maxDelaySecs: 60 }, config);
        await second.isEmpty();
        const state = snap(second, 'a.com')!;
        expect(state.backoffUntil).toBeLessThanOrEqual(T0 + 60_000);
        expect(state.nextDispatchAt).toBeLessThanOrEqual(T0 + 60_000);
        clock.advance(60_000);
        expect((await second.fetchNextRequest())?.url).toBe('https://a.com/1');
    });

    test('a wake-up further out than a Node timer can wait is armed in steps, never at once', async () => {
        const clock = new ManualClock(T0);
        const warnings: string[] = [];
        const onWarning = (w: Error) => warnings.push(w.name);
        process.on('warning', onWarning);
        let woken = 0;
        const signal = new WakeSignal(clock, () => T0 + 30 * 86_400_000);
        const unsubscribe = signal.subscribe(() => (woken += 1));
        try {
            signal.schedule();
            await new Promise((resolve) => setImmediate(resolve));
            await new Promise((resolve) => setImmediate(resolve));
            expect(warnings).not.toContain('TimeoutOverflowWarning');
            expect(woken).toBe(0);
            expect(MAX_TIMER_MS).toBe(2 ** 31 - 1);
        } finally {
            unsubscribe();
            process.off('warning', onWarning);
        }
    });
});

describe('what is saved comes back', () => {
    test('the rampup search survives a restart', async () => {
        const config = memoryConfig();
        const { manager: first, clock } = setup({ rampup: true }, config);
        await first.addRequest({ url: 'https://a.com/1' });
        const r = (await first.fetchNextRequest())!;
        first.recordPacingSignal({ reason: 'rateLimited', url: r.url });
        const saved = snap(first, 'a.com')!.rampup;
        expect(saved).toBeDefined();
        await first.persistState();
        const second = new ThrottlingRequestManager({ domains: ['a.com'], clock, rampup: true }, config);
        await second.isEmpty();
        expect(snap(second, 'a.com')?.rampup).toEqual(saved);
    });

    test('a smaller minCrawlDelaySecs on resume lowers the floor; a floor raised by a signal stays', async () => {
        const config = memoryConfig();
        const { manager: first, clock } = setup({ minCrawlDelaySecs: 2 }, config);
        await first.addRequest({ url: 'https://a.com/1' });
        await first.persistState();
        const second = new ThrottlingRequestManager({ domains: ['a.com'], clock, minCrawlDelaySecs: 0.5 }, config);
        await second.isEmpty();
        expect(second.floorIntervalMs).toBe(500);
        second.recordPacingSignal({ reason: 'minIntervalEverywhere', intervalMs: 800 });
        await second.persistState();
        const third = new ThrottlingRequestManager({ domains: ['a.com'], clock, minCrawlDelaySecs: 0.5 }, config);
        await third.isEmpty();
        expect(third.floorIntervalMs).toBe(800);
    });
});

describe('bounded state', () => {
    test('domains served unthrottled from inner get no pacing state', async () => {
        const { manager } = setup({ domains: 'all', queueLayout: 'perDomain', maxThrottledDomains: 1 });
        await manager.addRequest({ url: 'https://a.com/1' });
        const hosts = Array.from({ length: 200 }, (_, i) => `https://d${i}.org/x`);
        await manager.addRequestsBatched(hosts.slice(0, 1)).catch(() => undefined);
        const inner = await innerOf(manager);
        for (const url of hosts) await inner.addRequest({ url });
        const served: Request[] = [];
        for (let i = 0; i < 201; i++) {
            const request = await manager.fetchNextRequest();
            if (!request) break;
            served.push(request);
            await manager
                .handleResponse({ request }, { statusCode: i % 2 ? 200 : 429, headers: {} })
                .catch(() => undefined);
            manager.recordPacingSignal({ reason: 'rateLimited', url: request.url });
            await manager.markRequestHandled(request);
        }
        expect(served.length).toBeGreaterThan(150);
        expect(manager.snapshot().length).toBeLessThanOrEqual(2);
    });

    test('the persistState listener goes when the crawl ends, so the manager can be collected', async () => {
        const { manager, config } = setup();
        const events = config.getEventManager() as unknown as { events: { listenerCount(name: string): number } };
        const before = events.events.listenerCount('persistState');
        await manager.addRequest({ url: 'https://a.com/1' });
        expect(events.events.listenerCount('persistState')).toBe(before + 1);
        const request = (await manager.fetchNextRequest())!;
        await manager.markRequestHandled(request);
        expect(await manager.isFinished()).toBe(true);
        expect(events.events.listenerCount('persistState')).toBe(before);
    });
});

async function innerOf(manager: ThrottlingRequestManager): Promise<IRequestManager> {
    await manager.isEmpty();
    return manager.innerManager!;
}

describe('a lease whose end failed to reach the shared clock (a short outage)', () => {
    test('is ended again until it reaches the clock, so other processes do not wait out the lease', async () => {
        const settled: number[] = [];
        let failures = 2;
        const clock: SharedDomainClock = {
            reserve: () => ({ granted: true }),
            extend: () => undefined,
            settle: async (_key, leasedUntil) => {
                if (failures-- > 0) throw new Error('connection closed');
                settled.push(leasedUntil);
            },
        };
        // One request at a time: its reservation leases the shared clock until its response.
        const oneAtATime = resolvePolicy({}, { concurrency: 1 });
        const router = { policyOf: () => oneAtATime } as never;
        const states = new InMemoryDomainStateStore();
        states.update('a.com', () => undefined);
        const failing = new SharedClockFailures({
            mode: 'pause',
            warn: () => undefined,
            warnOnce: () => undefined,
            now: () => T0,
            retryMs: 5,
        });
        const sync = new SharedClockSync({
            shared: clock,
            states,
            router,
            entryOf: () => undefined,
            failures: failing,
        });
        const entry = new DomainQueue('a.com', 'throttled-a.com');
        expect(await sync.reserve(entry, { armedNextDispatchAt: T0 + 1_000 } as never, T0)).toBe(true);
        expect(sync.holdsLease(entry)).toBe(true);
        sync.settle(entry, T0);
        for (let i = 0; i < 50 && settled.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
        expect(settled).toEqual([T0 + SHARED_LEASE_MS]);
        expect(sync.holdsLease(entry)).toBe(false);
        expect(failures).toBe(-1);
    });
});
