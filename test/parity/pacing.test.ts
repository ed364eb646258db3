/**
 * Parity: the pacing behaviours upstream Crawlee's ThrottlingRequestManager test file and
 * crawlee-python's test_throttling_request_manager.py both check, written against this package's
 * public API with a manual clock and real memory-storage queues. Each test names the upstream
 * behaviour it mirrors. Plain exponential backoff (`rampup: false`) is what both upstreams do.
 */
import type { Request } from '@crawlee/core';
import { RequestQueue } from '@crawlee/core';
import {
    ManualClock,
    parseRetryAfter,
    PersistentRateLimitError,
    ThrottledDomainLimitError,
    ThrottlingOptionsError,
    ThrottlingRequestManager,
} from 'crawlee-throttling';
import type { ThrottlingRequestManagerOptions } from 'crawlee-throttling';

import { memoryConfig } from '../helpers/storage';
import { nextReadyAt } from '../helpers/next-ready-at';

const T0 = Date.UTC(2026, 0, 1);

function setup(options: Partial<ThrottlingRequestManagerOptions> = {}) {
    const clock = new ManualClock(T0);
    const config = memoryConfig();
    const manager = new ThrottlingRequestManager(
        { domains: ['a.com', 'b.com'], clock, concurrency: 100, rampup: false, ...options },
        config,
    );
    return { manager, clock, config };
}

async function takeAll(manager: ThrottlingRequestManager): Promise<Request[]> {
    const out: Request[] = [];
    for (let r = await manager.fetchNextRequest(); r; r = await manager.fetchNextRequest()) out.push(r);
    return out;
}

const hostOf = (r: Request) => new URL(r.url).hostname;
const snap = (manager: ThrottlingRequestManager, domain: string) =>
    manager.snapshot().find((s) => s.domain === domain)!;
/** How long the domain's backoff clock still runs. */
const backoffLeft = (manager: ThrottlingRequestManager, clock: ManualClock, domain: string) =>
    Math.max(0, snap(manager, domain).backoffUntil - clock.now());

describe('parity: routing', () => {
    test('upstream "requests to configured domains route to sub-managers, others to inner queue"', async () => {
        const opened: string[] = [];
        const inner = await RequestQueue.open('parity-inner', { config: memoryConfig() });
        const { manager } = setup({
            inner,
            requestManagerOpener: async (name, opts) => {
                opened.push(name);
                return RequestQueue.open(name, opts);
            },
        });
        await manager.addRequest({ url: 'https://a.com/1' });
        await manager.addRequest({ url: 'https://elsewhere.org/1' });
        expect(opened).toContain('throttled-a.com');
        expect(inner.getTotalCount()).toBe(1);
        expect(manager.getTotalCount()).toBe(2);
    });

    test('upstream "a configured domain matches however its hostname is spelled" / python "normalizes spelling"', () => {
        const { manager } = setup({ domains: ['Bücher.Example.', 'A.COM', '[::1]'] });
        for (const url of [
            'https://xn--bcher-kva.example/x',
            'https://bücher.example:8443/',
            'https://a.com./',
            'http://[::1]:8080/',
        ]) {
            expect(manager.domainKeyOf(url)).toBeDefined();
            expect(manager.isThrottled(manager.domainKeyOf(url)!)).toBe(true);
        }
        expect(manager.domainKeyOf('HTTPS://A.com/x')).toBe('a.com');
        expect(manager.isThrottled(manager.domainKeyOf('https://sub.a.com/')!)).toBe(false);
    });

    test('upstream "rejects a domain that is not a hostname" / python "unmatchable domain is rejected"', () => {
        for (const bad of ['*.a.com', 'a.com/path', 'a b.com', '']) {
            expect(() => setup({ domains: [bad] })).toThrow(ThrottlingOptionsError);
        }
    });

    test('upstream "addRequestsBatched routing" / python "add_requests routes mixed domains"', async () => {
        const { manager } = setup();
        await manager.addRequestsBatched(['https://a.com/1', 'https://b.com/1', 'https://c.org/1'], {
            waitForAllRequestsToBeAdded: true,
        });
        expect(manager.innerManager!.getTotalCount()).toBe(1);
        expect(snap(manager, 'a.com').queued + snap(manager, 'b.com').queued).toBe(2);
    });
});

describe('parity: backoff', () => {
    test('upstream "a burst of concurrent 429s advances the backoff only once"', async () => {
        const { manager, clock } = setup();
        await manager.addRequestsBatched(['https://a.com/1', 'https://a.com/2', 'https://a.com/3'], {
            waitForAllRequestsToBeAdded: true,
        });
        const inFlight = await takeAll(manager);
        expect(inFlight).toHaveLength(3);
        for (const r of inFlight) manager.recordPacingSignal({ reason: 'rateLimited', url: r.url });
        expect(snap(manager, 'a.com').backoffExponent).toBe(1);
        expect(backoffLeft(manager, clock, 'a.com')).toBe(2_000);
    });

    test('python "exponential backoff": each refusal after the backoff doubles it from baseDelaySecs', () => {
        const { manager, clock } = setup();
        const waits: number[] = [];
        for (let i = 0; i < 4; i++) {
            manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://a.com/' });
            waits.push(backoffLeft(manager, clock, 'a.com'));
            clock.advance(waits[i]);
        }
        expect(waits).toEqual([2_000, 4_000, 8_000, 16_000]);
    });

    test('upstream "the backoff decays once the domain has stopped rate-limiting"', () => {
        const { manager, clock } = setup();
        manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://a.com/' });
        clock.advance(2_000);
        manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://a.com/' });
        expect(backoffLeft(manager, clock, 'a.com')).toBe(4_000);
        // Quiet through the backoff and as long again after it: the next refusal is a fresh burst.
        clock.set(snap(manager, 'a.com').decayAt);
        manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://a.com/' });
        expect(backoffLeft(manager, clock, 'a.com')).toBe(2_000);
        expect(snap(manager, 'a.com').backoffExponent).toBe(1);
    });

    test('upstream "caps the delay at maxDelaySecs" / python "max delay cap": exponential and Retry-After alike', () => {
        const { manager, clock } = setup({ maxDelaySecs: 5 });
        for (let i = 0; i < 5; i++) {
            manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://a.com/' });
            expect(backoffLeft(manager, clock, 'a.com')).toBeLessThanOrEqual(5_000);
            clock.advance(backoffLeft(manager, clock, 'a.com'));
        }
        manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://b.com/', waitMs: 600_000 });
        expect(backoffLeft(manager, clock, 'b.com')).toBe(5_000);
    });

    test('python "retry-after header priority": a server-given wait replaces the exponential step', () => {
        const { manager, clock } = setup();
        manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://a.com/', waitMs: 7_000 });
        expect(backoffLeft(manager, clock, 'a.com')).toBe(7_000);
    });

    test('python "record_domain_delay returns false for unconfigured domain" / "different domains independent"', () => {
        const { manager, clock } = setup();
        expect(manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://c.org/' })).toBe(false);
        expect(manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://a.com/' })).toBe(true);
        expect(backoffLeft(manager, clock, 'b.com')).toBe(0);
    });
});

describe('parity: crawl delay and dispatch', () => {
    test('upstream "a crawl-delay does not swallow the 429 backoff"', async () => {
        const { manager, clock } = setup();
        manager.recordPacingSignal({ reason: 'minInterval', url: 'https://a.com/', intervalMs: 10_000 });
        await manager.addRequestsBatched(['https://a.com/1', 'https://a.com/2'], { waitForAllRequestsToBeAdded: true });
        const first = (await manager.fetchNextRequest())!;
        // The crawl-delay clock now runs 10 s; a 429 must still count as a fresh refusal and escalate.
        manager.recordPacingSignal({ reason: 'rateLimited', url: first.url });
        expect(snap(manager, 'a.com')).toMatchObject({ backingOff: true, backoffExponent: 1 });
        expect(backoffLeft(manager, clock, 'a.com')).toBe(2_000);
        // Both clocks hold the domain: the longer one decides.
        await manager.reclaimRequest(first);
        clock.advance(2_000);
        expect(await manager.fetchNextRequest()).toBeNull();
        clock.advance(8_000);
        expect(await manager.fetchNextRequest()).not.toBeNull();
    });

    test('upstream "concurrent fetches cannot dispatch past the crawl-delay"', async () => {
        const { manager, clock } = setup({ minCrawlDelaySecs: 1 });
        await manager.addRequestsBatched(['https://a.com/1', 'https://a.com/2', 'https://a.com/3'], {
            waitForAllRequestsToBeAdded: true,
        });
        const burst = await Promise.all([1, 2, 3, 4].map(() => manager.fetchNextRequest()));
        expect(burst.filter(Boolean)).toHaveLength(1);
        clock.advance(1_000);
        expect((await Promise.all([1, 2, 3].map(() => manager.fetchNextRequest()))).filter(Boolean)).toHaveLength(1);
    });

    test('upstream "fetchNextRequest does not block while a domain is throttled" / python "fetch skips throttled sub-manager"', async () => {
        const { manager } = setup();
        await manager.addRequestsBatched(['https://a.com/1', 'https://b.com/1'], { waitForAllRequestsToBeAdded: true });
        manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://a.com/', waitMs: 60_000 });
        expect((await takeAll(manager)).map(hostOf)).toEqual(['b.com']);
        expect(await manager.fetchNextRequest()).toBeNull();
        expect(await manager.isEmpty()).toBe(true);
        expect(await manager.isFinished()).toBe(false);
    });

    test('upstream "a domain that hands over nothing does not spend its crawl-delay slot"', async () => {
        const { manager } = setup({ minCrawlDelaySecs: 10 });
        await manager.addRequest({ url: 'https://a.com/1' });
        await manager.markRequestHandled((await manager.fetchNextRequest())!);
        const before = snap(manager, 'a.com').nextDispatchAt;
        expect(await manager.fetchNextRequest()).toBeNull();
        expect(snap(manager, 'a.com').nextDispatchAt).toBe(before);
    });
});

describe('parity: requests held by inner', () => {
    test('upstream "a request fetched from the inner manager is handed back to it" / python "reclaim returns inner request to inner"', async () => {
        const { manager } = setup();
        await manager.addRequest({ url: 'https://c.org/1' });
        const r = (await manager.fetchNextRequest())!;
        expect(hostOf(r)).toBe('c.org');
        await manager.reclaimRequest(r);
        const again = (await manager.fetchNextRequest())!;
        expect(again.url).toBe(r.url);
        await manager.markRequestHandled(again);
        expect(await manager.innerManager!.handledCount()).toBe(1);
        expect(await manager.isFinished()).toBe(true);
    });

    test('python "shared unique key does not reroute sub-manager request": the same key in inner and a domain queue', async () => {
        const { manager } = setup();
        await manager.addRequest({ url: 'https://a.com/1', uniqueKey: 'same' });
        await manager.addRequest({ url: 'https://c.org/1', uniqueKey: 'same' });
        const both = await takeAll(manager);
        expect(both.map(hostOf).sort()).toEqual(['a.com', 'c.org']);
        for (const r of both) await manager.markRequestHandled(r);
        expect(await manager.handledCount()).toBe(2);
        expect(await manager.isFinished()).toBe(true);
    });
});

describe('parity: stall detection (the six cases of upstream)', () => {
    async function refuse(manager: ThrottlingRequestManager, clock: ManualClock, times: number) {
        for (let i = 0; i < times; i++) {
            clock.set(Math.max(clock.now(), (await nextReadyAt(manager)) ?? clock.now()));
            const r = (await manager.fetchNextRequest())!;
            manager.recordPacingSignal({ reason: 'rateLimited', url: r.url });
            await manager.reclaimRequest(r);
        }
    }
    const stallSetup = () => setup({ maxDomainStallSecs: 10, baseDelaySecs: 1 });

    test('1. "gives up on a domain that never lets a request through"', async () => {
        const { manager, clock } = stallSetup();
        await manager.addRequest({ url: 'https://a.com/1' });
        await refuse(manager, clock, 4); // refused at 0, 1, 3, 7 s
        expect((await manager.readiness()).status).toBe('waiting');
        clock.advance(3_500);
        expect(await manager.readiness()).toMatchObject({
            status: 'stalled',
            reason: expect.stringContaining('a.com'),
        });
        await expect(manager.isFinished()).rejects.toBeInstanceOf(PersistentRateLimitError);
    });

    test('2. "a handled request resets the clock"', async () => {
        const { manager, clock } = stallSetup();
        await manager.addRequestsBatched(['https://a.com/1', 'https://a.com/2'], { waitForAllRequestsToBeAdded: true });
        await refuse(manager, clock, 4);
        clock.set((await nextReadyAt(manager))!);
        await manager.markRequestHandled((await manager.fetchNextRequest())!);
        clock.advance(3_500);
        expect((await manager.readiness()).status).not.toBe('stalled');
    });

    test('3. "a domain that has run out of work is finished, not stalled"', async () => {
        const { manager, clock } = stallSetup();
        await manager.addRequest({ url: 'https://a.com/1' });
        await refuse(manager, clock, 4);
        clock.set((await nextReadyAt(manager))!);
        const r = (await manager.fetchNextRequest())!;
        manager.recordPacingSignal({ reason: 'rateLimited', url: r.url });
        r.pushErrorMessage(new Error('gave up'));
        await manager.markRequestHandled(r);
        clock.advance(60_000);
        expect((await manager.readiness()).status).toBe('finished');
    });

    test('4. "a domain idle for longer than the window is not stalled by its first 429"', async () => {
        const { manager, clock } = stallSetup();
        await manager.addRequest({ url: 'https://a.com/1' });
        clock.advance(60_000);
        await refuse(manager, clock, 1);
        expect((await manager.readiness()).status).not.toBe('stalled');
        expect(snap(manager, 'a.com').stalledForMs).toBeLessThan(10_000);
    });

    test('5. "a domain that was never rate-limited is never stalled"', async () => {
        const { manager, clock } = stallSetup();
        await manager.addRequest({ url: 'https://a.com/1' });
        manager.recordPacingSignal({ reason: 'minInterval', url: 'https://a.com/', intervalMs: 120_000 });
        await manager.reclaimRequest((await manager.fetchNextRequest())!);
        clock.advance(100_000);
        expect((await manager.readiness()).status).toBe('waiting');
    });

    test('6. "a domain that stopped rate-limiting a while ago is being waited out, not stalled"', async () => {
        const { manager, clock } = stallSetup();
        manager.recordPacingSignal({ reason: 'minInterval', url: 'https://a.com/', intervalMs: 300_000 });
        await manager.addRequest({ url: 'https://a.com/1' });
        // Refused twice, 300 s apart (its crawl delay): the gap is waiting, not refusing.
        await refuse(manager, clock, 2);
        clock.advance(200_000);
        expect((await manager.readiness()).status).toBe('waiting');
        expect(snap(manager, 'a.com').stalledForMs).toBeLessThan(10_000);
    });
});

// Crawlee v4's manager has one queue per domain: these tests name that layout ('perDomain'); under
// domains: 'all' this package defaults to 'shared' (docs/differences.md).
describe("parity: domains: 'all'", () => {
    test('upstream "gives every domain a queue of its own, the first time it is seen"', async () => {
        const opened: string[] = [];
        const { manager } = setup({
            domains: 'all',
            queueLayout: 'perDomain',
            requestManagerOpener: async (name, opts) => {
                opened.push(name);
                return RequestQueue.open(name, opts);
            },
        });
        await manager.addRequestsBatched(['https://x.org/1', 'https://y.org/1', 'https://x.org/2'], {
            waitForAllRequestsToBeAdded: true,
        });
        expect(opened.sort()).toEqual(['throttled-x.org', 'throttled-y.org']);
    });

    test('upstream "backs off a domain nobody listed" and "paces one domain without holding back the others"', async () => {
        const { manager } = setup({ domains: 'all', queueLayout: 'perDomain' });
        await manager.addRequestsBatched(['https://x.org/1', 'https://x.org/2', 'https://y.org/1'], {
            waitForAllRequestsToBeAdded: true,
        });
        expect(manager.recordPacingSignal({ reason: 'rateLimited', url: 'https://x.org/', waitMs: 30_000 })).toBe(true);
        expect((await takeAll(manager)).map(hostOf)).toEqual(['y.org']);
    });

    test('upstream "throttleBy: registrableDomain gives a site and its subdomains one clock"; IPs stay per host', () => {
        const { manager } = setup({ domains: 'all', queueLayout: 'perDomain', throttleBy: 'registrableDomain' });
        expect(manager.domainKeyOf('https://www.example.co.uk/')).toBe('example.co.uk');
        expect(manager.domainKeyOf('https://api.example.co.uk/')).toBe('example.co.uk');
        expect(manager.domainKeyOf('http://127.0.0.1:8080/')).toBe('127.0.0.1');
        expect(manager.domainKeyOf('http://localhost:3000/')).toBe('localhost');
    });

    test('upstream "refuses to throttle more domains than maxThrottledDomains"; a batch that overflows keeps what fits', async () => {
        const { manager } = setup({ domains: 'all', queueLayout: 'perDomain', maxThrottledDomains: 2 });
        await manager.addRequest({ url: 'https://x.org/1' });
        await manager.addRequest({ url: 'https://y.org/1' });
        await expect(manager.addRequest({ url: 'https://z.org/1' })).rejects.toBeInstanceOf(ThrottledDomainLimitError);
        const error = await manager
            .addRequestsBatched(['https://x.org/2', 'https://w.org/1'], { waitForAllRequestsToBeAdded: true })
            .catch((e) => e);
        expect(error).toBeInstanceOf(ThrottledDomainLimitError);
        expect(error.rejectedDomains).toEqual(['w.org']);
        expect(snap(manager, 'x.org').queued).toBe(2);
    });
});

describe('parity: Retry-After parsing (python test_parse_retry_after_*)', () => {
    const now = Date.UTC(2026, 0, 1, 0, 0, 0);
    test.each([
        ['none', undefined, undefined],
        ['empty string', '', undefined],
        ['integer seconds', '120', 120_000],
        ['zero seconds', '0', undefined],
        ['negative seconds', '-5', undefined],
        ['invalid value', 'soon', undefined],
        ['HTTP-date with a time zone', 'Thu, 01 Jan 2026 00:00:30 GMT', 30_000],
        ['RFC 850 date', 'Thursday, 01-Jan-26 00:00:30 GMT', 30_000],
        ['asctime date', 'Thu Jan  1 00:00:30 2026', 30_000],
        ['a date in the past', 'Wed, 31 Dec 2025 23:59:00 GMT', undefined],
    ])('%s', (_name, value, expected) => {
        expect(parseRetryAfter(value, now)).toBe(expected);
    });

    test('a naive HTTP-date (no GMT) is rejected here, where crawlee-python reads it as UTC (see docs/differences.md)', () => {
        expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30', now)).toBeUndefined();
    });
});
