import { allowanceRatio, bareForced, bareThreshold, PAIR_REFUSALS, retryThreshold } from './allowance-bound';
import { FAMILY_RANGES, type FamilyKind, type FamilyMix, type FamilySite } from './family-mixes';
import { count, pairsOf } from './b5-judged';
import type { GoalLine, JudgedMix } from './b5-judged';
import { b5LongSites, isLong, LONG_REFUSED_SHARE, longCrawlLine, restatedLongLine } from './b5-long-crawls';
import type { FamilySiteRun } from './family-score';
import { median } from './stats';
import type { MixResult, MixRun } from './mix-family';
import { twinForcedRefusals } from './twin-forced';
import type { BucketSite, MixLine } from './twin-forced';

export { doublingRatio } from './allowance-bound';
export type { GoalLine, JudgedMix } from './b5-judged';
export { b5LongSites, restatedLongShare } from './b5-long-crawls';

/**
 * B5 against the pace learner's goal (docs/rampup.md), for the throttler with defaults: each mix's
 * makespan against the oracle's plus the first `Retry-After` its sites imposed, and each site's
 * refusals against what its kind allows. Beside the goal as the issue states it, the parts no learner
 * told nothing can meet are restated with the bounds docs/rampup-bounds.md proves ("What no learner told
 * nothing can meet"), so a run shows both. Pure: everything comes from the runs.
 */

/** Kinds whose RateLimit headers announce the quota before it runs out. */
const ANNOUNCING: ReadonlySet<FamilyKind> = new Set(['window', 'express-rate-limit']);

/** The most refusals a site may cost: 0 where headers announce the quota, 1 where the first wait is ≥ 2 s, else 2. */
export function refusalAllowance(site: FamilySiteRun): number {
    if (ANNOUNCING.has(site.kind)) return 0;
    return site.firstRetryAfterMs >= 2_000 ? 1 : 2;
}

/** What an allowance rests on: the most refusals, and the bound of docs/rampup-bounds.md (or the issue's rule) that sets it. */
export interface Allowance {
    allowed: number;
    bound: string;
}

/** What a site is, as far as the restated allowance needs: its limit and, for a token bucket, its burst. */
export type SiteTruth = Pick<FamilySite, 'truth' | 'site'> & Partial<Pick<FamilySite, 'unloadedMs'>>;

/**
 * The most refusals a site may cost where docs/rampup-bounds.md proves no learner told nothing can promise
 * fewer, with the bound it rests on. Headers that announce the quota still allow none. Elsewhere the
 * refusals of the round where the site's first burst runs out, then those a learner cannot avoid after
 * it, and never less than the issue's allowance:
 *
 * - the round costs 2 in a short crawl of a site that answers as slowly as a concurrency limit of the
 *   family: a learner must send pairs early there, and the burst may end at one ("Two in flight when a
 *   burst runs out"); elsewhere 1;
 * - after a first wait of 2 s or more, a token bucket with a burst of 2 or more costs one more: it
 *   answers like a window until the wait is over ("One refusal after a long wait");
 * - a bare refusal costs the retry at a bucket slower than {@link retryThreshold}, and a gap too short
 *   at one slower than {@link bareThreshold} ("Refusals that name no wait"; `bareForced`).
 *
 * A long crawl may add the probes that find a raised limit, each refused where the limit stayed: the
 * 1 % of its second half the issue's own long-crawl line allows ("Probes on a long crawl"). Given its
 * mix's `line`, a token bucket over that may add the refusals a twin bucket forced ("A twin after the
 * burst", twin-forced.ts).
 */
export function restatedBound(site: FamilySiteRun, truth: SiteTruth, line?: MixLine): Allowance {
    const base = withProbes(site, firstRefusalsBound(site, truth));
    const bucket = bucketOf(site, truth);
    if (line === undefined || bucket === undefined || site.arrivals === undefined || site.refusals <= base.allowed)
        return base;
    const twinAllowance = (twin: BucketSite) =>
        restatedAllowance(site, {
            ...truth,
            truth: { rate: twin.rate },
            site: { ...truth.site, rate: twin.rate, burst: twin.burst },
        });
    const forced = twinForcedRefusals(bucket, site.arrivals, line, base.allowed, twinAllowance);
    if (forced === 0) return base;
    return { allowed: base.allowed + forced, bound: `${base.bound}; forced by a twin bucket: ${forced} more` };
}

/** `first`, plus on a long crawl the probes that find a raised limit: see {@link restatedBound}. */
function withProbes(site: FamilySiteRun, first: Allowance): Allowance {
    if (ANNOUNCING.has(site.kind) || !isLong(site.pages)) return first;
    const probes = Math.floor(LONG_REFUSED_SHARE * site.late.requests);
    if (probes === 0) return first;
    return { allowed: first.allowed + probes, bound: `${first.bound}; a long crawl's probes: ${probes} more` };
}

/** A token bucket site as twin-forced.ts replays it; undefined for other kinds. */
function bucketOf(site: FamilySiteRun, truth: SiteTruth): BucketSite | undefined {
    const { rate, burst, latencyMs, refusal } = truth.site;
    if (site.kind !== 'bucket' || rate === undefined) return undefined;
    return { rate, burst: burst ?? 1, latencyMs: latencyMs ?? 0, retryAfter: refusal?.retryAfter ?? 'seconds' };
}

/** Answer times of the family's concurrency limits (slow servers, nginx `limit_conn`), ms. */
const CAP_ANSWER_MS = [
    Math.min(FAMILY_RANGES.msPerPage[0], FAMILY_RANGES.connLatencyMs[0]),
    Math.max(FAMILY_RANGES.msPerPage[1], FAMILY_RANGES.connLatencyMs[1]),
] as const;

/** Whether the round where `site`'s burst runs out may hold two requests: see {@link restatedBound}. */
function pairAtBurstEnd(site: FamilySiteRun, truth: SiteTruth): boolean {
    const ms = truth.unloadedMs;
    return !isLong(site.pages) && ms !== undefined && ms >= CAP_ANSWER_MS[0] && ms <= CAP_ANSWER_MS[1];
}

/** The allowance of {@link restatedBound} for the refusals that find a site's limit, before any probe. */
function firstRefusalsBound(site: FamilySiteRun, truth: SiteTruth): Allowance {
    if (ANNOUNCING.has(site.kind)) return { allowed: 0, bound: 'RateLimit headers announce the quota' };
    const pair = pairAtBurstEnd(site, truth);
    const round = pair ? PAIR_REFUSALS : 1;
    const reasons = pair ? ['two in flight when a burst runs out'] : [];
    const issue = site.firstRetryAfterMs >= 2_000 ? 1 : 2;
    let after = 0;
    const rate = truth.truth.rate;
    if (site.firstRetryAfterMs >= 2_000) {
        // polite-web's bucket holds one token unless told a burst.
        const burst = truth.site.burst ?? 1;
        if (site.kind === 'bucket' && burst >= 2) {
            after = 1;
            reasons.push(`one refusal after a long wait: a bucket of burst ${burst}`);
        }
    } else if (site.firstRetryAfterMs === 0 && rate !== undefined) {
        after = bareForced(rate);
        if (after === 2)
            reasons.push(`refusals that name no wait: ${rate} req/s under ${bareThreshold().toFixed(2)} req/s`);
        else if (after === 1) reasons.push(`a retry refused: ${rate} req/s under ${retryThreshold().toFixed(2)} req/s`);
    }
    const allowed = round + after;
    if (allowed <= issue)
        return { allowed: issue, bound: issue === 1 ? 'first Retry-After ≥ 2 s' : 'no RateLimit headers' };
    return { allowed, bound: reasons.join('; ') };
}

/** The most refusals a site may cost under the bounds of docs/rampup-bounds.md: see {@link restatedBound}. */
export function restatedAllowance(site: FamilySiteRun, truth: SiteTruth, line?: MixLine): number {
    return restatedBound(site, truth, line).allowed;
}

/** The longest wait a first refusal named at any of the run's sites: the goal allows it on top. */
const firstWaitOf = (run: MixRun) => Math.max(0, ...run.sites.map((s) => s.firstRetryAfterMs));

/** A site as the mix describes it; without a description, a site of no known limit (the issue's allowance). */
function siteOf(mix: FamilyMix, host: string): SiteTruth & { describe?: string } {
    return mix.sites.find((m) => m.host === host) ?? { truth: {}, site: { host } };
}

/** The goal's lines, measured on `results`; empty when no mix ran both the oracle and the throttler. */
export function b5GoalLines(results: readonly MixResult[]): GoalLine[] {
    const pairs = pairsOf(results);
    if (pairs.length === 0) return [];
    const ratios = pairs.map((p) => p.throttler.makespanMs / p.oracle.makespanMs);
    const within = pairs.filter((p) => {
        const firstWait = firstWaitOf(p.throttler);
        return !p.throttler.timedOut && p.throttler.makespanMs <= 1.3 * p.oracle.makespanMs + firstWait;
    });
    const sites = pairs.flatMap((p) => p.throttler.sites);
    const bySiteRule = (pick: (s: FamilySiteRun) => boolean) => {
        const group = sites.filter(pick);
        return { group, ok: group.filter((s) => s.refusals <= refusalAllowance(s)) };
    };
    const bare = bySiteRule((s) => refusalAllowance(s) === 2);
    const longWait = bySiteRule((s) => refusalAllowance(s) === 1);
    const announcing = bySiteRule((s) => refusalAllowance(s) === 0);
    const requests = pairs.reduce((t, p) => t + p.throttler.requests, 0);
    const refusals = pairs.reduce((t, p) => t + p.throttler.refusals, 0);
    const share = requests ? refusals / requests : 0;
    const mid = median(ratios);
    const slow = sites.filter((s) => s.kind === 'slow' && !Number.isNaN(s.responseRatio));
    const unloaded = slow.filter((s) => s.responseRatio <= 1.5);
    const worstSlow = Math.max(0, ...slow.map((s) => s.responseRatio));
    const long = longCrawlLine(pairs);
    const lines: GoalLine[] = [
        {
            goal: "every mix ≤ 1.3 × the oracle's makespan + the first Retry-After",
            measured: `${count(within, pairs)} mixes`,
            met: within.length === pairs.length,
        },
        { goal: 'median mix ≤ 1.15 × the oracle', measured: `${mid.toFixed(2)}×`, met: mid <= 1.15 },
        {
            goal: 'at most 2 refusals per site that sends no RateLimit headers',
            measured: `${count(bare.ok, bare.group)} sites`,
            met: bare.ok.length === bare.group.length,
        },
        {
            goal: 'at most 1 where the first Retry-After is ≥ 2 s',
            measured: `${count(longWait.ok, longWait.group)} sites`,
            met: longWait.ok.length === longWait.group.length,
        },
        {
            goal: 'none where RateLimit headers announce the quota',
            measured: `${count(announcing.ok, announcing.group)} sites`,
            met: announcing.ok.length === announcing.group.length,
        },
        {
            goal: '≤ 3 % refused over the whole family',
            measured: `${(share * 100).toFixed(1)} % (${refusals}/${requests})`,
            met: share <= 0.03,
        },
        {
            goal: "every slow site's median response ≤ 1.5 × its unloaded one",
            measured: `${count(unloaded, slow)} sites${slow.length ? ` (worst ${worstSlow.toFixed(2)}×)` : ''}`,
            met: unloaded.length === slow.length,
        },
        ...long,
    ];
    return lines;
}

/** The kinds whose limit is a number of requests in flight, which a learner told nothing has to find by growing. */
const CONCURRENCY_KINDS: ReadonlySet<FamilyKind> = new Set(['slow', 'nginx-limit-conn']);

/**
 * The least makespan any learner told nothing can reach on `pair`'s mix while it keeps to the restated
 * allowance: the oracle's, or, where a site's limit is a concurrency W, that site's makespan under the
 * oracle times the bound for W, the mix's pages and the site's answer time, whichever is longer. The
 * bound is the doubling bound, or more where a token bucket of the family answers as slowly as the site
 * (`allowanceRatio`: refusals pay for concurrency).
 */
export function leastMakespanMs(pair: JudgedMix): number {
    return Math.max(pair.oracle.makespanMs, ...concurrencyBounds(pair));
}

/** Each concurrency site's least makespan in `pair`'s mix but `except`'s (see {@link leastMakespanMs}). */
function concurrencyBounds(pair: JudgedMix, except?: string): number[] {
    return pair.mix.sites
        .filter((s) => CONCURRENCY_KINDS.has(s.kind) && s.truth.concurrency !== undefined && s.host !== except)
        .map((s) => {
            const oracleSite = pair.oracle.sites.find((o) => o.host === s.host);
            const ratio = allowanceRatio(s.truth.concurrency!, pair.mix.pages, s.unloadedMs);
            return oracleSite ? oracleSite.makespanMs * ratio : 0;
        });
}

/**
 * `pair`'s line as a twin of its site `host` is judged against it (twin-forced.ts): the mix with the
 * twin in that site's place, so the least possible of the others, the oracle's last answer at each
 * counted from its mix's start.
 */
function mixLine(pair: JudgedMix, host: string): MixLine {
    const { oracle, throttler } = pair;
    const others = oracle.sites
        .filter((o) => o.host !== host && o.arrivals !== undefined && o.arrivals.length > 0)
        .map((o) => o.arrivals![0].at - oracle.startedAt + o.makespanMs);
    const othersLeastMs = Math.max(0, ...others, ...concurrencyBounds(pair, host));
    return {
        startedAt: throttler.startedAt,
        othersLeastMs,
        firstWaitMs: firstWaitOf(throttler),
        pages: pair.mix.pages,
    };
}

/**
 * The goal's lines no learner told nothing can meet, restated with the bounds docs/rampup-bounds.md proves:
 * the makespan against the least possible, refusals against the restated allowance. Empty when no mix
 * ran both the oracle and the throttler.
 */
export function b5RestatedLines(results: readonly MixResult[]): GoalLine[] {
    const pairs = pairsOf(results);
    if (pairs.length === 0) return [];
    const within = pairs.filter(
        (p) => !p.throttler.timedOut && p.throttler.makespanMs <= 1.3 * leastMakespanMs(p) + firstWaitOf(p.throttler),
    );
    const sites = judgedSites(results);
    const ok = sites.filter(({ s, truth, line }) => s.refusals <= restatedAllowance(s, truth, line));
    return [
        {
            goal: 'every mix ≤ 1.3 × the least possible + the first Retry-After (restated: short crawls of a concurrency limit, refusals pay for concurrency)',
            measured: `${count(within, pairs)} mixes`,
            met: within.length === pairs.length,
        },
        {
            goal: 'at most the restated allowance at every site (restated: two in flight when a burst runs out, one refusal after a long wait, refusals that name no wait, a twin after the burst)',
            measured: `${count(ok, sites)} sites`,
            met: ok.length === sites.length,
        },
        ...restatedLongLine(pairs),
    ];
}

/** A site's first named wait as the lists print it. */
const waitText = (s: FamilySiteRun) =>
    s.firstRetryAfterMs > 0 ? `${(s.firstRetryAfterMs / 1000).toFixed(1)} s` : 'none';

/** One site over its allowance, as the lists print it: the mix, the site as the tables describe it, its refusals against `allowed`. */
function overLine(mix: FamilyMix, s: FamilySiteRun, truth: { describe?: string }, allowed: string): string {
    return `${mix.seed} ${s.host} (${truth.describe ?? s.kind}): ${s.refusals} refusals, ${allowed}, first Retry-After ${waitText(s)}`;
}

/** The throttler's sites of the judged mixes, each with what its mix says about it. */
function judgedSites(results: readonly MixResult[]) {
    return pairsOf(results).flatMap((p) =>
        p.throttler.sites.map((s) => ({ mix: p.mix, s, truth: siteOf(p.mix, s.host), line: mixLine(p, s.host) })),
    );
}

/**
 * The sites of (d) refused more often than the goal allows them, one line each: the mix, the site as
 * the tables describe it, its refusals against its allowance, and the first wait it named. The goal's
 * counts say how many; these say which, so a bound or a fix can be checked against the very sites.
 */
export function b5SitesOver(results: readonly MixResult[]): string[] {
    return judgedSites(results)
        .filter(({ s }) => s.refusals > refusalAllowance(s))
        .map(({ mix, s, truth }) => overLine(mix, s, truth, `${refusalAllowance(s)} allowed`));
}

/** The sites of (d) over the restated allowance, as {@link b5SitesOver} lists them, each naming the bound that applied. */
export function b5SitesOverRestated(results: readonly MixResult[]): string[] {
    return judgedSites(results).flatMap(({ mix, s, truth, line }) => {
        const { allowed, bound } = restatedBound(s, truth, line);
        if (s.refusals <= allowed) return [];
        return [overLine(mix, s, truth, `${allowed} allowed (${bound})`)];
    });
}

/** The slow sites of (d) whose median response was over 1.5 × their unloaded one, one line each. */
export function b5SlowSitesOver(results: readonly MixResult[]): string[] {
    return judgedSites(results)
        .filter(({ s }) => s.kind === 'slow' && s.responseRatio > 1.5)
        .map(
            ({ mix, s, truth }) =>
                `${mix.seed} ${s.host} (${truth.describe ?? s.kind}): ${s.responseRatio.toFixed(2)}×`,
        );
}

/**
 * The goal's lines as markdown bullets, ✅ or ❌, then the same goal restated where docs/rampup-bounds.md
 * proves no learner told nothing can meet it, then the sites over each allowance.
 */
export function b5GoalMarkdown(results: readonly MixResult[]): string[] {
    const lines = b5GoalLines(results);
    if (lines.length === 0) return [];
    const bullet = (l: GoalLine) => `- ${l.met ? '✅' : '❌'} ${l.goal}: ${l.measured}`;
    const list = (heading: string, items: string[]) =>
        items.length === 0 ? [] : ['', heading, '', ...items.map((o) => `- ${o}`)];
    return [
        'The pace learner\'s goal, measured on (d) (each site\'s refusals against what its kind allows: "sends headers" is `window` and `express-rate-limit`):',
        '',
        ...lines.map(bullet),
        '',
        'Restated where docs/rampup-bounds.md proves, or the oracle beside it measures, that no learner told nothing can do better:',
        '',
        ...b5RestatedLines(results).map(bullet),
        ...list('Sites of (d) over what the goal allows them:', b5SitesOver(results)),
        ...list('Sites of (d) over the restated allowance:', b5SitesOverRestated(results)),
        ...list('Slow sites of (d) whose median response was over 1.5 × their unloaded one:', b5SlowSitesOver(results)),
        ...list("Long crawls' sites of (d), over the second half of their requests:", b5LongSites(results)),
    ];
}
