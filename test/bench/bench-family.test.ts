import type { LogEntry } from '@crawlee-throttling/polite-web';

import { parseBenchArgs } from '../../packages/bench/src/cli-args';
import {
    drawFamilyMix,
    drawFamilyMixes,
    FAMILY_KINDS,
    FAMILY_RANGES,
    type FamilyMix,
    oracleScope,
} from '../../packages/bench/src/family-mixes';
import { b5GoalLines, b5SitesOver, refusalAllowance } from '../../packages/bench/src/b5-goals';
import { retryAfterMs, scoreFamilyRun } from '../../packages/bench/src/family-score';
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

describe('B5 family: seed sets on the command line', () => {
    it('takes a named set or FIRST,COUNT, and names what it allows otherwise', () => {
        expect(parseBenchArgs(['--mixes', 'tuning']).mixes).toBe('tuning');
        expect(parseBenchArgs(['--mixes', '4100,5']).mixes).toEqual({ firstSeed: 4100, count: 5 });
        expect(() => parseBenchArgs(['--mixes', 'best'])).toThrow(
            `--mixes takes FIRST,COUNT (whole numbers, COUNT >= 1), 'report' or 'tuning'; got "best"`,
        );
    });
});
