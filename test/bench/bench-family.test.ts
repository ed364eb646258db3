import type { LogEntry } from '@crawlee-throttling/polite-web';

import { parseBenchArgs } from '../../packages/bench/src/cli-args';
import {
    drawFamilyMix,
    drawFamilyMixes,
    FAMILY_KINDS,
    FAMILY_RANGES,
    type FamilyKind,
    type FamilyMix,
    type FamilySite,
    oracleScope,
} from '../../packages/bench/src/family-mixes';
import {
    b5GoalLines,
    b5GoalMarkdown,
    b5RestatedLines,
    b5SitesOver,
    b5SitesOverRestated,
    b5LongSites,
    b5SlowSitesOver,
    doublingRatio,
    refusalAllowance,
    restatedAllowance,
    restatedBound,
    restatedLongShare,
} from '../../packages/bench/src/b5-goals';
import {
    allowanceRatio,
    bareForced,
    bareThreshold,
    PAIR_REFUSALS,
    retryThreshold,
} from '../../packages/bench/src/allowance-bound';
import { type FamilySiteRun, lateHalf, retryAfterMs, scoreFamilyRun } from '../../packages/bench/src/family-score';
import { contenderThrottlerOptions, type MixResult, type MixRun } from '../../packages/bench/src/mix-family';
import { kindRows, summarize, summarizeKind } from '../../packages/bench/src/mix-family-markdown';

describe('B5 family: drawing', () => {
    it('draws the same mix from the same seed, and another from another', () => {
        expect(drawFamilyMix(3005)).toEqual(drawFamilyMix(3005));
        expect(drawFamilyMix(3005)).not.toEqual(drawFamilyMix(3006));
    });

    it('meets every kind of site as some mix first site over as many consecutive seeds as there are kinds', () => {
        const firsts = drawFamilyMixes(3000, FAMILY_KINDS.length).map((m) => m.sites[0].kind);
        expect([...firsts].sort()).toEqual([...FAMILY_KINDS].sort());
    });

    it('keeps every drawn parameter in its range', () => {
        for (const mix of drawFamilyMixes(5000, 200)) {
            const rates = mix.kind === 'long' ? FAMILY_RANGES.longRate : FAMILY_RANGES.rate;
            for (const site of mix.sites) {
                const { rate, concurrency } = site.truth;
                if (
                    site.kind === 'bucket' ||
                    site.kind === 'nginx-limit-req' ||
                    site.kind === 'nginx-limit-req-delay'
                ) {
                    // Rounding to cents or to whole requests a minute may step just past the range.
                    expect(rate!).toBeGreaterThanOrEqual(rates[0] - 0.01);
                    expect(rate!).toBeLessThanOrEqual(rates[1] + 0.01);
                }
                if (site.kind === 'slow') {
                    expect(concurrency!).toBeGreaterThanOrEqual(FAMILY_RANGES.workers[0]);
                    expect(concurrency!).toBeLessThanOrEqual(FAMILY_RANGES.workers[1]);
                    expect(site.unloadedMs).toBeGreaterThanOrEqual(FAMILY_RANGES.msPerPage[0]);
                    expect(site.unloadedMs).toBeLessThanOrEqual(FAMILY_RANGES.msPerPage[1]);
                }
                if (site.kind === 'nginx-limit-conn') {
                    expect(concurrency!).toBeLessThanOrEqual(FAMILY_RANGES.conns[1]);
                    expect(site.unloadedMs).toBeGreaterThanOrEqual(FAMILY_RANGES.connLatencyMs[0]);
                }
                if (site.kind === 'nginx-limit-req') expect(site.limiter).toMatchObject({ nodelay: true });
                if (site.kind === 'nginx-limit-req-delay') expect(site.limiter).toMatchObject({ nodelay: false });
                expect(site.capacity).toBeGreaterThan(0);
                expect(Boolean(site.limiter)).toBe(!['bucket', 'window', 'slow'].includes(site.kind));
            }
            expect(mix.idealMs).toBeCloseTo(Math.max(...mix.sites.map((s) => (mix.pages / s.capacity) * 1000)), 6);
        }
    });

    it('honours quick overrides: fewer pages and no site slower than minRate', () => {
        for (const mix of drawFamilyMixes(2000, 30, 0, { pages: 8, minRate: 2 })) {
            expect(mix.pages).toBe(8);
            for (const site of mix.sites)
                if (site.kind === 'bucket') expect(site.truth.rate!).toBeGreaterThanOrEqual(2);
        }
    });
});

describe('B5 family: the oracle', () => {
    const mix = (): FamilyMix => ({
        seed: 1,
        kind: 'short',
        pages: 10,
        idealMs: 0,
        sites: [
            {
                kind: 'bucket',
                host: 'a.example',
                site: { host: 'a.example' },
                truth: { rate: 4 },
                capacity: 4,
                unloadedMs: 200,
                describe: '',
            },
            {
                kind: 'slow',
                host: 'b.example',
                site: { host: 'b.example' },
                truth: { concurrency: 3 },
                capacity: 10,
                unloadedMs: 300,
                describe: '',
            },
        ],
    });

    it('paces a rate-limited site at 95 % of its rate with slots for its response time', () => {
        expect(oracleScope(mix().sites[0])).toEqual({ delaySecs: 1 / (0.95 * 4), concurrency: 2, rampup: false });
    });

    it('holds a concurrency-capped site at its cap, undelayed', () => {
        expect(oracleScope(mix().sites[1])).toEqual({ delaySecs: 0, concurrency: 3, rampup: false });
    });

    it('tells the oracle every site as a scope and the throttler nothing', () => {
        expect(contenderThrottlerOptions('throttler', mix())).toEqual({ domains: 'all' });
        expect(Object.keys(contenderThrottlerOptions('oracle', mix()).scopes!)).toEqual(['a.example', 'b.example']);
    });
});

describe('B5 family: scoring', () => {
    const mix: FamilyMix = {
        seed: 1,
        kind: 'short',
        pages: 2,
        idealMs: 0,
        sites: [
            {
                kind: 'slow',
                host: 's.example',
                site: { host: 's.example' },
                truth: { concurrency: 1 },
                capacity: 5,
                unloadedMs: 200,
                describe: '',
            },
            {
                kind: 'haproxy',
                host: 'h.example',
                site: { host: 'h.example' },
                truth: { rate: 1 },
                capacity: 1,
                unloadedMs: 0,
                describe: '',
            },
        ],
    };
    const entry = (
        site: string,
        path: string,
        time: number,
        status: number,
        respondedAt: number,
        extra: Partial<LogEntry> = {},
    ): LogEntry => ({
        site,
        path,
        time,
        status,
        inFlightAtArrival: 1,
        respondedAt,
        ...extra,
    });
    const log: LogEntry[] = [
        entry('s.example', '/robots.txt', 0, 200, 1),
        entry('s.example', '/page/0', 1_000, 200, 1_200),
        entry('s.example', '/page/1', 1_000, 200, 1_600, { inFlightAtArrival: 2 }),
        entry('h.example', '/page/0', 1_100, 200, 1_110),
        entry('h.example', '/page/1', 1_150, 429, 1_155, { refused: true }),
        entry('h.example', '/page/1', 2_200, 200, 2_230),
        entry('other.example', '/page/0', 9_000, 200, 9_999),
    ];

    it('counts pages, refusals, makespan to the last answer and the worst response ratio', () => {
        const score = scoreFamilyRun(log, mix);
        expect(score).toMatchObject({ pagesTotal: 4, pagesCompleted: 4, requests: 5, refusals: 1, makespanMs: 1_230 });
        const [slow, haproxy] = score.sites;
        // Median of 200 and 600 ms over the unloaded 200 ms.
        expect(slow).toMatchObject({ completed: 2, makespanMs: 600, responseRatio: 2, maxInFlight: 2 });
        // 10 and 30 ms against the 50 ms floor, not against 0.
        expect(haproxy).toMatchObject({ completed: 2, refusals: 1, requests: 3, responseRatio: 0.4 });
        expect(score.responseRatio).toBe(2);
    });

    it("keeps each site's second half of requests by arrival: refused ones, and served ones a second", () => {
        const [, haproxy] = scoreFamilyRun(log, mix).sites;
        // Three requests: the second half is the refused one at 1 150 ms and the accepted one at 2 200.
        expect(haproxy.late).toEqual({ requests: 2, refusals: 1, servedPerSecond: 0 });
        const steady = [0, 400, 300, 100, 200, 500].map((t, i) => entry('h.example', `/page/${i}`, t, 200, t + 5));
        // Sorted by arrival: 300, 400 and 500 ms, all accepted, two gaps in 200 ms.
        expect(lateHalf(steady)).toEqual({ requests: 3, refusals: 0, servedPerSecond: 10 });
        expect(lateHalf([])).toEqual({ requests: 0, refusals: 0, servedPerSecond: 0 });
        // A reset delivered no page: neither served nor refused.
        const reset = entry('h.example', '/page/6', 450, 200, 455, { reset: true });
        expect(lateHalf([...steady, reset])).toEqual({ requests: 4, refusals: 0, servedPerSecond: 10 });
    });

    const run = (contender: MixRun['contender'], makespanMs: number, refusedShare: number): MixRun => ({
        ...scoreFamilyRun(log, mix),
        contender,
        makespanMs,
        refusedShare,
        idealMs: 1,
        timedOut: false,
        pagesCompleted: contender === 'plain' ? 3 : 4,
    });

    it('summarizes each contender against the oracle of the same mix: median and worst', () => {
        const results: MixResult[] = [
            { mix, runs: [run('oracle', 1_000, 0), run('throttler', 1_500, 0.1), run('plain', 500, 0.3)] },
            { mix, runs: [run('oracle', 2_000, 0), run('throttler', 2_000, 0.0), run('plain', 400, 0.2)] },
            { mix, runs: [run('oracle', 1_000, 0), run('throttler', 3_000, 0.05), run('plain', 300, 0.1)] },
        ];
        const throttler = summarize(results, 'throttler');
        expect(throttler.vsOracle).toEqual([1.5, 3]);
        expect(throttler.refused).toEqual([0.05, 0.1]);
        expect(summarize(results, 'plain').completed).toEqual([0.75, 0.75]);
        expect(summarize(results, 'oracle').vsOracle).toEqual([1, 1]);
        const kind = summarizeKind(results, 'haproxy', 'throttler')!;
        expect(kind).toMatchObject({ sites: 3, maxInFlight: 1 });
        expect(kind.refused).toEqual([1 / 3, 1 / 3]);
        expect(summarizeKind(results, 'window', 'throttler')).toBeUndefined();
        expect(kindRows(results, ['oracle', 'throttler']).map((r) => `${r[0]} ${r[1]}`)).toEqual([
            'slow (c)',
            'slow (d)',
            'haproxy (c)',
            'haproxy (d)',
        ]);
    });

    it("reads the first refusal's Retry-After, in seconds or as an HTTP-date", () => {
        expect(retryAfterMs(entry('h.example', '/', 1_000, 429, 1_001, { retryAfter: '3' }))).toBe(3_000);
        const at = Date.parse('Wed, 02 Dec 2026 03:00:00 GMT');
        const date = entry('h.example', '/', at - 2_500, 429, at, { retryAfter: 'Wed, 02 Dec 2026 03:00:00 GMT' });
        expect(retryAfterMs(date)).toBe(2_500);
        expect(retryAfterMs(entry('h.example', '/', 1_000, 503, 1_001))).toBe(0);
        expect(retryAfterMs(undefined)).toBe(0);
        const withWait = [...log.slice(0, 4), { ...log[4], retryAfter: '2' }, ...log.slice(5)];
        expect(scoreFamilyRun(withWait, mix).sites[1].firstRetryAfterMs).toBe(2_000);
    });

    it('judges the goal: makespan within 1.3x the oracle plus the first wait, refusals by kind', () => {
        const site = scoreFamilyRun(log, mix).sites[1];
        expect(refusalAllowance({ ...site, kind: 'window' })).toBe(0);
        expect(refusalAllowance({ ...site, kind: 'express-rate-limit' })).toBe(0);
        expect(refusalAllowance({ ...site, firstRetryAfterMs: 2_000 })).toBe(1);
        expect(refusalAllowance({ ...site, firstRetryAfterMs: 1_000 })).toBe(2);
        // 1.5 s against 1.3 x 1 s: over, unless the first Retry-After (here 1 s) is allowed on top.
        const waited = (ms: number) => ({
            ...run('throttler', 1_500, 0.1),
            sites: [{ ...site, firstRetryAfterMs: ms }],
        });
        const judge = (ms: number) => b5GoalLines([{ mix, runs: [run('oracle', 1_000, 0), waited(ms)] }]);
        expect(judge(0)[0]).toMatchObject({ measured: '0/1 mixes', met: false });
        expect(judge(1_000)[0]).toMatchObject({ measured: '1/1 mixes', met: true });
        expect(judge(0)[1]).toMatchObject({ measured: '1.50×', met: false });
        // One refusal at a site allowed two; 1 of 5 requests refused (20 %) is over 3 %.
        expect(judge(0)[2]).toMatchObject({ measured: '1/1 sites', met: true });
        expect(judge(0)[5]).toMatchObject({ met: false });
        const announcing = { ...run('throttler', 1_000, 0), sites: [{ ...site, kind: 'window' as const }] };
        const lines = b5GoalLines([{ mix, runs: [run('oracle', 1_000, 0), announcing] }]);
        expect(lines[4]).toMatchObject({ measured: '0/1 sites', met: false });
        expect(b5GoalLines([{ mix, runs: [run('oracle', 1_000, 0)] }])).toEqual([]);
    });

    it("judges long crawls after convergence: 90 % of each site's true rate, 1 % refused at most", () => {
        const [, haproxy] = scoreFamilyRun(log, mix).sites;
        const long = { ...mix, kind: 'long' as const, pages: 500 };
        // The haproxy site's true rate is 1 a second.
        const judge = (late: FamilySiteRun['late'], m: FamilyMix = long) =>
            b5GoalLines([
                {
                    mix: m,
                    runs: [run('oracle', 1_000, 0), { ...run('throttler', 1_000, 0), sites: [{ ...haproxy, late }] }],
                },
            ]);
        const line = (late: FamilySiteRun['late']) => judge(late).find((l) => l.goal.startsWith('long crawls'));
        expect(line({ requests: 250, refusals: 2, servedPerSecond: 0.92 })).toMatchObject({
            measured: '1/1 sites (worst 92 % of the rate, 0.8 % refused)',
            met: true,
        });
        expect(line({ requests: 250, refusals: 0, servedPerSecond: 0.88 })?.met).toBe(false);
        expect(line({ requests: 250, refusals: 3, servedPerSecond: 0.95 })?.met).toBe(false);
        // Each long crawl's site is listed with its figures; a short mix's are not.
        const listed = (m: FamilyMix) => {
            const late = { requests: 250, refusals: 2, servedPerSecond: 0.92 };
            const throttler = { ...run('throttler', 1_000, 0), sites: [{ ...haproxy, late }] };
            return b5LongSites([{ mix: m, runs: [run('oracle', 1_000, 0), throttler] }]);
        };
        expect(listed(long)).toHaveLength(1);
        expect(listed(long)[0]).toMatch(
            new RegExp(
                `^${long.seed} ${haproxy.host} .*: 92 % of its rate, 0.8 % refused \\(oracle \\d+ %, restated need \\d+ %\\)$`,
            ),
        );
        expect(listed(mix)).toEqual([]);
        // No long mix, no line; nor for a quick run's long mix, cut to a few pages.
        expect(judge({ requests: 250, refusals: 3, servedPerSecond: 0.5 }, mix)).toHaveLength(7);
        expect(judge({ requests: 4, refusals: 3, servedPerSecond: 0.5 }, { ...long, pages: 8 })).toHaveLength(7);
    });

    it("restates the long crawls' line against the oracle's rate on the same site", () => {
        const [, haproxy] = scoreFamilyRun(log, mix).sites;
        const long = { ...mix, kind: 'long' as const, pages: 500 };
        // The haproxy site's true rate is 1 a second; the oracle paces it at 0.95.
        const judge = (oracleRate: number, late: FamilySiteRun['late']) => {
            const oracle = {
                ...run('oracle', 1_000, 0),
                sites: [{ ...haproxy, late: { ...late, servedPerSecond: oracleRate } }],
            };
            const throttler = { ...run('throttler', 1_000, 0), sites: [{ ...haproxy, late }] };
            return b5RestatedLines([{ mix: long, runs: [oracle, throttler] }]).find((l) => l.goal.startsWith('long'));
        };
        // The oracle delivered 0.855 of its 0.95: 90 % of that is 0.81 of the rate.
        expect(judge(0.855, { requests: 250, refusals: 0, servedPerSecond: 0.82 })).toMatchObject({
            measured: '1/1 sites (worst 101 % of what it needs)',
            met: true,
        });
        expect(judge(0.855, { requests: 250, refusals: 0, servedPerSecond: 0.8 })?.met).toBe(false);
        // Refusals still count, and an oracle at or over its pace asks the issue's 90 %, never more.
        expect(judge(0.855, { requests: 250, refusals: 3, servedPerSecond: 0.9 })?.met).toBe(false);
        expect(judge(0.99, { requests: 250, refusals: 0, servedPerSecond: 0.9 })?.met).toBe(true);
        expect(judge(0.99, { requests: 250, refusals: 0, servedPerSecond: 0.89 })?.met).toBe(false);
        expect(restatedLongShare(undefined)).toBe(0.9);
        // A short mix has no long line.
        const short = b5RestatedLines([{ mix, runs: [run('oracle', 1_000, 0), run('throttler', 1_000, 0)] }]);
        expect(short.some((l) => l.goal.startsWith('long'))).toBe(false);
    });

    it('names the sites over their allowance, with the wait each first named', () => {
        const site = scoreFamilyRun(log, mix).sites[1];
        const described = { ...mix, sites: mix.sites.map((s) => ({ ...s, describe: `${s.kind} 1/s` })) };
        const throttler = (refusals: number, firstRetryAfterMs: number) => ({
            ...run('throttler', 1_000, 0.1),
            sites: [{ ...site, refusals, firstRetryAfterMs }],
        });
        const over = (refusals: number, waitMs: number) =>
            b5SitesOver([{ mix: described, runs: [run('oracle', 1_000, 0), throttler(refusals, waitMs)] }]);
        expect(over(2, 1_000)).toEqual([]);
        expect(over(2, 2_000)).toEqual(['1 h.example (haproxy 1/s): 2 refusals, 1 allowed, first Retry-After 2.0 s']);
        expect(over(3, 0)).toEqual(['1 h.example (haproxy 1/s): 3 refusals, 2 allowed, first Retry-After none']);
    });
});

describe('B5 family: the goal restated with the bounds of docs/rampup-bounds.md', () => {
    const PAGES = 20;
    const desc = (
        host: string,
        kind: FamilyKind,
        truth: FamilySite['truth'],
        burst?: number,
        unloadedMs = 100,
    ): FamilySite => ({
        kind,
        host,
        site: { host, ...(burst === undefined ? {} : { burst }) },
        truth,
        capacity: 1,
        unloadedMs,
        describe: `${kind} ${host}`,
    });
    const siteRun = (site: FamilySite, extra: Partial<FamilySiteRun> = {}): FamilySiteRun => ({
        host: site.host,
        kind: site.kind,
        pages: PAGES,
        completed: PAGES,
        requests: PAGES,
        refusals: 0,
        makespanMs: 600,
        responseRatio: 1,
        maxInFlight: 1,
        firstRetryAfterMs: 0,
        late: { requests: PAGES / 2, refusals: 0, servedPerSecond: 1 },
        ...extra,
    });
    const mixRun = (
        contender: MixRun['contender'],
        makespanMs: number,
        sites: FamilySiteRun[],
        timedOut = false,
    ): MixRun => ({
        contender,
        makespanMs,
        sites,
        timedOut,
        idealMs: 1,
        pagesTotal: PAGES * sites.length,
        pagesCompleted: PAGES * sites.length,
        requests: sites.reduce((t, s) => t + s.requests, 0),
        refusals: sites.reduce((t, s) => t + s.refusals, 0),
        refusedShare: 0,
        responseRatio: 1,
        startedAt: 0,
    });
    const mixOf = (sites: FamilySite[]): FamilyMix => ({ seed: 7, kind: 'short', pages: PAGES, idealMs: 0, sites });
    /** One mix: the oracle's run, the throttler's, each site's run by the same `extra` for both unless given. */
    const result = (
        sites: FamilySite[],
        oracleMs: number,
        throttlerMs: number,
        throttlerSites: Partial<FamilySiteRun>[] = [],
        timedOut = false,
    ): MixResult => ({
        mix: mixOf(sites),
        runs: [
            mixRun(
                'oracle',
                oracleMs,
                sites.map((s) => siteRun(s)),
            ),
            mixRun(
                'throttler',
                throttlerMs,
                sites.map((s, i) => siteRun(s, throttlerSites[i])),
                timedOut,
            ),
        ],
    });

    it('bounds a learner that doubles from one in flight: the table of "Short crawls of a concurrency limit"', () => {
        expect(doublingRatio(1, PAGES)).toBe(1);
        expect(doublingRatio(2, PAGES)).toBeCloseTo(11 / 10, 12);
        expect(doublingRatio(4, PAGES)).toBeCloseTo(7 / 5, 12);
        expect(doublingRatio(7, PAGES)).toBeCloseTo(5 / 3, 12);
        // 1 + 2 + 4 in three rounds, the eighth page in a fourth, where the oracle takes one.
        expect(doublingRatio(8, 8)).toBe(4);
        expect(doublingRatio(3, 0)).toBe(1);
    });

    it('bounds a learner that keeps to the allowance at every bucket of the family that answers as slowly', () => {
        // 7 workers at 188 ms (B5's mix 3026): a bucket of burst ≤ 10 answering in 188 ms could run dry at
        // any round of 20 pages, and the round where it does may cost 2: 10 rounds, where the oracle takes 3.
        expect(allowanceRatio(7, PAGES, 188)).toBeCloseTo(10 / 3, 12);
        expect(allowanceRatio(4, PAGES, 188)).toBeCloseTo(10 / 5, 12);
        // No bucket of the family answers in 400 ms: the doubling bound alone. Two workers: it binds anyway.
        expect(allowanceRatio(7, PAGES, 400)).toBe(doublingRatio(7, PAGES));
        expect(allowanceRatio(2, PAGES, 188)).toBe(doublingRatio(2, PAGES));
        expect(allowanceRatio(3, 0, 188)).toBe(1);
        // One bucket, burst 3 at 100 ms: after 1 and 2 it has no token left, so a round of 4 would cost 4
        // refusals. Whatever its rate, the round where it runs dry may cost 2: the third round sends 2.
        const bucket = (rate: number) => ({ burst: [3, 3], rate: [rate, rate], latencyMs: [0, 300] }) as const;
        expect(doublingRatio(8, 6)).toBe(3);
        expect(allowanceRatio(8, 6, 100, bucket(0.5))).toBe(4);
        expect(allowanceRatio(8, 6, 100, bucket(2))).toBe(4);
        // Burst 4: the third round's 4 would cost 3 there; 3 cost 2.
        const four = { burst: [4, 4], rate: [0.5, 0.5], latencyMs: [0, 300] } as const;
        expect(allowanceRatio(8, 6, 100, four)).toBe(3);
        expect(PAIR_REFUSALS).toBe(2);
    });

    it('judges a mix with a concurrency limit against the least possible, not the oracle', () => {
        // 7 workers, slower than any bucket of the family: the oracle's site takes 600 ms, so no learner
        // takes less than 600 × 5/3 = 1 000 ms.
        const slow = desc('s.example', 'slow', { concurrency: 7 }, undefined, 400);
        const makespan = (r: MixResult) => [b5GoalLines([r])[0].met, b5RestatedLines([r])[0]];
        // 1 250 ms: over 1.3 × the oracle's 700 ms, within 1.3 × the least possible 1 000 ms.
        expect(makespan(result([slow], 700, 1_250))).toEqual([
            false,
            expect.objectContaining({ measured: '1/1 mixes', met: true }),
        ]);
        expect(makespan(result([slow], 700, 1_350))[1]).toMatchObject({ measured: '0/1 mixes', met: false });
        // nginx limit_conn is a concurrency too; a rate is not.
        const conn = desc('c.example', 'nginx-limit-conn', { concurrency: 7 }, undefined, 400);
        expect(b5RestatedLines([result([conn], 700, 1_250)])[0].met).toBe(true);
        // At 188 ms a bucket of the family answers alike: the least is 600 × 10/3 = 2 000 ms.
        const answeringLikeABucket = desc('s.example', 'slow', { concurrency: 7 }, undefined, 188);
        expect(b5RestatedLines([result([answeringLikeABucket], 700, 2_600)])[0].met).toBe(true);
        expect(b5RestatedLines([result([answeringLikeABucket], 700, 2_700)])[0].met).toBe(false);
        const bucket = desc('b.example', 'bucket', { rate: 7 });
        expect(b5RestatedLines([result([bucket], 700, 1_250)])[0].met).toBe(false);
        // Where the mix's makespan is longer than the bound, the oracle's makespan is the least.
        expect(b5RestatedLines([result([slow], 2_000, 2_500)])[0].met).toBe(true);
        // The first Retry-After is allowed on top, and a run that timed out meets nothing.
        expect(b5RestatedLines([result([slow], 700, 1_350, [{ firstRetryAfterMs: 100 }])])[0].met).toBe(true);
        expect(b5RestatedLines([result([slow], 700, 1_250, [], true)])[0].met).toBe(false);
        expect(b5RestatedLines([{ mix: mixOf([slow]), runs: [mixRun('oracle', 700, [])] }])).toEqual([]);
    });

    it('restates the allowance: 2 at a long wait behind a bucket of burst 2 or more, 3 at a slow bare refusal', () => {
        // Answers in 20 ms: no concurrency limit of the family answers that fast, so the round where a
        // burst runs out costs one refusal.
        const fast = (host: string, kind: FamilyKind, truth: FamilySite['truth'], burst?: number) =>
            desc(host, kind, truth, burst, 20);
        const allowed = (site: FamilySite, extra: Partial<FamilySiteRun>) =>
            restatedAllowance(siteRun(site, extra), site);
        const haproxy = fast('h.example', 'haproxy', { rate: 0.5 });
        expect(allowed(fast('w.example', 'window', { rate: 0.5 }), { firstRetryAfterMs: 5_000 })).toBe(0);
        expect(allowed(fast('e.example', 'express-rate-limit', { rate: 0.5 }), {})).toBe(0);
        expect(allowed(haproxy, { firstRetryAfterMs: 2_000 })).toBe(1);
        expect(allowed(fast('b.example', 'bucket', { rate: 0.5 }, 1), { firstRetryAfterMs: 2_000 })).toBe(1);
        expect(allowed(fast('b.example', 'bucket', { rate: 0.5 }), { firstRetryAfterMs: 2_000 })).toBe(1);
        expect(allowed(fast('b.example', 'bucket', { rate: 0.5 }, 2), { firstRetryAfterMs: 2_000 })).toBe(2);
        expect(allowed(haproxy, { firstRetryAfterMs: 0 })).toBe(3);
        // Under 2.5 / 1.44 req/s: the retry within 0.4 s that a 20 req/s bucket needs is refused there
        // too, and so at a twin 1.44 times as fast, which a learner must not crawl slower than 1.3×.
        expect(bareThreshold()).toBeCloseTo((1 / 0.4) * (18 / 26), 12);
        expect(bareThreshold(10)).toBeCloseTo((1 / 0.8) * (18 / 26), 12);
        expect(retryThreshold()).toBeCloseTo(1 / 0.4, 12);
        expect(bareForced(1.7)).toBe(2);
        expect(bareForced(2.4)).toBe(1);
        expect(bareForced(2.5)).toBe(0);
        expect(allowed(fast('n.example', 'nginx-limit-req', { rate: 1.7 }), {})).toBe(3);
        expect(allowed(fast('n.example', 'nginx-limit-req', { rate: 1.74 }), {})).toBe(2);
        expect(allowed(haproxy, { firstRetryAfterMs: 1_000 })).toBe(2);
        expect(allowed(fast('s.example', 'slow', { concurrency: 1 }), {})).toBe(2);
        expect(restatedBound(siteRun(haproxy), haproxy).bound).toBe(
            'refusals that name no wait: 0.5 req/s under 1.73 req/s',
        );
    });

    it('restates one refusal more where a site answers as slowly as a concurrency limit of the family', () => {
        const allowed = (site: FamilySite, extra: Partial<FamilySiteRun> = {}) =>
            restatedAllowance(siteRun(site, extra), site);
        // 100 ms, within the 50–500 ms of the family's slow servers and limit_conn origins.
        const haproxy = desc('h.example', 'haproxy', { rate: 0.5 });
        expect(allowed(haproxy)).toBe(4);
        expect(restatedBound(siteRun(haproxy), haproxy).bound).toBe(
            'two in flight when a burst runs out; refusals that name no wait: 0.5 req/s under 1.73 req/s',
        );
        const nginx = desc('n.example', 'nginx-limit-req', { rate: 2 });
        expect(allowed(nginx)).toBe(3);
        expect(restatedBound(siteRun(nginx), nginx).bound).toBe(
            'two in flight when a burst runs out; a retry refused: 2 req/s under 2.50 req/s',
        );
        // A fast bare bucket, a named short wait: the pair alone, within the issue's 2.
        expect(allowed(desc('n.example', 'nginx-limit-req', { rate: 3 }))).toBe(2);
        expect(allowed(desc('b.example', 'bucket', { rate: 0.8 }, 5), { firstRetryAfterMs: 1_000 })).toBe(2);
        // A long wait: 2 at a window, 3 at a bucket of burst 2 or more.
        expect(allowed(desc('r.example', 'rate-limiter-flexible', { rate: 1.6 }), { firstRetryAfterMs: 4_000 })).toBe(
            2,
        );
        expect(allowed(desc('b.example', 'bucket', { rate: 0.5 }, 2), { firstRetryAfterMs: 2_000 })).toBe(3);
        // Headers still allow none; 50 and 500 ms are in, 40 and 600 ms out; a long crawl is not short.
        expect(allowed(desc('w.example', 'window', { rate: 0.5 }))).toBe(0);
        expect(allowed(desc('h.example', 'haproxy', { rate: 0.5 }, undefined, 50))).toBe(4);
        expect(allowed(desc('h.example', 'haproxy', { rate: 0.5 }, undefined, 500))).toBe(4);
        expect(allowed(desc('h.example', 'haproxy', { rate: 0.5 }, undefined, 40))).toBe(3);
        expect(allowed(desc('h.example', 'haproxy', { rate: 0.5 }, undefined, 600))).toBe(3);
        expect(allowed(haproxy, { pages: 500, late: { requests: 99, refusals: 0, servedPerSecond: 0.5 } })).toBe(3);
    });

    it("adds a long crawl's probes for a raised limit: 1 % of its second half, not where headers announce", () => {
        const long = (site: FamilySite, late: FamilySiteRun['late'], extra: Partial<FamilySiteRun> = {}) =>
            restatedBound(siteRun(site, { pages: 500, late, ...extra }), site);
        const bucket = desc('b.example', 'bucket', { rate: 13.6 }, 5);
        expect(long(bucket, { requests: 251, refusals: 1, servedPerSecond: 13 })).toEqual({
            allowed: 4,
            bound: "no RateLimit headers; a long crawl's probes: 2 more",
        });
        expect(long(bucket, { requests: 99, refusals: 0, servedPerSecond: 13 }).allowed).toBe(2);
        expect(
            long(desc('w.example', 'window', { rate: 5 }), { requests: 250, refusals: 0, servedPerSecond: 5 }).allowed,
        ).toBe(0);
        // A short crawl adds none.
        expect(
            restatedAllowance(siteRun(bucket, { late: { requests: 300, refusals: 0, servedPerSecond: 1 } }), bucket),
        ).toBe(2);
    });

    it("counts and names the sites over the restated allowance beside those over the issue's", () => {
        const bare = desc('h.example', 'haproxy', { rate: 0.5 }, undefined, 20);
        const bucket = desc('b.example', 'bucket', { rate: 0.5 }, 4, 20);
        const r = result([bare, bucket], 1_000, 1_000, [{ refusals: 3 }, { refusals: 3, firstRetryAfterMs: 2_000 }]);
        expect(b5GoalLines([r])[2]).toMatchObject({ measured: '0/1 sites', met: false });
        expect(b5GoalLines([r])[3]).toMatchObject({ measured: '0/1 sites', met: false });
        expect(b5RestatedLines([r])[1]).toMatchObject({ measured: '1/2 sites', met: false });
        expect(b5SitesOver([r])).toEqual([
            '7 h.example (haproxy h.example): 3 refusals, 2 allowed, first Retry-After none',
            '7 b.example (bucket b.example): 3 refusals, 1 allowed, first Retry-After 2.0 s',
        ]);
        expect(b5SitesOverRestated([r])).toEqual([
            '7 b.example (bucket b.example): 3 refusals, 2 allowed (one refusal after a long wait: a bucket of burst 4), first Retry-After 2.0 s',
        ]);
    });

    it("holds every slow site's median response to 1.5 × its unloaded one, skipping sites that served nothing", () => {
        const slow = (host: string) => desc(host, 'slow', { concurrency: 2 });
        const slowLine = (ratios: number[], others: FamilySite[] = []) => {
            const sites = [...ratios.map((_, i) => slow(`s${i}.example`)), ...others];
            const runs = [
                ...ratios.map((responseRatio) => ({ responseRatio })),
                ...others.map(() => ({ responseRatio: 3 })),
            ];
            return b5GoalLines([result(sites, 1_000, 1_000, runs)])[6];
        };
        expect(slowLine([1.2, 1.5, NaN])).toMatchObject({ measured: '2/2 sites (worst 1.50×)', met: true });
        expect(slowLine([1.2, 1.6])).toMatchObject({ measured: '1/2 sites (worst 1.60×)', met: false });
        // The sites over are named, and only slow ones.
        const sites = [slow('s0.example'), slow('s1.example'), desc('n.example', 'nginx-limit-req-delay', { rate: 1 })];
        const over = result(sites, 1_000, 1_000, [
            { responseRatio: 1.5 },
            { responseRatio: 1.6 },
            { responseRatio: 3 },
        ]);
        expect(b5SlowSitesOver([over])).toEqual(['7 s1.example (slow s1.example): 1.60×']);
        expect(b5GoalMarkdown([over])).toContain('- 7 s1.example (slow s1.example): 1.60×');
        expect(slowLine([], [desc('n.example', 'nginx-limit-req-delay', { rate: 1 })])).toMatchObject({
            measured: '0/0 sites',
            met: true,
        });
    });

    it("prints the issue's lines, then the restated ones under their heading, then both lists of sites over", () => {
        const bare = desc('h.example', 'haproxy', { rate: 0.5 }, undefined, 20);
        const md = b5GoalMarkdown([result([bare], 1_000, 1_000, [{ refusals: 4 }])]);
        const heading = md.indexOf(
            'Restated where docs/rampup-bounds.md proves, or the oracle beside it measures, that no learner told nothing can do better:',
        );
        const issueOver = md.indexOf('Sites of (d) over what the goal allows them:');
        const restatedOver = md.indexOf('Sites of (d) over the restated allowance:');
        expect(md.slice(2, 9).map((l) => l.slice(4))).toEqual(
            b5GoalLines([result([bare], 1_000, 1_000, [{ refusals: 4 }])]).map((l) => `${l.goal}: ${l.measured}`),
        );
        expect(heading).toBe(10);
        expect(md[12]).toMatch(/^- ✅ every mix ≤ 1\.3 × the least possible \+ the first Retry-After \(restated/);
        expect(md[13]).toBe(
            '- ❌ at most the restated allowance at every site (restated: two in flight when a burst runs out, one refusal after a long wait, refusals that name no wait, a twin after the burst): 0/1 sites',
        );
        expect(issueOver).toBeGreaterThan(heading);
        expect(restatedOver).toBeGreaterThan(issueOver);
        expect(md[restatedOver + 2]).toBe(
            '- 7 h.example (haproxy h.example): 4 refusals, 3 allowed (refusals that name no wait: 0.5 req/s under 1.73 req/s), first Retry-After none',
        );
        expect(b5GoalMarkdown([result([bare], 1_000, 1_000)])).not.toContain(
            'Sites of (d) over the restated allowance:',
        );
    });
});

describe('B5 family: seed sets on the command line', () => {
    it('takes a named set or FIRST,COUNT, and names what it allows otherwise', () => {
        expect(parseBenchArgs(['--mixes', 'tuning']).mixes).toBe('tuning');
        expect(parseBenchArgs(['--mixes', '4100,5']).mixes).toEqual({ firstSeed: 4100, count: 5 });
        expect(() => parseBenchArgs(['--mixes', 'best'])).toThrow(
            `--mixes takes FIRST,COUNT (whole numbers, COUNT >= 1), 'report' or 'tuning'; got "best"`,
        );
    });
});
