/**
 * The token bucket fitted to a scope's requests: fed the answers of a real token bucket (polite-web's),
 * paced as a learner paces, it bounds that bucket's rate from below, close under it; fed what no bucket answers, it says
 * nothing. Times are epoch ms on a manual timeline.
 */
import { BucketFit } from '../../packages/throttling/src/pacing/bucket-fit';
import { TokenBucket } from '../../packages/polite-web/src/token-bucket';

const T0 = 1_780_000_000_000;
const HORIZON_MS = 30_000;

/** Sends at each pace (req/s) for its seconds to a bucket; a refusal waits `waitMs`. Answers as it goes. */
function crawl(
    fit: BucketFit,
    bucket: { tryTake(at: number): boolean },
    steps: [pace: number, secs: number][],
    options: { waitMs?: number; jitterMs?: (i: number) => number } = {},
): number {
    let now = T0;
    let sent = 0;
    for (const [pace, secs] of steps) {
        const until = now + secs * 1000;
        while (now < until) {
            fit.sent(now);
            const arrives = now + (options.jitterMs?.(sent) ?? 0);
            const refused = !bucket.tryTake(arrives);
            fit.answered(now, refused);
            sent += 1;
            now += refused ? (options.waitMs ?? 1_000) : 1000 / pace;
        }
    }
    return sent;
}

/** Every 10th request refused, at paces a bucket of any burst lets through: a share, not a bucket. */
function everyTenthRefused(): BucketFit {
    const fit = new BucketFit(HORIZON_MS);
    let n = 0;
    crawl(fit, { tryTake: () => ++n % 10 !== 0 }, [
        [5, 4],
        [10, 4],
        [20, 4],
    ]);
    return fit;
}

/** A learner's run-ups: paced under the rate, stepped above it until refused, cut, stepped again. */
const RUN_UPS: [number, number][] = [
    [30, 1],
    [9.5, 2],
    [11.5, 1],
    [13.4, 1],
    [14.8, 3],
    [9.2, 2],
    [10.8, 1],
    [12.1, 1],
    [13.7, 4],
    [10, 2],
    [12.8, 6],
];

describe('a token bucket fitted to its answers', () => {
    test.each([
        ['a burst of 5', 5, 0.97],
        ['a burst of 1', 1, 0.95],
    ])("bounds the bucket's rate from below, close under it: %s", (_name, burst, within) => {
        const fit = new BucketFit(HORIZON_MS);
        crawl(fit, new TokenBucket(12, burst, T0), RUN_UPS);
        const fitted = fit.fit(40)!;
        expect(fitted.rate).toBeLessThanOrEqual(12);
        expect(fitted.rate).toBeGreaterThan(within * 12);
        expect(fitted.burst).toBeGreaterThanOrEqual(burst);
    });

    test("from the crawl's start, when the bucket was full, two refusals pin the burst", () => {
        const fit = new BucketFit(HORIZON_MS);
        // An unpaced start, then one run-up: two refusals. From the first refusal alone, a burst of up
        // to 40 fits with a slower rate; the start's full bucket rules those out.
        crawl(fit, new TokenBucket(12, 5, T0), RUN_UPS.slice(0, 5));
        const fitted = fit.fit(40)!;
        expect(fitted.burst).toBeLessThanOrEqual(6);
        expect(fitted.rate).toBeGreaterThan(0.95 * 12);
        expect(fitted.rate).toBeLessThanOrEqual(12);
    });

    test('arrivals a few ms off their sending still bound the rate from below', () => {
        const fit = new BucketFit(HORIZON_MS);
        // Up to 8 ms late, varying request to request.
        crawl(fit, new TokenBucket(12, 5, T0), RUN_UPS, { jitterMs: (i) => (i * 37) % 9 });
        const fitted = fit.fit(40)!;
        expect(fitted.rate).toBeLessThanOrEqual(12);
        expect(fitted.rate).toBeGreaterThan(0.9 * 12);
    });

    test('nothing from one refusal: a run-up fits a slower bucket with a larger burst as well', () => {
        const fit = new BucketFit(HORIZON_MS);
        crawl(fit, new TokenBucket(12, 5, T0), [
            [30, 1],
            [13, 3],
        ]);
        expect(fit.fit(40)).toBeUndefined();
    });

    test('nothing from refusals that come whatever the pace: no bucket fits them', () => {
        expect(everyTenthRefused().fit(40)).toBeUndefined();
    });

    test('nothing once other processes send to the site unseen', () => {
        const fit = new BucketFit(HORIZON_MS);
        crawl(fit, new TokenBucket(12, 5, T0), RUN_UPS);
        fit.share();
        fit.sent(T0 + 60_000);
        expect(fit.fit(40)).toBeUndefined();
    });

    test('a request without its answer yet leaves the bound below the rate', () => {
        const fit = new BucketFit(HORIZON_MS);
        const bucket = new TokenBucket(12, 5, T0);
        crawl(fit, bucket, RUN_UPS);
        // Sent just before the next refused one, its answer still to come.
        const later = T0 + 60_000;
        fit.sent(later);
        bucket.tryTake(later);
        for (let i = 1; i <= 20; i++) {
            fit.sent(later + i * 20);
            fit.answered(later + i * 20, !bucket.tryTake(later + i * 20));
        }
        const fitted = fit.fit(40)!;
        expect(fitted.rate).toBeLessThanOrEqual(12);
    });

    test('only the horizon is kept: a rate that changed long ago does not contradict the one now', () => {
        const fit = new BucketFit(HORIZON_MS);
        // 26 s of a 6 req/s bucket, refused at 7; then the site doubles its rate (a new bucket).
        const slow = new TokenBucket(6, 5, T0);
        const changeAt = T0 + 26_000;
        const faster = new TokenBucket(12, 5, changeAt);
        const site = { tryTake: (at: number) => (at < changeAt ? slow : faster).tryTake(at) };
        crawl(fit, site, [[30, 1], [5.7, 20], [7, 5], ...RUN_UPS.slice(1), ...RUN_UPS.slice(1)]);
        const fitted = fit.fit(40)!;
        expect(fitted.rate).toBeGreaterThan(0.9 * 12);
        expect(fitted.rate).toBeLessThanOrEqual(12);
    });
});

describe("the rate a crawl's start was refused at", () => {
    /** Requests sent at `gapsMs` apart from T0, the last refused. */
    function start(gapsMs: number[]): BucketFit {
        const fit = new BucketFit(HORIZON_MS);
        let now = T0;
        gapsMs.forEach((gap, i) => {
            now += gap;
            fit.sent(now);
            fit.answered(now, i === gapsMs.length - 1);
        });
        return fit;
    }

    test('the fastest run of requests that ends at the refused one: a bucket refusing it refills slower', () => {
        // Sent at 0, 320, 650 ms; refused at 940. Over the last gap alone: 1 / 0.29 s.
        expect(start([0, 320, 330, 290]).startRate()).toBeCloseTo(1000 / 290, 6);
        // A burst then a slow spell: the fastest run is the whole of it, 4 in 400 ms.
        expect(start([0, 100, 100, 100, 100]).startRate()).toBeCloseTo(10, 6);
        const bucket = new TokenBucket(3, 3, T0);
        // Whatever sent it, a real bucket's first refusal comes from a start faster than its rate.
        const fit = new BucketFit(HORIZON_MS);
        for (let now = T0; ; now += 300) {
            fit.sent(now);
            const refused = !bucket.tryTake(now);
            fit.answered(now, refused);
            if (refused) break;
        }
        expect(fit.startRate()).toBeGreaterThan(3);
    });

    test('says nothing where two requests left together, none was refused, or the first was', () => {
        expect(start([0, 300, 0]).startRate()).toBeUndefined();
        const quiet = new BucketFit(HORIZON_MS);
        quiet.sent(T0);
        quiet.answered(T0, false);
        expect(quiet.startRate()).toBeUndefined();
        expect(start([0]).startRate()).toBeUndefined();
    });

    test('says nothing once the log no longer holds the start, or other processes send too', () => {
        const old = start([0, 300, 300]);
        old.sent(T0 + HORIZON_MS + 1_000);
        expect(old.startRate()).toBeUndefined();
        const shared = start([0, 300, 300]);
        shared.share();
        expect(shared.startRate()).toBeUndefined();
    });
});

describe('a rate the refusals prove the site under (the fastest bucket that fits)', () => {
    /** Requests at `at` ms from T0, each accepted or refused (`R`). */
    function log(events: [atMs: number, refused?: 'R'][]): BucketFit {
        const fit = new BucketFit(HORIZON_MS);
        for (const [at, refused] of events) {
            fit.sent(T0 + at);
            fit.answered(T0 + at, refused === 'R');
        }
        return fit;
    }

    test('a bucket that ran out after a burst at the start, then refused again just after a retry', () => {
        // Six at 100 ms, refused at 610, the retry at 1000 through, refused again at 1150: the bucket held
        // five or more at the start, and under one token at 610 and at 1150 with one taken between. Each
        // bucket that fits refills under 3.8 a second, well under the 6.7 a second the last two were sent at.
        const fit = log([[0], [100], [200], [300], [400], [510], [610, 'R'], [1000], [1150, 'R']]);
        const fastest = fit.fastestRate(10)!;
        expect(fastest).toBeLessThan(3.8);
        expect(fastest).toBeGreaterThan(2);
    });

    test("a real bucket's answers, however it was paced: its rate is under the bound", () => {
        for (const [rate, burst] of [
            [2, 5],
            [1.37, 8],
            [12, 1],
            [0.87, 9],
        ]) {
            const fit = new BucketFit(HORIZON_MS);
            crawl(fit, new TokenBucket(rate, burst, T0), [
                [10, 1.5],
                [rate * 3, 1],
                [rate * 1.5, 2],
            ]);
            expect(fit.fastestRate(40)).toBeGreaterThanOrEqual(rate);
        }
    });

    test('says nothing where no bucket fits, nor with no burst seen to stop the search at', () => {
        const fit = everyTenthRefused();
        expect(fit.fastestRate(40)).toBeUndefined();
        // A pace set before any burst was seen (restored, or from a queue at one slot): the search over
        // bursts had no end and never returned.
        expect(fit.fastestRate(Number.POSITIVE_INFINITY)).toBeUndefined();
    });

    test('says nothing with one refusal; refusals far apart with nothing sent between hold it near 0', () => {
        expect(log([[0], [100], [200, 'R']]).fastestRate(10)).toBeUndefined();
        // Refused, then refused again a whole minute later with nothing sent between: a bucket that
        // refills at all would have a token by then; none with a rate above 0 fits it.
        expect(log([[0], [100, 'R'], [20_100, 'R'], [20_200, 'R']]).fastestRate(10)).toBeLessThan(0.1);
    });
});
