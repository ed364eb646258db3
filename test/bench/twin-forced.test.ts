import { retryAfterValue, TokenBucket } from '@crawlee-throttling/polite-web';
import { restatedBound } from '../../packages/bench/src/b5-goals';
import type { FamilySiteRun } from '../../packages/bench/src/family-score';
import { twinForcedRefusals } from '../../packages/bench/src/twin-forced';
import type { BucketSite, MixLine, SiteArrival } from '../../packages/bench/src/twin-forced';

/** 0.87 req/s, burst 9, 269 ms answers, HTTP-date waits: B5's mix 3017 bucket, over its allowance of 2. */
const SITE: BucketSite = { rate: 0.87, burst: 9, latencyMs: 269, retryAfter: 'http-date' };
const PAGES = 20;
// A start 120 ms into a second: where the HTTP-dates round to depends on it.
const T0 = Date.UTC(2026, 11, 7, 22, 0, 0) + 120;

/** Requests sent at each time (ms from T0), answered by `site`'s bucket as polite-web answers them. */
function answered(site: BucketSite, sends: number[], from = T0): SiteArrival[] {
    const bucket = new TokenBucket(site.rate, site.burst, from);
    let page = 0;
    return sends.map((ms) => {
        const at = from + ms;
        const waitMs = bucket.msUntilToken(at);
        if (bucket.tryTake(at)) return { at, refused: false, served: `/page/${page++}` };
        return { at, refused: true, retryAfter: retryAfterValue(site.retryAfter, waitMs, at) };
    });
}

/**
 * The learner's crawl of mix 3017's bucket, traced: one slot for a second, then pairs every answer,
 * a pair refused at the burst's end, the retry at the named date accepted, the next one an answer
 * later refused, then one page every 1.2 s.
 */
function tracedCrawl(site = SITE): SiteArrival[] {
    const burst = [0, 269, 538, 807, 1076, 1076, 1345, 1345, 1614, 1614, 1883, 1883];
    const first = answered(site, burst);
    const refusal = first.find((a) => a.refused)!;
    const retryAt = Date.parse(refusal.retryAfter!) - T0;
    const after = [retryAt, retryAt + 269];
    for (let ms = retryAt + 269 + 1200; after.length < PAGES + 3 - burst.length; ms += 1200) after.push(ms);
    return answered(site, [...burst, ...after]);
}

/** Alone in its mix: the twin's line is its own oracle's. */
const ALONE: MixLine = { startedAt: T0, othersLeastMs: 0, firstWaitMs: 0, pages: PAGES };

describe('refusals a twin bucket forces (twin-forced.ts)', () => {
    const crawl = tracedCrawl();
    const line = { ...ALONE, firstWaitMs: Date.parse(crawl.find((a) => a.refused)!.retryAfter!) - T0 - 1_883 };

    it('replays the traced crawl as the site answered it: the pair, then the request after the retry', () => {
        expect(crawl.filter((a) => a.refused).map((a) => crawl.indexOf(a))).toEqual([10, 11, 13]);
        expect(new Set(crawl.flatMap((a) => a.served ?? [])).size).toBe(PAGES);
    });

    it('forces the refusal after the retry where a faster twin answered the same and its line is near', () => {
        expect(twinForcedRefusals(SITE, crawl, line, 2, () => 2)).toBe(1);
    });

    it('forces none where the rest of the mix leaves every twin time to spare', () => {
        expect(twinForcedRefusals(SITE, crawl, { ...line, othersLeastMs: 60_000 }, 2, () => 2)).toBe(0);
    });

    it('forces none where the twin still had a refusal of its allowance to spend', () => {
        expect(twinForcedRefusals(SITE, crawl, line, 2, () => 3)).toBe(0);
    });

    it('forces none within the base allowance, nor where the log is not what the bucket answers', () => {
        expect(twinForcedRefusals(SITE, crawl, line, 3, () => 2)).toBe(0);
        const altered = crawl.map((a, i) => (i === 13 ? { ...a, refused: false, served: '/page/x' } : a));
        expect(twinForcedRefusals(SITE, altered, line, 2, () => 2)).toBe(0);
        const renamed = crawl.map((a, i) => (i === 10 ? { ...a, retryAfter: '2' } : a));
        expect(twinForcedRefusals(SITE, renamed, line, 2, () => 2)).toBe(0);
    });

    it('forces none where the history had already lost every twin its line', () => {
        // The mix began 30 s before this site's first request: no twin can be crawled within its line now.
        expect(twinForcedRefusals(SITE, crawl, { ...line, startedAt: T0 - 30_000 }, 2, () => 2)).toBe(0);
    });

    it("adds the forced refusals to a bucket's restated allowance in B5's judgement, naming the bound", () => {
        const truth = {
            truth: { rate: SITE.rate },
            site: { host: 'b.example', ...SITE, refusal: { status: 429, retryAfter: SITE.retryAfter } },
            unloadedMs: SITE.latencyMs,
        };
        const run: FamilySiteRun = {
            host: 'b.example',
            kind: 'bucket',
            pages: PAGES,
            completed: PAGES,
            requests: crawl.length,
            refusals: 3,
            makespanMs: crawl[crawl.length - 1].at - T0,
            responseRatio: 1,
            maxInFlight: 2,
            firstRetryAfterMs: line.firstWaitMs,
            late: { requests: 12, refusals: 0, servedPerSecond: 0.8 },
            arrivals: crawl,
        };
        expect(restatedBound(run, truth)).toEqual({ allowed: 2, bound: 'no RateLimit headers' });
        expect(restatedBound(run, truth, line)).toEqual({
            allowed: 3,
            bound: 'no RateLimit headers; forced by a twin bucket: 1 more',
        });
        // Within its allowance, or another kind of site, it is not searched.
        expect(restatedBound({ ...run, refusals: 2 }, truth, line).allowed).toBe(2);
        expect(restatedBound({ ...run, kind: 'nginx-limit-req' }, truth, line).allowed).toBe(2);
    });
});
