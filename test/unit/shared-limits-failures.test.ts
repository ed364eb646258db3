import { log } from '@crawlee/core';
import type { Request } from '@crawlee/core';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { FileDomainClock, ManualClock, ThrottlingRequestManager } from 'crawlee-throttling';

import { InMemoryDomainStateStore } from '../../packages/throttling/src/pacing/domain-state-store';
import type { SharedDomainClock, ThrottlingRequestManagerOptions } from 'crawlee-throttling';
import { DomainQueue } from '../../packages/throttling/src/core/domain-queue';
import { SharedClockFailures } from '../../packages/throttling/src/shared-clock/shared-clock-failures';
import type { TimerHost } from '../../packages/throttling/src/shared-clock/shared-clock-failures';
import { SharedLimits, emptyHold } from '../../packages/throttling/src/shared-clock/shared-limits';
import { SharedRefusals } from '../../packages/throttling/src/shared-clock/shared-refusals';
import { memoryConfig } from '../helpers/storage';

const HOST = 'shop.example';

/** Timers that run when the test says so, on the manual clock. */
class ManualTimers implements TimerHost {
    private pending = new Map<number, { at: number; run: () => void }>();
    private next = 0;
    constructor(private readonly clock: ManualClock) {}
    set(run: () => void, ms: number): unknown {
        this.next += 1;
        this.pending.set(this.next, { at: this.clock.now() + ms, run });
        return this.next;
    }
    clear(handle: unknown): void {
        this.pending.delete(handle as number);
    }
    get size(): number {
        return this.pending.size;
    }
    /** Moves the clock by `ms`, running every timer due on the way. */
    async advance(ms: number): Promise<void> {
        const end = this.clock.now() + ms;
        for (;;) {
            const due = [...this.pending].filter(([, t]) => t.at <= end).sort((x, y) => x[1].at - y[1].at)[0];
            if (!due) break;
            this.pending.delete(due[0]);
            this.clock.set(Math.max(this.clock.now(), due[1].at));
            due[1].run();
            await new Promise((resolve) => setImmediate(resolve));
        }
        this.clock.set(end);
    }
}

let dir: string;
let clock: ManualClock;
beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'shared-failures-'));
    clock = new ManualClock();
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** `'pause'` failure handling on manual timers, its warnings collected; `retryMs` as given or the default. */
function pausingFailures(retryMs?: number) {
    const timers = new ManualTimers(clock);
    const warnings: string[] = [];
    const failures = new SharedClockFailures({
        mode: 'pause',
        warn: (m) => warnings.push(m),
        warnOnce: (m) => warnings.push(m),
        now: () => clock.now(),
        timers,
        ...(retryMs === undefined ? {} : { retryMs }),
    });
    return { timers, warnings, failures };
}

describe('SharedLimits: slot leases', () => {
    const setup = (shared: SharedDomainClock) => {
        const { timers, warnings, failures } = pausingFailures(50);
        const limits = new SharedLimits({
            shared,
            states: {} as never,
            router: {} as never,
            failures,
            leaseMs: 300,
            recheckMs: 100,
        });
        return { limits, timers, warnings, entry: new DomainQueue(HOST, `throttled-${HOST}`) };
    };

    test('a slot held past its lease by a long request is renewed, and freed at once on release', async () => {
        const store = new FileDomainClock(dir, { clock });
        const { limits, timers, entry } = setup(store);
        const hold = emptyHold();
        expect(limits.take(entry, [{ key: HOST, limit: 1 }], clock.now(), hold)).toBe(true);
        // Twice the lease: another process still finds the key's one slot taken.
        await timers.advance(600);
        expect(store.acquireSlot(HOST, 1, 300)).toMatchObject({ granted: false });
        limits.release(hold);
        expect(timers.size).toBe(0);
        expect(store.acquireSlot(HOST, 1, 300)).toMatchObject({ granted: true });
    });

    test('without renewals (a store without renewSlot) the slot runs out: what the renewal prevents', async () => {
        const file = new FileDomainClock(dir, { clock });
        const store: SharedDomainClock = {
            reserve: (k, n, at) => file.reserve(k, n, at),
            extend: (k, c) => file.extend(k, c),
            settle: (k, l, at) => file.settle(k, l, at),
            acquireSlot: (k, l, ms, now) => file.acquireSlot(k, l, ms, now),
            releaseSlot: (k, t) => file.releaseSlot(k, t),
        };
        const { limits, timers, entry } = setup(store);
        expect(limits.take(entry, [{ key: HOST, limit: 1 }], clock.now(), emptyHold())).toBe(true);
        await timers.advance(600);
        expect(file.acquireSlot(HOST, 1, 300)).toMatchObject({ granted: true });
    });

    test('a release that fails (a short outage) is sent again until the lease would have run out', async () => {
        const file = new FileDomainClock(dir, { clock });
        let failing = 2;
        const store: SharedDomainClock = {
            reserve: (k, n, at) => file.reserve(k, n, at),
            extend: (k, c) => file.extend(k, c),
            settle: (k, l, at) => file.settle(k, l, at),
            acquireSlot: (k, l, ms, now) => file.acquireSlot(k, l, ms, now),
            releaseSlot: async (k, t) => {
                if (failing-- > 0) throw new Error('connection closed');
                return file.releaseSlot(k, t);
            },
        };
        const { limits, timers, warnings, entry } = setup(store);
        const hold = emptyHold();
        limits.take(entry, [{ key: HOST, limit: 1 }], clock.now(), hold);
        limits.release(hold);
        await timers.advance(0);
        expect(file.acquireSlot(HOST, 1, 300)).toMatchObject({ granted: false });
        // Sent again every 50 ms (the retry pause): the third attempt gets through, long before the lease ends.
        await timers.advance(120);
        expect(failing).toBe(-1);
        expect(file.acquireSlot(HOST, 1, 300)).toMatchObject({ granted: true });
        expect(warnings.some((w) => /Could not free a shared slot of shop\.example/.test(w))).toBe(true);
    });

    test('renewals that keep failing stop once the lease has run out (they could only be told so)', async () => {
        const file = new FileDomainClock(dir, { clock });
        const store: SharedDomainClock = {
            reserve: (k, n, at) => file.reserve(k, n, at),
            extend: (k, c) => file.extend(k, c),
            settle: (k, l, at) => file.settle(k, l, at),
            acquireSlot: (k, l, ms, now) => file.acquireSlot(k, l, ms, now),
            releaseSlot: (k, t) => file.releaseSlot(k, t),
            renewSlot: () => {
                throw new Error('Redis is down');
            },
        };
        const { limits, timers, warnings, entry } = setup(store);
        limits.take(entry, [{ key: HOST, limit: 1 }], clock.now(), emptyHold());
        await timers.advance(200);
        expect(timers.size).toBe(1);
        await timers.advance(100);
        expect(timers.size).toBe(0);
        expect(warnings.filter((w) => /Could not renew a shared slot of shop\.example/.test(w)).length).toBeGreaterThan(
            0,
        );
    });

    test('a lease lost while its request was in flight is said once, and renewals stop', async () => {
        const store = new FileDomainClock(dir, { clock });
        const { limits, timers, warnings, entry } = setup(store);
        const hold = emptyHold();
        limits.take(entry, [{ key: HOST, limit: 1 }], clock.now(), hold);
        store.releaseSlot(HOST, hold.slots[0].token);
        await timers.advance(200);
        expect(timers.size).toBe(0);
        expect(warnings.filter((w) => /ran out while its request was in flight/.test(w))).toHaveLength(1);
    });
});

describe('a failing shared clock on the new paths (onSharedClockError)', () => {
    /** A FileDomainClock whose `method` throws the next `times` calls. */
    const flaky = (method: keyof FileDomainClock, times: number) => {
        const file = new FileDomainClock(dir, { clock });
        const failures = { left: times };
        const original = (file[method] as (...args: unknown[]) => unknown).bind(file);
        (file as unknown as Record<string, unknown>)[method] = (...args: unknown[]) => {
            if (failures.left-- > 0) throw new Error('Redis is down');
            return original(...args);
        };
        return { file, failures };
    };
    // Requests each manager handed out: finished after the test, so no slot renewal (a real, unref'd
    // timer) outlives it and logs into a later test's run.
    const handedOut: { m: ThrottlingRequestManager; requests: Request[] }[] = [];
    afterEach(async () => {
        for (const { m, requests } of handedOut.splice(0))
            for (const request of requests) await m.markRequestHandled(request).catch(() => undefined);
    });
    const manager = (sharedClock: SharedDomainClock, options: Partial<ThrottlingRequestManagerOptions> = {}) => {
        const m = new ThrottlingRequestManager(
            { domains: 'all', clock, respectCrawlDelay: false, concurrency: 2, sharedClock, ...options },
            memoryConfig(),
        );
        const requests: Request[] = [];
        const fetch = m.fetchNextRequest.bind(m);
        m.fetchNextRequest = async () => {
            const request = await fetch();
            if (request) requests.push(request);
            return request;
        };
        handedOut.push({ m, requests });
        return m;
    };
    const warnings = () => {
        const spies = [
            jest.spyOn(Object.getPrototypeOf(log), 'warning'),
            jest.spyOn(Object.getPrototypeOf(log), 'warningOnce'),
        ];
        return {
            lines: () => spies.flatMap((s) => s.mock.calls.map((c) => String(c[0]))),
            restore: () => spies.forEach((s) => s.mockRestore()),
        };
    };

    test.each([
        ['acquireSlot', {}],
        ['spendQuota', { scopes: { [HOST]: { quota: 5 } } }],
    ] as const)(
        "'pause': %s failing holds the domain a second, says why, and loses no request",
        async (method, options) => {
            const { file } = flaky(method, 1);
            const log = warnings();
            const m = manager(file, options);
            await m.addRequest({ url: `https://${HOST}/0` });
            expect(await m.fetchNextRequest()).toBeNull();
            expect(log.lines().some((l) => l.includes(`${HOST} (${method}: Error: Redis is down); holding it`))).toBe(
                true,
            );
            expect(await m.checkReadiness()).toMatchObject({ kind: 'waiting', readyAt: clock.now() + 1_000 });
            clock.advance(1_000);
            expect((await m.fetchNextRequest())?.url).toBe(`https://${HOST}/0`);
            log.restore();
        },
    );

    test.each([
        ['acquireSlot', {}],
        ['spendQuota', { scopes: { [HOST]: { quota: 5 } } }],
    ] as const)(
        "'local': %s failing lets the request go, paced by this process alone, with a warning",
        async (method, options) => {
            const { file } = flaky(method, 1);
            const log = warnings();
            const m = manager(file, { onSharedClockError: 'local', ...options });
            await m.addRequest({ url: `https://${HOST}/0` });
            expect((await m.fetchNextRequest())?.url).toBe(`https://${HOST}/0`);
            expect(log.lines().some((l) => /pacing by this process alone/.test(l))).toBe(true);
            log.restore();
        },
    );

    test("'pause': a refusal that cannot be recorded keeps this process's backoff and says why", async () => {
        const { file, failures } = flaky('recordRefusal', 1);
        const log = warnings();
        // A backoff shorter than the retry pause: nothing is sent again (the others would learn nothing).
        const m = manager(file, { baseDelaySecs: 0.5 });
        await m.addRequest({ url: `https://${HOST}/0` });
        const request = (await m.fetchNextRequest()) as Request;
        await expect(m.handleResponse({ request }, { statusCode: 429, headers: {} })).rejects.toThrow(/429/);
        expect(m.snapshot()[0].backoffUntil).toBe(clock.now() + 500);
        const line = `${HOST} (recordRefusal: Error: Redis is down); keeping this process's backoff (onSharedClockError: 'pause')`;
        expect(log.lines().some((l) => l.includes(line))).toBe(true);
        expect(failures.left).toBe(0);
        log.restore();
    });
});

describe('SharedRefusals: a refusal the store missed', () => {
    test("'pause': is sent again while this process's backoff runs, and then counts for every process", async () => {
        const file = new FileDomainClock(dir, { clock });
        let failing = 1;
        const store: SharedDomainClock = {
            reserve: (k, n, at) => file.reserve(k, n, at),
            extend: (k, c) => file.extend(k, c),
            settle: (k, l, at) => file.settle(k, l, at),
            recordRefusal: (k, policy, now) => {
                if (failing-- > 0) throw new Error('Redis is down');
                return file.recordRefusal(k, policy, now);
            },
        };
        const { timers, warnings, failures } = pausingFailures();
        const states = new InMemoryDomainStateStore();
        states.update(HOST, (s) => void s.pauseUntil(clock.now() + 2_000));
        const policy = { backoffMinDelayMs: 2_000, backoffMaxDelayMs: 60_000, backoffFactor: 2, rampup: undefined };
        const router = { policyOf: () => policy } as never;
        const refusals = new SharedRefusals({ shared: store, states, router, failures, changed: () => undefined });

        refusals.record(HOST, undefined, 2_000);
        expect(file.readRecord(HOST).level).toBe(0);
        expect(warnings[0]).toMatch(/keeping this process's backoff and telling the others again in 1000 ms/);
        await timers.advance(1_000);
        expect(file.readRecord(HOST)).toMatchObject({ level: 1, backoffUntil: clock.now() + 2_000 });
    });
});
