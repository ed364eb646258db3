import { FAMILY_RANGES, ORACLE_PACE_SHARE } from './family-mixes';
import type { FamilySiteRun } from './family-score';
import { count, pairsOf } from './b5-judged';
import type { GoalLine, JudgedMix } from './b5-judged';
import type { MixResult } from './mix-family';

/**
 * B5's long crawls (500 pages a site) against the goal: each site's rate and refused share over the
 * second half of its requests, once the learner has converged, as the issue states the line and as
 * docs/rampup-bounds.md restates it against the oracle beside it ("A long crawl on a loaded machine").
 */

/** A long crawl's share of the true rate, and of requests refused, once converged (the goal). */
const LONG_RATE_SHARE = 0.9;
export const LONG_REFUSED_SHARE = 0.01;

/** A crawl of this many pages a site is long (a quick run's long mixes, cut to a few pages, are not). */
export const isLong = (pages: number) => pages >= FAMILY_RANGES.longPages;

/**
 * A site of (d) in a long mix, with its second half's figures: its rate over its true rate (its
 * capacity), its refused share, and the oracle's rate over the same (what a crawl told the limit keeps to).
 */
interface LongSite {
    seed: number;
    host: string;
    describe: string;
    rateShare: number;
    refusedShare: number;
    oracleShare?: number;
}

/** The sites of (d) in long mixes (500 pages) that sent any request in their second half. */
function longSites(pairs: readonly JudgedMix[]): LongSite[] {
    return pairs
        .filter((p) => isLong(p.mix.pages))
        .flatMap(({ mix, oracle, throttler }) =>
            throttler.sites.flatMap((s) => {
                const site = mix.sites.find((m) => m.host === s.host);
                if (site === undefined || s.late.requests === 0) return [];
                const share = (run: FamilySiteRun) => run.late.servedPerSecond / site.capacity;
                const told = oracle.sites.find((o) => o.host === s.host);
                const refusedShare = s.late.refusals / s.late.requests;
                const describe = site.describe || s.kind;
                return [
                    {
                        seed: mix.seed,
                        host: s.host,
                        describe,
                        rateShare: share(s),
                        refusedShare,
                        oracleShare: told && share(told),
                    },
                ];
            }),
        );
}

/** The sites that deliver at least `need` of their rate with at most 1 % refused: both lines' test. */
function meeting(sites: readonly LongSite[], need: (site: LongSite) => number): LongSite[] {
    return sites.filter((x) => x.rateShare >= need(x) && x.refusedShare <= LONG_REFUSED_SHARE);
}

/**
 * The long crawls' line: every site of a long mix (500 pages) delivers at least 90 % of its true rate
 * (its capacity) with at most 1 % refused, over the second half of its requests, once the learner has
 * converged. No line without a long mix.
 */
export function longCrawlLine(pairs: readonly JudgedMix[]): GoalLine[] {
    const sites = longSites(pairs);
    if (sites.length === 0) return [];
    const ok = meeting(sites, () => LONG_RATE_SHARE);
    const worstRate = Math.min(...sites.map((x) => x.rateShare));
    const worstRefused = Math.max(...sites.map((x) => x.refusedShare));
    return [
        {
            goal: "long crawls: every site ≥ 90 % of its true rate and ≤ 1 % refused after convergence (its requests' second half)",
            measured: `${count(ok, sites)} sites (worst ${(worstRate * 100).toFixed(0)} % of the rate, ${(worstRefused * 100).toFixed(1)} % refused)`,
            met: ok.length === sites.length,
        },
    ];
}

/**
 * A long crawl's site needs, restated: 90 % of its true rate where the oracle beside it delivered the
 * 95 % it was told to pace at, and that much less where the oracle fell short of it. What the oracle,
 * told the rate, does not deliver of its pace is the crawler's and the machine's (each request leaves
 * after the crawler's hooks and the client's setup, and its interval counts from then), and a learner
 * pays it too ("A long crawl on a loaded machine" in docs/rampup-bounds.md). Never more than the 90 %.
 */
export function restatedLongShare(oracleShare: number | undefined): number {
    if (oracleShare === undefined) return LONG_RATE_SHARE;
    return LONG_RATE_SHARE * Math.min(1, oracleShare / ORACLE_PACE_SHARE);
}

/** The long crawls' line restated with {@link restatedLongShare}; no line without a long mix. */
export function restatedLongLine(pairs: readonly JudgedMix[]): GoalLine[] {
    const sites = longSites(pairs);
    if (sites.length === 0) return [];
    const ok = meeting(sites, (x) => restatedLongShare(x.oracleShare));
    const worst = Math.min(...sites.map((x) => x.rateShare / restatedLongShare(x.oracleShare)));
    return [
        {
            goal: "long crawls: every site ≥ 90/95 of the oracle's rate on it and ≤ 1 % refused after convergence (restated: a long crawl on a loaded machine)",
            measured: `${count(ok, sites)} sites (worst ${(worst * 100).toFixed(0)} % of what it needs)`,
            met: ok.length === sites.length,
        },
    ];
}

/** Every site of (d) in a long mix, one line each, with the figures of {@link LongSite}. */
export function b5LongSites(results: readonly MixResult[]): string[] {
    const percent = (share: number) => (share * 100).toFixed(0);
    return longSites(pairsOf(results)).map(({ seed, host, describe, rateShare, refusedShare, oracleShare }) => {
        const need = percent(restatedLongShare(oracleShare));
        const beside = oracleShare === undefined ? '' : ` (oracle ${percent(oracleShare)} %, restated need ${need} %)`;
        const refused = (refusedShare * 100).toFixed(1);
        return `${seed} ${host} (${describe}): ${percent(rateShare)} % of its rate, ${refused} % refused${beside}`;
    });
}
