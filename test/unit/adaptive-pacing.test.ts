import type { RefusalOptions, SiteOptions } from '../../packages/polite-web/src';
import { ThrottlingRequestManager } from '../../packages/throttling/src';
import type { ThrottlingRequestManagerOptions } from '../../packages/throttling/src';
import { AdaptivePacer } from '../../packages/throttling/src/pacing/adaptive-pacer';
import { DomainState } from '../../packages/throttling/src/pacing/domain-state';
import { UNLIMITED } from '../../packages/throttling/src/pacing/domain-state-types';
import { RAMPUP_DEFAULTS, RampupState } from '../../packages/throttling/src/pacing/rampup';
import { resolveRampup } from '../../packages/throttling/src/options/policy';
import { simulateCrawl } from '../helpers/rate-limited-sim';
import type { SimSite } from '../helpers/rate-limited-sim';
import { memoryConfig } from '../helpers/storage';

const ADAPTIVE = resolveRampup(true)!;
const RAMPUP: Partial<ThrottlingRequestManagerOptions> = { rampup: true };

/** Arrivals of one site in the last part of a crawl: what it accepted per second, and the refused share. */
function tail(arrivals: { at: number; refused: boolean }[], fromShare: number) {
    const start = arrivals[Math.floor(arrivals.length * fromShare)].at;
    const part = arrivals.filter((a) => a.at >= start);
    const seconds = (part[part.length - 1].at - start) / 1000;
    const accepted = part.filter((a) => !a.refused).length;
    return { acceptedPerSecond: (accepted - 1) / seconds, refusedShare: (part.length - accepted) / part.length };
}

const site = (refusal: RefusalOptions, extra: Partial<SiteOptions> = {}): SiteOptions => ({
    host: 'site.example',
    rate: 4,
    burst: 3,
    latencyMs: 50,
    refusal,
    ...extra,
});

describe('adaptive pacing: a simulated token bucket (4 req/s, burst 3, 50 ms), each way of refusing', () => {
    const styles: [string, RefusalOptions][] = [
        ['429 + Retry-After seconds', { status: 429, retryAfter: 'seconds' }],
        ['429 + Retry-After HTTP-date', { status: 429, retryAfter: 'http-date' }],
        ['bare 429', { status: 429, retryAfter: 'none' }],
        ['503 + Retry-After seconds', { status: 503, retryAfter: 'seconds' }],
        ['bare 503', { status: 503, retryAfter: 'none' }],
        ['429 + IETF RateLimit headers', { status: 429, retryAfter: 'none', rateLimitHeaders: 'ietf' }],
        ['429 + legacy RateLimit-* headers', { status: 429, retryAfter: 'none', rateLimitHeaders: 'legacy' }],
        ['503 + X-RateLimit-* headers', { status: 503, retryAfter: 'seconds', rateLimitHeaders: 'x-ratelimit' }],
    ];

    test.each(styles)('%s: every page, at most 5 %% refused, within 1.3x ideal', async (_name, refusal) => {
        const result = await simulateCrawl([site(refusal)], 120, RAMPUP);
        expect(result.done).toBe(120);
        expect(result.refusedShare).toBeLessThanOrEqual(0.05);
        expect(result.ratio).toBeLessThanOrEqual(1.3);
    });

    test('the same bare-429 site without rampup is far slower (the pacer is what gets the speed)', async () => {
        const result = await simulateCrawl([site({ status: 429, retryAfter: 'none' })], 120, { rampup: false });
        expect(result.done).toBe(120);
        expect(result.ratio).toBeGreaterThan(1.5);
    });
});

describe('adaptive pacing: long crawls converge', () => {
    test.each([
        ['bare 429, 10 req/s, burst 2', { status: 429, retryAfter: 'none' }, 10, 2],
        ['429 + Retry-After, 2 req/s, burst 5', { status: 429, retryAfter: 'seconds' }, 2, 5],
    ] as [string, RefusalOptions, number, number][])(
        '%s: after convergence at least 90 %% of the true rate, at most 1 %% refused',
        async (_name, refusal, rate, burst) => {
            const pages = rate * 120;
            const result = await simulateCrawl([site(refusal, { rate, burst, latencyMs: 20 })], pages, RAMPUP);
            expect(result.done).toBe(pages);
            const steady = tail(result.arrivals.get('site.example')!, 0.5);
            expect(steady.acceptedPerSecond).toBeGreaterThanOrEqual(0.9 * rate);
            expect(steady.refusedShare).toBeLessThanOrEqual(0.01);
        },
    );
});

describe('adaptive pacing: refusals that do not follow the pace', () => {
    /** Accepted answers per second over a part of one site's arrivals. */
    const acceptedPerSecond = (part: { at: number; refused: boolean }[]) =>
        (part.filter((a) => !a.refused).length - 1) / ((part[part.length - 1].at - part[0].at) / 1000);

    test.each([
        ['every 5th refused, 429 + Retry-After, no rate limit', { latencyMs: 20, refuseEvery: 5 }, 300],
        [
            'every 5th refused, bare 503, no rate limit',
            { latencyMs: 20, refuseEvery: 5, refusal: { status: 503, retryAfter: 'none' } },
            300,
        ],
        ['every 10th refused beside a 20 req/s bucket', { latencyMs: 50, rate: 20, burst: 5, refuseEvery: 10 }, 600],
    ] as [string, Partial<SimSite>, number][])(
        '%s: the pace holds instead of ratcheting down, and the crawl beats backoff alone',
        async (_name, extra, pages) => {
            const host: SimSite = { host: 'site.example', refusal: { status: 429, retryAfter: 'seconds' }, ...extra };
            const adaptive = await simulateCrawl([host], pages, RAMPUP, 40, 900_000);
            const backoffAlone = await simulateCrawl([host], pages, { rampup: false }, 40, 900_000);
            expect(adaptive.done).toBe(pages);
            const arrivals = adaptive.arrivals.get('site.example')!;
            const third = Math.floor(arrivals.length / 3);
            expect(acceptedPerSecond(arrivals.slice(2 * third))).toBeGreaterThanOrEqual(
                0.9 * acceptedPerSecond(arrivals.slice(0, third)),
            );
            if (backoffAlone.done === pages) expect(adaptive.makespanMs).toBeLessThan(backoffAlone.makespanMs);
        },
    );
});

describe('adaptive pacing: short crawls of a slow site with a burst', () => {
    // A slow site (1.35 req/s) whose burst of 7 and 144 ms answers fool a naive reading: answers to
    // requests sent before a refusal arrive after it, and the wait each refusal imposes refills tokens.
    const slowBurst: SimSite = {
        host: 'site.example',
        rate: 1.35,
        burst: 7,
        latencyMs: 144,
        refusal: { status: 503, retryAfter: 'http-date' },
    };

    test('answers to requests sent before a refusal are no delivery since it: the pace learned is under the rate', async () => {
        const result = await simulateCrawl([slowBurst], 20, RAMPUP);
        expect(result.done).toBe(20);
        // The burst, then one refusal to learn the rate from: counted with the answers in flight at the
        // first refusal, the second pace was 1.87 req/s and the site refused 8 of 28.
        expect(result.refused).toBeLessThanOrEqual(2);
        expect(result.manager.snapshot()[0].rampup!.safeRate).toBeLessThanOrEqual(slowBurst.rate!);
    });
});

describe('adaptive pacing: concurrency', () => {
    test('where latency x rate > 1, slots grow until the rate is reached (10 req/s at 300 ms)', async () => {
        const result = await simulateCrawl(
            [site({ status: 429, retryAfter: 'seconds' }, { rate: 10, latencyMs: 300 })],
            300,
            RAMPUP,
        );
        expect(result.done).toBe(300);
        expect(result.ratio).toBeLessThanOrEqual(1.3);
        expect(result.maxInFlight).toBeGreaterThanOrEqual(3);
        expect(result.maxInFlight).toBeLessThanOrEqual(ADAPTIVE.maxConcurrency);
    });

    test('a site that never refuses gets slots doubled up to the cap, never beyond', async () => {
        const unlimited: SiteOptions = { host: 'site.example', latencyMs: 100 };
        const result = await simulateCrawl([unlimited], 400, RAMPUP);
        expect(result.done).toBe(400);
        expect(result.maxInFlight).toBe(ADAPTIVE.maxConcurrency);
        // One slot would take 40 s; eight take a little over 5 s once grown.
        expect(result.makespanMs).toBeLessThan(10_000);
    });
});

describe('adaptive pacing: backoff still guards a site refusing everything', () => {
    test('with no answer in between, the waits between refusals keep growing', async () => {
        // One token, then one every 1000 s: after the first page the site refuses everything.
        const refusing = site({ status: 429, retryAfter: 'none' }, { rate: 0.001, burst: 1 });
        const result = await simulateCrawl([refusing], 5, { ...RAMPUP, maxDelaySecs: 600 }, 40, 300_000);
        const refusals = result.arrivals.get('site.example')!.filter((a) => a.refused);
        const gaps = refusals.slice(1).map((a, i) => a.at - refusals[i].at);
        expect(gaps.length).toBeGreaterThanOrEqual(4);
        for (let i = 1; i < gaps.length; i++) expect(gaps[i]).toBeGreaterThan(gaps[i - 1] * 1.5);
    });
});

describe('AdaptivePacer, step by step', () => {
    test('unpaced until the first refusal; then what got through, over the time including the wait', () => {
        const p = new AdaptivePacer();
        expect(p.delayMs()).toBe(0);
        for (let i = 0; i < 4; i++) {
            p.onDispatch(i * 10, ADAPTIVE);
            p.onAnswer(i * 10);
        }
        p.onDispatch(40, ADAPTIVE);
        p.onTrigger(40, ADAPTIVE, 1960);
        expect(p.rate).toBeCloseTo(2, 5); // 4 answers over the 40 ms since the first + 1960 ms
    });

    test('a delivery sample counts answers since a refusal, when the bucket was known empty', () => {
        const p = new AdaptivePacer();
        p.onDispatch(0, ADAPTIVE);
        p.onTrigger(0, ADAPTIVE, 100);
        for (let i = 0; i < 10; i++) p.onAnswer();
        const sample = p.deliverySample(4_000)!;
        expect(sample.rate).toBeCloseTo(2.5, 5);
        expect(p.deliverySample(500)).toBeUndefined(); // under a second: noise
    });

    test('an answer to a request sent before a refusal does not count in the delivery sample since it', () => {
        const p = new AdaptivePacer();
        p.onDispatch(0, ADAPTIVE);
        p.onTrigger(1_000, ADAPTIVE, 100);
        // Three answers after the refusal, to requests sent before it; then four sent after it.
        for (let i = 0; i < 3; i++) p.onAnswer(1_100, 900);
        for (let i = 0; i < 4; i++) p.onAnswer(2_000 + i * 500, 1_500 + i * 500);
        expect(p.deliverySample(3_000)!.rate).toBeCloseTo(2, 5); // 4 over the 2 s since the refusal
        // An answer whose send time is unknown still counts, as before.
        p.onAnswer(3_000);
        expect(p.deliverySample(3_000)!.rate).toBeCloseTo(2.5, 5);
    });

    test("a one-token bucket's sample leaves out the backoff's own idling beyond what a bare refusal is read as", () => {
        /** Unpaced, `burst` answers, then bare refusals at 30 and 1 040 ms (the second waits 4 s), one answer, a refusal. */
        const pace = (burst: number) => {
            const p = new AdaptivePacer();
            for (let i = 0; i < burst; i++) {
                p.onDispatch(0, ADAPTIVE);
                p.onAnswer(0, 0);
            }
            p.onTrigger(30, ADAPTIVE, 1_000, false);
            p.onTrigger(1_040, ADAPTIVE, 4_000, false);
            p.onAnswer(5_100, 5_040);
            p.onTrigger(6_090, ADAPTIVE, 1_000, false);
            return p.rate;
        };
        // One answer in the 2.05 s the crawler asked (5.05 s less 3 s of its own idling): about 0.49 req/s,
        // not the 0.2 that one answer over 5 s reads as.
        expect(pace(1)).toBeCloseTo((1000 / 2_050) * 0.95, 5);
        // A bucket that held several tokens banks the idle time's refill: the whole span counts.
        expect(pace(4)).toBeCloseTo((1000 / 5_050) * 0.95, 5);
    });

    test('a refused pace falls back to the estimate, not to the burst-hidden quiet pace above it', () => {
        const p = new AdaptivePacer();
        Object.assign(p, { rate: 8, safeRate: 8, quietRate: 8 });
        p.onAnswer();
        p.onTrigger(10_000, ADAPTIVE, 1000);
        expect(p.unsafeRate).toBe(8);
        expect(p.rate).toBe(4); // nothing quiet below 8 and no sample: half
    });

    test('an empty quota at a pace the site keeps up with marks a reference but does not slow down', () => {
        const p = new AdaptivePacer();
        Object.assign(p, { rate: 3, safeRate: 3 });
        p.onExhausted(0, ADAPTIVE, 300);
        for (let i = 0; i < 6; i++) p.onAnswer();
        p.onExhausted(2_000, ADAPTIVE, 300); // 3 per second delivered at a pace of 3: a one-token bucket
        expect(p.rate).toBe(3);
        for (let i = 0; i < 3; i++) p.onAnswer();
        p.onExhausted(4_000, ADAPTIVE, 300); // 2.25 per second since 0: the pace outruns the site
        expect(p.unsafeRate).toBeLessThanOrEqual(3);
        expect(p.rate).toBeLessThan(2.5);
    });

    test('refused with no answer since the last refusal, the pace is left to the growing backoff', () => {
        const p = new AdaptivePacer();
        p.onDispatch(0, ADAPTIVE);
        p.onTrigger(0, ADAPTIVE, 1000); // nothing answered at all: no rate to learn
        expect(p.rate).toBe(Number.POSITIVE_INFINITY);
        Object.assign(p, { rate: 2, safeRate: 2 });
        p.onAnswer();
        p.onTrigger(5_000, ADAPTIVE, 1000);
        const paced = p.rate;
        p.onTrigger(7_000, ADAPTIVE, 2000);
        p.onTrigger(11_000, ADAPTIVE, 4000);
        expect(p.rate).toBe(paced);
    });

    test('a retry refused again within a few seconds bounds the refill rate: the pace drops under it', () => {
        const p = new AdaptivePacer();
        for (let i = 0; i < 6; i++) {
            p.onDispatch(i * 40, ADAPTIVE);
            p.onAnswer(i * 40);
        }
        p.onTrigger(260, ADAPTIVE, 1000, false); // a burst of 6, then a bare refusal: reads as ~4.8/s
        expect(p.rate).toBeGreaterThan(4);
        p.onTrigger(1_260, ADAPTIVE, 2000, false); // its retry a second later is refused too: < 1 token/s
        expect(p.rate).toBeCloseTo(0.95, 5);
        expect(p.unsafeRate).toBe(Number.POSITIVE_INFINITY); // a bound to pace under, not a refused pace
    });

    test('refusals far apart with no answer in between (a site down) leave the pace alone', () => {
        const p = new AdaptivePacer();
        Object.assign(p, { rate: 3, safeRate: 3 });
        p.onAnswer();
        p.onTrigger(10_000, ADAPTIVE, 8000);
        const paced = p.rate;
        p.onTrigger(18_000, ADAPTIVE, 16000);
        expect(p.rate).toBe(paced);
    });

    test('once refused, a scope with few requests waiting does not probe upwards; with many it does', () => {
        const run = (backlog: number) => {
            const p = new AdaptivePacer();
            Object.assign(p, { rate: 2, safeRate: 2, unsafeRate: 8 });
            for (let t = 0; t <= 6_000; t += 500) p.onDispatch(t, ADAPTIVE, backlog);
            return p.rate;
        };
        expect(run(14)).toBe(2);
        expect(run(15)).toBeGreaterThan(2);
    });

    test('the first estimate counts from the first answer: a slow first page load (a browser starting) is no rate', () => {
        const p = new AdaptivePacer();
        p.onDispatch(0, ADAPTIVE);
        p.onAnswer(2_400); // the first page took 2.4 s
        p.onDispatch(2_400, ADAPTIVE);
        p.onAnswer(2_900);
        p.onDispatch(2_900, ADAPTIVE);
        p.onTrigger(3_400, ADAPTIVE, 1000);
        expect(p.rate).toBeCloseTo(2 / 2, 5); // 2 answers over 1 s since the first one + the 1 s wait, not over 4.4 s
    });

    test('refusals that outlast two pace cuts without a quiet window do not decay the pace further', () => {
        const p = new AdaptivePacer();
        Object.assign(p, { rate: 1, safeRate: 1 });
        p.onTrigger(0, ADAPTIVE, 1000);
        const paces: number[] = [];
        // Every other request refused, whatever the pace: one answer, one refusal, a second's wait.
        for (let t = 0, i = 0; i < 5; i++) {
            t += 1000 / p.rate + 1000;
            p.onAnswer();
            p.onTrigger(t, ADAPTIVE, 1000);
            paces.push(p.rate);
        }
        expect(paces[1]).toBeLessThan(paces[0]); // two cuts: it may well be a bucket
        expect(paces.slice(2)).toEqual([paces[1], paces[1], paces[1]]); // then held
    });

    test('a refusal takes slots back to those that lived through a quiet window, not to one', () => {
        const p = new AdaptivePacer();
        Object.assign(p, { rate: 10, safeRate: 10, extraConcurrency: 5, safeExtraConcurrency: 3 });
        p.onAnswer(0);
        p.onTrigger(2_000, ADAPTIVE, 1000);
        expect(p.extraConcurrency).toBe(3);
    });

    test('persists and restores its bounds; rejects malformed data', () => {
        const p = new AdaptivePacer();
        Object.assign(p, { rate: 3, safeRate: 3.2, unsafeRate: 4, extraConcurrency: 2, safeExtraConcurrency: 1 });
        const restored = AdaptivePacer.fromJSON(JSON.parse(JSON.stringify(p.toJSON())))!;
        expect(restored).toMatchObject({ rate: 3, safeRate: 3.2, unsafeRate: 4, extraConcurrency: 2 });
        expect(AdaptivePacer.fromJSON({ ...p.toJSON(), rate: 'fast' })).toBeUndefined();
        expect(AdaptivePacer.fromJSON({ ...p.toJSON(), kind: 'search' })).toBeUndefined();
    });
});

describe('rampup option: algorithm', () => {
    test("rampup: true is adaptive; { algorithm: 'search' } keeps the bracketed search", () => {
        expect(resolveRampup(true)!.algorithm).toBe('adaptive');
        expect(resolveRampup({ algorithm: 'search' })).toMatchObject({
            algorithm: 'search',
            windowMs: RAMPUP_DEFAULTS.windowMs,
        });
    });

    test('adaptive pacing is the default; rampup: false opts out, globally or per scope', () => {
        const make = (options: Partial<ThrottlingRequestManagerOptions>) =>
            new ThrottlingRequestManager({ domains: 'all', ...options }, memoryConfig());
        expect(make({}).policyOf('a.example').rampup?.algorithm).toBe('adaptive');
        expect(make({ rampup: false }).policyOf('a.example').rampup).toBeUndefined();
        const scoped = make({ scopes: { 'b.example': { rampup: false } } });
        expect(scoped.policyOf('a.example').rampup).toBeDefined();
        expect(scoped.policyOf('b.example').rampup).toBeUndefined();
    });

    test('beside a shared clock adaptive pacing adds no slots, unless rampup.maxConcurrency says so', () => {
        const sharedClock = { reserve: () => ({ granted: true as const }), extend: () => {}, settle: () => {} };
        const make = (options: Partial<ThrottlingRequestManagerOptions>) =>
            new ThrottlingRequestManager({ domains: 'all', ...options }, memoryConfig());
        expect(make({}).policyOf('a.example').rampup?.maxConcurrency).toBe(8);
        expect(make({ sharedClock }).policyOf('a.example').rampup?.maxConcurrency).toBe(1);
        expect(make({ sharedClock, rampup: { maxConcurrency: 4 } }).policyOf('a.example').rampup?.maxConcurrency).toBe(
            4,
        );
        expect(make({ sharedClock, rampup: false }).policyOf('a.example').rampup).toBeUndefined();
    });

    test('the scope state follows the algorithm', () => {
        const adaptive = new DomainState('a.example');
        adaptive.dispatch(0, 0, { ...UNLIMITED, rampup: resolveRampup(true) });
        expect(adaptive.rampupState).toBeInstanceOf(AdaptivePacer);
        const search = new DomainState('a.example');
        search.dispatch(0, 0, { ...UNLIMITED, rampup: resolveRampup({ algorithm: 'search' }) });
        expect(search.rampupState).toBeInstanceOf(RampupState);
        // Each is saved with what tells them apart.
        expect(DomainState.fromJSON(JSON.parse(JSON.stringify(adaptive)))!.rampupState).toBeInstanceOf(AdaptivePacer);
        expect(DomainState.fromJSON(JSON.parse(JSON.stringify(search)))!.rampupState).toBeInstanceOf(RampupState);
    });

    test('an unknown algorithm is refused with a message naming the option', () => {
        expect(
            () =>
                new ThrottlingRequestManager(
                    { domains: 'all', rampup: { algorithm: 'bbr' as 'search' } },
                    memoryConfig(),
                ),
        ).toThrow(/rampup\.algorithm must be 'adaptive' or 'search'|rampup must be/);
    });
});
