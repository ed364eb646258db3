/**
 * Parity with Crawlee v4's names, so that moving to v4 needs no code change: readiness answers carry
 * `status` (v4's `RequestSourceState`), `recordPacingSignal` takes v4's `(url, signal)` form and a
 * `scope` (v4's `PacingScope`), and a `requestsFromUrl` source is warned about (upstream's "warns that
 * requestsFromUrl sources cannot be domain-routed"). Also the option errors a v4 user meets first.
 */
import { log } from '@crawlee/core';
import { ManualClock, ThrottlingOptionsError, ThrottlingRequestManager } from 'crawlee-throttling';
import type { ThrottlingRequestManagerOptions } from 'crawlee-throttling';

import { memoryConfig } from '../helpers/storage';
import { nextReadyAt } from '../helpers/next-ready-at';

function setup(options: Partial<ThrottlingRequestManagerOptions> = {}) {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const manager = new ThrottlingRequestManager(
        { domains: ['a.com'], clock, concurrency: 10, rampup: false, ...options },
        memoryConfig(),
    );
    return { manager, clock };
}

describe('parity: v4 readiness', () => {
    test('v4 readiness(): answers { status } through ready, waiting and finished (kind is the same value)', async () => {
        const { manager, clock } = setup({ minCrawlDelaySecs: 1 });
        expect(await manager.readiness()).toEqual({ status: 'finished', kind: 'finished' });
        await manager.addRequestsBatched(['https://a.com/1', 'https://a.com/2'], { waitForAllRequestsToBeAdded: true });
        expect((await manager.readiness()).status).toBe('ready');
        await manager.markRequestHandled((await manager.fetchNextRequest())!);
        const waiting = await manager.checkReadiness();
        expect(waiting).toMatchObject({ status: 'waiting', readyAt: clock.now() + 1_000 });
        expect(waiting.kind).toBe(waiting.status);
    });

    test('v4 stalled state carries a reason naming the domain', async () => {
        const { manager, clock } = setup({ maxDomainStallSecs: 2, baseDelaySecs: 1 });
        await manager.addRequest({ url: 'https://a.com/1' });
        for (let i = 0; i < 4; i++) {
            clock.set((await nextReadyAt(manager)) ?? clock.now());
            const r = (await manager.fetchNextRequest())!;
            manager.recordPacingSignal({ reason: 'rateLimited', url: r.url });
            await manager.reclaimRequest(r);
        }
        const stalled = await manager.readiness();
        expect(stalled).toMatchObject({ status: 'stalled', reason: expect.stringContaining('a.com') });
    });
});

describe('parity: v4 pacing signals', () => {
    test("v4's recordPacingSignal(url, signal) form backs the URL's domain off like ours", async () => {
        const { manager } = setup();
        expect(manager.recordPacingSignal('https://a.com/x', { reason: 'rateLimited', waitMs: 5_000 })).toBe(true);
        expect(manager.snapshot()[0]).toMatchObject({ domain: 'a.com', backingOff: true });
        expect(manager.recordPacingSignal('https://other.org/x', { reason: 'rateLimited' })).toBe(false);
        expect(
            manager.recordPacingSignal('https://a.com/', { reason: 'minInterval', intervalMs: 700, scope: 'hostname' }),
        ).toBe(true);
        expect(manager.snapshot()[0].crawlDelayMs).toBe(700);
    });

    test('a scope this manager groups by, or a narrower one it widens, is honoured', () => {
        const { manager } = setup({ domains: ['example.com'], throttleBy: 'registrableDomain' });
        expect(
            manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://www.example.com/', scope: 'hostname' }),
        ).toBe(true);
        expect(
            manager.recordPacingSignal({
                reason: 'rateLimited',
                url: 'https://api.example.com/',
                scope: 'registrableDomain',
            }),
        ).toBe(true);
        expect(manager.snapshot().find((s) => s.domain === 'example.com')?.backingOff).toBe(true);
    });

    test('a scope wider than the grouping throws rather than pacing only part of what it covers', () => {
        const { manager } = setup();
        expect(() =>
            manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://a.com/', scope: 'registrableDomain' }),
        ).toThrow(/registrableDomain.*throttleBy/s);
        expect(() =>
            manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://a.com/', scope: 'tenant-7' }),
        ).toThrow(ThrottlingOptionsError);
    });

    test('a scope naming a throttling key of ours backs that key off (an @named scope)', () => {
        const { manager } = setup({ scopes: { '@account': { concurrency: 1 } } });
        expect(manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://a.com/', scope: '@account' })).toBe(
            true,
        );
        expect(manager.snapshot().find((s) => s.domain === '@account')?.backingOff).toBe(true);
        expect(manager.snapshot().find((s) => s.domain === 'a.com')?.backingOff ?? false).toBe(false);
    });

    test('a floor for every domain matches nothing when no domain is throttled: false, and the floor is not raised', () => {
        const { manager } = setup({ domains: [] });
        expect(manager.recordPacingSignal({ reason: 'minIntervalEverywhere', intervalMs: 500 })).toBe(false);
        expect(manager.floorIntervalMs).toBe(0);
        const listed = setup().manager;
        expect(listed.recordPacingSignal({ reason: 'minIntervalEverywhere', intervalMs: 500 })).toBe(true);
        expect(listed.floorIntervalMs).toBe(500);
    });

    test('upstream "warns that requestsFromUrl sources cannot be domain-routed" (single and batched adds)', async () => {
        const warn = jest.spyOn(Object.getPrototypeOf(log), 'warningOnce').mockImplementation(() => undefined);
        try {
            const { manager } = setup();
            await manager.addRequest({ url: 'https://a.com/1' });
            expect(warn).not.toHaveBeenCalled();
            // The list is never fetched: the inner queue it goes to is stubbed to accept it.
            const inner = {
                fetchNextRequest: async () => null,
                addRequest: jest.fn(async () => ({})),
                addRequestsBatched: jest.fn(async () => ({
                    addedRequests: [],
                    waitForAllRequestsToBeAdded: Promise.resolve([]),
                })),
            };
            const { manager: single } = setup({ inner: inner as never });
            await single.addRequest({ requestsFromUrl: 'https://lists.example/urls.txt' } as never);
            expect(warn).toHaveBeenCalledTimes(1);
            expect(warn.mock.calls[0][0]).toMatch(/requestsFromUrl.*go to inner unthrottled/s);
            const { manager: batched } = setup({ inner: inner as never });
            await batched.addRequestsBatched([{ requestsFromUrl: 'https://lists.example/more.txt' } as never]);
            expect(warn).toHaveBeenCalledTimes(2);
            expect(inner.addRequestsBatched).toHaveBeenCalledTimes(1);
        } finally {
            warn.mockRestore();
        }
    });
});

describe('option errors name what the user set', () => {
    test('only maxDelaySecs set below the default base delay names maxDelaySecs and what is allowed', () => {
        const error = (() => {
            try {
                new ThrottlingRequestManager({ domains: ['a.com'], maxDelaySecs: 1 });
            } catch (e) {
                return e as Error;
            }
            throw new Error('no error');
        })();
        expect(error).toBeInstanceOf(ThrottlingOptionsError);
        expect(error.message).toMatch(/`maxDelaySecs` \(1\) must be at least baseDelaySecs/);
        expect(error.message).toMatch(/default is 2/);
        expect(error.message).not.toMatch(/`baseDelaySecs`/);
    });

    test('both set: the pair is named as before', () => {
        expect(() => new ThrottlingRequestManager({ domains: ['a.com'], baseDelaySecs: 5, maxDelaySecs: 3 })).toThrow(
            /`baseDelaySecs` \(5\) must not exceed `maxDelaySecs` \(3\)/,
        );
    });

    test("a bare '.' domain gets its own message, not the wildcard one", () => {
        const attempt = () => new ThrottlingRequestManager({ domains: ['.'] });
        expect(attempt).toThrow(ThrottlingOptionsError);
        expect(attempt).toThrow(/domains\[0\].*no label/s);
        expect(attempt).not.toThrow(/wildcard/);
        expect(() => new ThrottlingRequestManager({ domains: ['.example.com'] })).toThrow(/wildcard/);
    });
});
