import { FAMILY_KINDS, FAMILY_RANGES, type FamilyKind } from './family-mixes';
import { RESPONSE_FLOOR_MS } from './family-score';
import type { MixContenderId, MixFamilySizes, MixResult, MixRun } from './mix-family';
import { MIX_CRAWLER } from './mix-family';
import { mdTable } from './markdown';

const NAMES: Record<MixContenderId, string> = {
    plain: '(a) plain Crawlee',
    sameDomainDelay: '(b) sameDomainDelaySecs = slowest site',
    oracle: '(c) oracle: told each limit, `rampup: false`',
    throttler: "(d) throttler, defaults (`{ domains: 'all' }`)",
};

const pct = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)} %` : 'n/a');
const times = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : 'n/a');

/** Median of the finite values (NaN when none). */
export function median(values: readonly number[]): number {
    const finite = values.filter(Number.isFinite);
    if (finite.length === 0) return NaN;
    const sorted = [...finite].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** The worst of the finite values: the largest, or the smallest when `low` is worse (NaN when none). */
export function worst(values: readonly number[], low = false): number {
    const finite = values.filter(Number.isFinite);
    if (finite.length === 0) return NaN;
    return low ? Math.min(...finite) : Math.max(...finite);
}

const runOf = (result: MixResult, contender: MixContenderId): MixRun | undefined =>
    result.runs.find((r) => r.contender === contender);

/** One contender's figures over the mixes, each as [median, worst]. */
export interface ContenderSummary {
    contender: MixContenderId;
    completed: [number, number];
    refused: [number, number];
    /** Makespan over the oracle's on the same mix. */
    vsOracle: [number, number];
    /** The worst site's median response time over its unloaded one. */
    response: [number, number];
    capped: number;
}

export function summarize(results: readonly MixResult[], contender: MixContenderId): ContenderSummary {
    const pairs = results.flatMap((r) => {
        const run = runOf(r, contender);
        return run ? [{ run, oracle: runOf(r, 'oracle') }] : [];
    });
    const completed = pairs.map(({ run }) => run.pagesCompleted / run.pagesTotal);
    const refused = pairs.map(({ run }) => run.refusedShare);
    const vsOracle = pairs.map(({ run, oracle }) => (oracle ? run.makespanMs / oracle.makespanMs : NaN));
    const response = pairs.map(({ run }) => run.responseRatio);
    return {
        contender,
        completed: [median(completed), worst(completed, true)],
        refused: [median(refused), worst(refused)],
        vsOracle: [median(vsOracle), worst(vsOracle)],
        response: [median(response), worst(response)],
        capped: pairs.filter(({ run }) => run.timedOut).length,
    };
}

/** One limiter kind under one contender, over every site of that kind in the family. */
export interface KindSummary extends Omit<ContenderSummary, 'capped'> {
    kind: FamilyKind;
    sites: number;
    /** Most requests of one such site in flight at once (server side). */
    maxInFlight: number;
}

export function summarizeKind(
    results: readonly MixResult[],
    kind: FamilyKind,
    contender: MixContenderId,
): KindSummary | undefined {
    const sites = results.flatMap((r) => {
        const run = runOf(r, contender);
        const oracle = runOf(r, 'oracle');
        return (run?.sites ?? [])
            .filter((s) => s.kind === kind)
            .map((s) => ({ s, oracle: oracle?.sites.find((o) => o.host === s.host) }));
    });
    if (sites.length === 0) return undefined;
    const completed = sites.map(({ s }) => s.completed / s.pages);
    const refused = sites.map(({ s }) => (s.requests ? s.refusals / s.requests : 0));
    const vsOracle = sites.map(({ s, oracle }) => (oracle?.makespanMs ? s.makespanMs / oracle.makespanMs : NaN));
    const response = sites.map(({ s }) => s.responseRatio);
    return {
        kind,
        contender,
        sites: sites.length,
        completed: [median(completed), worst(completed, true)],
        refused: [median(refused), worst(refused)],
        vsOracle: [median(vsOracle), worst(vsOracle)],
        response: [median(response), worst(response)],
        maxInFlight: Math.max(...sites.map(({ s }) => s.maxInFlight)),
    };
}

const pair = ([m, w]: [number, number], format: (x: number) => string) => [format(m), format(w)];

export function summaryRows(results: readonly MixResult[], contenders: readonly MixContenderId[]): string[][] {
    return contenders.map((c) => {
        const s = summarize(results, c);
        return [
            NAMES[c],
            ...pair(s.completed, pct),
            ...pair(s.refused, pct),
            ...pair(s.vsOracle, times),
            ...pair(s.response, times),
            String(s.capped),
        ];
    });
}

export function kindRows(results: readonly MixResult[], contenders: readonly MixContenderId[]): string[][] {
    return FAMILY_KINDS.flatMap((kind) =>
        contenders.flatMap((c) => {
            const s = summarizeKind(results, kind, c);
            if (!s) return [];
            return [
                [
                    kind,
                    NAMES[c].split(' ')[0],
                    String(s.sites),
                    ...pair(s.completed, pct),
                    ...pair(s.refused, pct),
                    ...pair(s.vsOracle, times),
                    ...pair(s.response, times),
                    String(s.maxInFlight),
                ],
            ];
        }),
    );
}

function mixRows(results: readonly MixResult[], contenders: readonly MixContenderId[]): string[][] {
    return results.map((result) => {
        const { mix } = result;
        const oracle = runOf(result, 'oracle');
        return [
            String(mix.seed),
            `${mix.kind}, ${mix.sites.length} × ${mix.pages}`,
            mix.sites.map((s) => s.describe).join('; '),
            `${(mix.idealMs / 1000).toFixed(1)} s`,
            oracle ? `${(oracle.makespanMs / 1000).toFixed(1)} s` : 'n/a',
            ...contenders.map((c) => {
                const r = runOf(result, c);
                if (!r) return 'n/a';
                const done = r.pagesCompleted === r.pagesTotal ? '' : `, ${pct(r.pagesCompleted / r.pagesTotal)} done`;
                const ratio = oracle ? r.makespanMs / oracle.makespanMs : NaN;
                return `${r.timedOut ? '≥ ' : ''}${times(ratio)}, ${pct(r.refusedShare)}${done}`;
            }),
        ];
    });
}

const FIGURES = [
    'completed (median)',
    'completed (worst)',
    'refused (median)',
    'refused (worst)',
    'makespan / oracle (median)',
    'makespan / oracle (worst)',
    'response / unloaded (median)',
    'response / unloaded (worst)',
];

export function b5Section(
    results: readonly MixResult[],
    sizes: MixFamilySizes,
    contenders: readonly MixContenderId[],
): string {
    const r = FAMILY_RANGES;
    return [
        '## B5 — a family of unknown sites and real limiters',
        '',
        `${results.length} mixes drawn from seeds ${sizes.firstSeed}–${sizes.firstSeed + sizes.count - 1} (see [the B5 notes](#b5-notes)): ` +
            `${r.shortSiteCounts[0]} to ${Math.max(...r.shortSiteCounts)} sites, short crawls of ${sizes.pages ?? r.shortPages} pages a site and long ones of ${sizes.pages ?? r.longPages} (${Math.round(sizes.longShare * 100)} % of the seeds). ` +
            `Every contender is an HttpCrawler with \`minConcurrency: ${MIX_CRAWLER.minConcurrency}, maxConcurrency: ${MIX_CRAWLER.maxConcurrency}\`, each against its own web and its own limiters. ` +
            `"makespan / oracle" divides by the oracle's makespan on the same mix; "response / unloaded" is the worst site's median response time over max(its unloaded response time, ${RESPONSE_FLOOR_MS} ms). ` +
            `A run is stopped at ${sizes.capIdeal}× ideal + ${sizes.capSlackMs / 1000} s (counted in "capped").`,
        '',
        mdTable(['contender', ...FIGURES, 'capped'], summaryRows(results, contenders), [
            'l',
            ...FIGURES.map(() => 'r' as const),
            'r',
        ]),
        '',
        'Per limiter kind (each figure over the sites of that kind; makespan of the site against the oracle on the same site):',
        '',
        mdTable(['kind', 'contender', 'sites', ...FIGURES, 'most in flight'], kindRows(results, contenders), [
            'l',
            'l',
            'r',
            ...FIGURES.map(() => 'r' as const),
            'r',
        ]),
        '',
        'Per mix (makespan / oracle, refused):',
        '',
        mdTable(
            ['seed', 'crawl', 'sites', 'ideal', 'oracle', ...contenders.map((c) => NAMES[c].split(' ')[0])],
            mixRows(results, contenders),
            ['l', 'l', 'l', 'r', 'r', ...contenders.map(() => 'r' as const)],
        ),
    ].join('\n');
}
