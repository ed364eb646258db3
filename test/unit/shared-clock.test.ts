import { RequestQueue } from '@crawlee/core';
import { existsSync, mkdtempSync, readdirSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

import { FileDomainClock, ManualClock, ThrottlingOptionsError, ThrottlingRequestManager } from 'crawlee-throttling';
import type { ThrottlingRequestManagerOptions } from 'crawlee-throttling';
import { decideReservation, decideSettlement } from '../../packages/throttling/src/core/shared-domain-clock';
import { handoutTracker } from '../helpers/handout-tracker';
import { memoryConfig } from '../helpers/storage';

const T0 = Date.UTC(2026, 0, 1);
let dir: string;

beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'shared-clock-'));
});
/** What a test leaves in flight is finished before its directory goes, so no slot renewal outlives it. */
const handouts = handoutTracker();
afterEach(() => handouts.finishAll());
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('decideReservation', () => {
    test('grants when both clocks have passed and arms the next window, never earlier than one already armed', () => {
        expect(decideReservation({ nextAt: 0, backoffUntil: 0 }, T0, T0 + 500)).toEqual({
            reservation: { granted: true },
            clocks: { nextAt: T0 + 500, backoffUntil: 0 },
        });
        expect(decideReservation({ nextAt: T0, backoffUntil: 0 }, T0, T0 - 10).clocks.nextAt).toBe(T0);
    });

    test('refuses while either clock runs, saying when both allow a dispatch', () => {
        expect(decideReservation({ nextAt: T0 + 300, backoffUntil: T0 + 900 }, T0, T0 + 500).reservation).toEqual({
            granted: false,
            notBefore: T0 + 900,
        });
        expect(decideReservation({ nextAt: T0 + 300, backoffUntil: 0 }, T0, T0 + 500).reservation).toEqual({
            granted: false,
            notBefore: T0 + 300,
        });
    });
});

describe('decideSettlement', () => {
    test('a lease still in place is replaced, earlier or later; one moved since only moves forward', () => {
        expect(decideSettlement({ nextAt: T0 + 30_000, backoffUntil: 5 }, T0 + 30_000, T0 + 700)).toEqual({
            nextAt: T0 + 700,
            backoffUntil: 5,
        });
        expect(decideSettlement({ nextAt: T0 + 40_000, backoffUntil: 0 }, T0 + 30_000, T0 + 700).nextAt).toBe(
            T0 + 40_000,
        );
    });
});

describe('FileDomainClock', () => {
    test('two instances on one directory share the clocks of a key, and only of that key', () => {
        const a = new FileDomainClock(dir);
        const b = new FileDomainClock(dir);
        expect(a.reserve('a.com', T0, T0 + 1_000)).toEqual({ granted: true });
        expect(b.reserve('a.com', T0 + 10, T0 + 1_010)).toEqual({ granted: false, notBefore: T0 + 1_000 });
        expect(b.reserve('b.com', T0 + 10, T0 + 1_010)).toEqual({ granted: true });
        expect(b.reserve('a.com', T0 + 1_000, T0 + 2_000)).toEqual({ granted: true });
        expect(a.read('a.com')).toEqual({ nextAt: T0 + 2_000, backoffUntil: 0 });
    });

    test('extend only moves clocks forward', () => {
        const clock = new FileDomainClock(dir);
        clock.extend('a.com', { backoffUntil: T0 + 5_000, nextAt: T0 + 100 });
        clock.extend('a.com', { backoffUntil: T0 + 1_000, nextAt: T0 + 50 });
        expect(clock.read('a.com')).toEqual({ nextAt: T0 + 100, backoffUntil: T0 + 5_000 });
        expect(clock.reserve('a.com', T0 + 4_999, T0 + 6_000)).toEqual({ granted: false, notBefore: T0 + 5_000 });
    });

    test('settle ends a lease that is still in place', () => {
        const clock = new FileDomainClock(dir);
        expect(clock.reserve('a.com', T0, T0 + 30_000)).toEqual({ granted: true });
        clock.settle('a.com', T0 + 30_000, T0 + 500);
        expect(clock.read('a.com').nextAt).toBe(T0 + 500);
    });

    test('a lock left by a dead process is broken once stale; a live one makes the call fail after lockTimeoutMs', () => {
        let now = Date.now();
        const ticking = { now: () => (now += 20) };
        const clock = new FileDomainClock(dir, { lockTimeoutMs: 200, staleLockMs: 10_000, clock: ticking });
        const lock = `${clock.fileOf('a.com')}.lock`;

        writeFileSync(lock, '');
        expect(() => clock.reserve('a.com', T0, T0 + 1)).toThrow(/lock of a\.com .* held for more than 200 ms/);
        expect(existsSync(lock)).toBe(true);

        const old = (Date.now() - 60_000) / 1000;
        utimesSync(lock, old, old);
        now = Date.now();
        expect(clock.reserve('a.com', T0, T0 + 1)).toEqual({ granted: true });
        expect(existsSync(lock)).toBe(false);
    });

    test('a file that does not parse holds no clocks, and the next write replaces it', () => {
        const clock = new FileDomainClock(dir);
        writeFileSync(clock.fileOf('a.com'), '{"nextAt": 12');
        expect(clock.read('a.com')).toEqual({ nextAt: 0, backoffUntil: 0 });
        expect(clock.reserve('a.com', T0, T0 + 100)).toEqual({ granted: true });
        expect(clock.read('a.com').nextAt).toBe(T0 + 100);
    });

    test('distinct keys never share a file, even on a case-insensitive filesystem; long keys are hashed', () => {
        const clock = new FileDomainClock(dir);
        const keys = [
            'a.com',
            'A.com',
            'a_2fb',
            'a/b',
            'api.example/v1/Search',
            'api.example/v1/search',
            '[::1]:8080',
            'x'.repeat(400),
        ];
        const names = keys.map((k) => basename(clock.fileOf(k)).toLowerCase());
        expect(new Set(names).size).toBe(keys.length);
        for (const name of names) expect(name).toMatch(/^[a-z0-9._-]+\.json$/);
        expect(basename(clock.fileOf('x'.repeat(400))).length).toBeLessThan(60);
        for (const k of keys) clock.reserve(k, T0, T0 + 1);
        expect(readdirSync(dir).filter((f) => f.endsWith('.json'))).toHaveLength(keys.length);
    });

    test('bad options are named', () => {
        expect(() => new FileDomainClock('')).toThrow(ThrottlingOptionsError);
        expect(() => new FileDomainClock(dir, { lockTimeoutMs: 0 })).toThrow(/lockTimeoutMs must be > 0/);
        expect(() => new FileDomainClock(dir, { staleLockMs: -1 })).toThrow(/staleLockMs must be > 0/);
    });
});

describe('ThrottlingRequestManager with a shared clock', () => {
    function twoProcesses(options: Partial<ThrottlingRequestManagerOptions> = {}) {
        const clock = new ManualClock(T0);
        // Two managers with their own storage, as two crawler processes would have, sharing one directory.
        const make = () =>
            handouts.track(
                new ThrottlingRequestManager(
                    {
                        domains: 'all',
                        clock,
                        delaySecs: 1,
                        concurrency: 4,
                        sharedClock: new FileDomainClock(dir),
                        ...options,
                    },
                    memoryConfig(),
                ),
            );
        return { clock, a: make(), b: make() };
    }

    test("one manager's dispatch holds the domain for the other until the interval has passed", async () => {
        const { clock, a, b } = twoProcesses();
        for (let i = 0; i < 3; i++) {
            await a.addRequest({ url: `https://shop.example/a/${i}` });
            await b.addRequest({ url: `https://shop.example/b/${i}` });
        }
        expect(await a.fetchNextRequest()).not.toBeNull();
        expect(await b.fetchNextRequest()).toBeNull();
        // B looks again every 100 ms until the shared clock lets it go.
        expect(await b.checkReadiness()).toMatchObject({ kind: 'waiting', readyAt: T0 + 100 });

        clock.advance(1_000);
        expect((await b.fetchNextRequest())?.url).toMatch(/\/b\//);
        expect(await a.fetchNextRequest()).toBeNull();
        clock.advance(1_000);
        expect((await a.fetchNextRequest())?.url).toMatch(/\/a\//);
    });

    test('without a shared clock the same two managers each dispatch at once (what the shared clock prevents)', async () => {
        const { a, b } = twoProcesses({ sharedClock: undefined });
        await a.addRequest({ url: 'https://shop.example/a/0' });
        await b.addRequest({ url: 'https://shop.example/b/0' });
        expect(await a.fetchNextRequest()).not.toBeNull();
        expect(await b.fetchNextRequest()).not.toBeNull();
    });

    test('the interval counts from when a request leaves (its pre-navigation hook), not from its handout', async () => {
        const { clock, a, b } = twoProcesses();
        await a.addRequest({ url: 'https://shop.example/a/0' });
        await a.addRequest({ url: 'https://shop.example/a/1' });
        await b.addRequest({ url: 'https://shop.example/b/0' });
        const first = await a.fetchNextRequest();
        // A busy event loop: the request reaches the crawler's hook 600 ms after its handout.
        clock.advance(600);
        a.checkReachable({ request: first! });
        // One interval after the handout is only 400 ms after it left: neither process may send yet.
        clock.advance(400);
        expect(await b.fetchNextRequest()).toBeNull();
        expect(await a.fetchNextRequest()).toBeNull();
        clock.advance(599);
        expect(await b.fetchNextRequest()).toBeNull();
        clock.advance(1);
        expect((await b.fetchNextRequest())?.url).toBe('https://shop.example/b/0');
    });

    test('a one-at-a-time domain holds the shared clock until the response, then for the interval after it', async () => {
        const { clock, a, b } = twoProcesses({ concurrency: 1 });
        await a.addRequest({ url: 'https://shop.example/a/0' });
        await b.addRequest({ url: 'https://shop.example/b/0' });
        const first = await a.fetchNextRequest();
        expect(first).not.toBeNull();

        // A's request is still in flight after the interval: B waits (a slow response must not let B in).
        clock.advance(2_500);
        expect(await b.fetchNextRequest()).toBeNull();

        // The response arrives: B may go one interval after it.
        await a.handleResponse({ request: first! }, { statusCode: 200, headers: {} });
        await a.markRequestHandled(first!);
        clock.advance(999);
        expect(await b.fetchNextRequest()).toBeNull();
        clock.advance(1);
        expect(await b.fetchNextRequest()).not.toBeNull();
    });

    test('a request that ends without a response (network error) ends the lease too, the interval counted from then', async () => {
        const { clock, a, b } = twoProcesses({ concurrency: 1, baseDelaySecs: 0 });
        await a.addRequest({ url: 'https://shop.example/a/0' });
        await b.addRequest({ url: 'https://shop.example/b/0' });
        const first = await a.fetchNextRequest();
        clock.advance(3_000);
        await a.reclaimRequest(first!);
        expect(await b.fetchNextRequest()).toBeNull();
        clock.advance(1_000);
        expect(await b.fetchNextRequest()).not.toBeNull();
    });

    test('a lease whose holder died runs out', async () => {
        const { clock, a, b } = twoProcesses({ concurrency: 1 });
        await a.addRequest({ url: 'https://shop.example/a/0' });
        await b.addRequest({ url: 'https://shop.example/b/0' });
        expect(await a.fetchNextRequest()).not.toBeNull();
        // A never answers again.
        clock.advance(29_999);
        expect(await b.fetchNextRequest()).toBeNull();
        clock.advance(1);
        expect(await b.fetchNextRequest()).not.toBeNull();
    });

    test('a backoff recorded by one manager holds the other', async () => {
        const { clock, a, b } = twoProcesses();
        await b.addRequest({ url: 'https://shop.example/b/0' });
        a.recordPacingSignal({ reason: 'rateLimited', url: 'https://shop.example/x', waitMs: 5_000 });

        expect(await b.fetchNextRequest()).toBeNull();
        clock.advance(4_999);
        expect(await b.fetchNextRequest()).toBeNull();
        clock.advance(1);
        expect(await b.fetchNextRequest()).not.toBeNull();
    });

    test('requests sitting in inner are held by the shared clock too', async () => {
        const clock = new ManualClock(T0);
        const options = { domains: ['shop.example'], clock, delaySecs: 1, concurrency: 4 };
        const a = handouts.track(
            new ThrottlingRequestManager({ ...options, sharedClock: new FileDomainClock(dir) }, memoryConfig()),
        );
        // B's request sits in its inner queue, as one written there before the throttler took over.
        const inner = await RequestQueue.open('inner-shared', { config: memoryConfig() });
        await inner.addRequest({ url: 'https://shop.example/b/0' });
        const b = handouts.track(
            new ThrottlingRequestManager({ ...options, inner, sharedClock: new FileDomainClock(dir) }, memoryConfig()),
        );

        await a.addRequest({ url: 'https://shop.example/a/0' });
        expect(await a.fetchNextRequest()).not.toBeNull();
        expect(await b.fetchNextRequest()).toBeNull();
        clock.advance(1_000);
        expect((await b.fetchNextRequest())?.url).toBe('https://shop.example/b/0');
    });

    test('sharedClock must implement reserve, extend and settle', () => {
        const make = (sharedClock: object) => () =>
            new ThrottlingRequestManager(
                { domains: 'all', sharedClock } as unknown as ThrottlingRequestManagerOptions,
                memoryConfig(),
            );
        expect(make({})).toThrow(
            /sharedClock must implement reserve\(key, now, nextAt\), extend\(key, clocks\) and settle/,
        );
        expect(make({ reserve: () => ({ granted: true }), extend: () => undefined })).toThrow(ThrottlingOptionsError);
        expect(
            make({ reserve: () => ({ granted: true }), extend: () => undefined, settle: () => undefined }),
        ).not.toThrow();
        const clocks = { reserve: () => ({ granted: true }), extend: () => undefined, settle: () => undefined };
        expect(make({ ...clocks, acquireSlot: () => ({ granted: true }) })).toThrow(
            /sharedClock has acquireSlot but no releaseSlot: shared slots need both \(or neither\)/,
        );
    });
});
