import type { FamilyKind } from './family-mixes';
import type { FamilySiteRun } from './family-score';
import { median } from './stats';
import type { MixResult, MixRun } from './mix-family';

/**
 * B5 against the pace learner's goal (docs/rampup.md), for the throttler with defaults: each mix's
 * makespan against the oracle's plus the first `Retry-After` its sites imposed, and each site's
 * refusals against what its kind allows. Pure: everything comes from the runs.
 */

/** Kinds whose RateLimit headers announce the quota before it runs out. */
const ANNOUNCING: ReadonlySet<FamilyKind> = new Set(['window', 'express-rate-limit']);

/** The most refusals a site may cost: 0 where headers announce the quota, 1 where the first wait is ≥ 2 s, else 2. */
export function refusalAllowance(site: FamilySiteRun): number {
    if (ANNOUNCING.has(site.kind)) return 0;
    return site.firstRetryAfterMs >= 2_000 ? 1 : 2;
}

export interface GoalLine {
    goal: string;
    measured: string;
    met: boolean;
}

const runOf = (r: MixResult, contender: MixRun['contender']) => r.runs.find((x) => x.contender === contender);

/** The goal's lines, measured on `results`; empty when no mix ran both the oracle and the throttler. */
export function b5GoalLines(results: readonly MixResult[]): GoalLine[] {
    const pairs = results
        .map((r) => ({ mix: r.mix, oracle: runOf(r, 'oracle'), throttler: runOf(r, 'throttler') }))
        .filter((p): p is { mix: MixResult['mix']; oracle: MixRun; throttler: MixRun } => !!p.oracle && !!p.throttler);
    if (pairs.length === 0) return [];
    const ratios = pairs.map((p) => p.throttler.makespanMs / p.oracle.makespanMs);
    const within = pairs.filter((p) => {
        const firstWait = Math.max(0, ...p.throttler.sites.map((s) => s.firstRetryAfterMs));
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
    const count = (ok: unknown[], all: unknown[]) => `${ok.length}/${all.length}`;
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
    ];
    return lines;
}

/**
 * The sites of (d) refused more often than the goal allows them, one line each: the mix, the site as
 * the tables describe it, its refusals against its allowance, and the first wait it named. The goal's
 * counts say how many; these say which, so a bound or a fix can be checked against the very sites.
 */
export function b5SitesOver(results: readonly MixResult[]): string[] {
    return results.flatMap((r) => {
        const throttler = runOf(r, 'throttler');
        if (!throttler || !runOf(r, 'oracle')) return [];
        return throttler.sites
            .filter((s) => s.refusals > refusalAllowance(s))
            .map((s) => {
                const describe = r.mix.sites.find((m) => m.host === s.host)?.describe ?? s.kind;
                const wait = s.firstRetryAfterMs > 0 ? `${(s.firstRetryAfterMs / 1000).toFixed(1)} s` : 'none';
                return `${r.mix.seed} ${s.host} (${describe}): ${s.refusals} refusals, ${refusalAllowance(s)} allowed, first Retry-After ${wait}`;
            });
    });
}

/** The goal's lines as markdown bullets, ✅ or ❌, then the sites over their allowance. */
export function b5GoalMarkdown(results: readonly MixResult[]): string[] {
    const lines = b5GoalLines(results);
    if (lines.length === 0) return [];
    const over = b5SitesOver(results);
    return [
        'The pace learner\'s goal, measured on (d) (each site\'s refusals against what its kind allows: "sends headers" is `window` and `express-rate-limit`):',
        '',
        ...lines.map((l) => `- ${l.met ? '✅' : '❌'} ${l.goal}: ${l.measured}`),
        ...(over.length === 0
            ? []
            : ['', 'Sites of (d) over what the goal allows them:', '', ...over.map((o) => `- ${o}`)]),
    ];
}
