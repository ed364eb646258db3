import { b5GoalMarkdown } from './b5-goals';
import { FAMILY_KINDS, FAMILY_RANGES, type FamilyKind } from './family-mixes';
import { RESPONSE_FLOOR_MS } from './family-score';
import type { MixContenderId, MixFamilySizes, MixResult, MixRun } from './mix-family';
import { MIX_CRAWLER } from './mix-family';
import { mdTable } from './markdown';
import { median } from './stats';

const NAMES: Record<MixContenderId, string> = {
    plain: '(a) plain Crawlee',
    sameDomainDelay: '(b) sameDomainDelaySecs = slowest site',
    oracle: '(c) oracle: told each limit, `rampup: false`',
    throttler: "(d) throttler, defaults (`{ domains: 'all' }`)",
};

const pct = (x: number) => (Number.isFinite(x) ? `${(x * 100).toFixed(1)} %` : 'n/a');
const times = (x: number) => (Number.isFinite(x) ? `${x.toFixed(2)}×` : 'n/a');

/** Median of the finite values (NaN when none). */
const finiteMedian = (values: readonly number[]): number => median(values.filter(Number.isFinite));

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
        completed: [finiteMedian(completed), worst(completed, true)],
        refused: [finiteMedian(refused), worst(refused)],
        vsOracle: [finiteMedian(vsOracle), worst(vsOracle)],
        response: [finiteMedian(response), worst(response)],
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
        completed: [finiteMedian(completed), worst(completed, true)],
        refused: [finiteMedian(refused), worst(refused)],
        vsOracle: [finiteMedian(vsOracle), worst(vsOracle)],
        response: [finiteMedian(response), worst(response)],
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

/** What B5's family holds, who runs it and how to run it: the part of the section no run changes. */
export function b5Description(): string[] {
    const r = FAMILY_RANGES;
    const span = (range: readonly number[]) => `${range[0]}–${range[range.length - 1]}`;
    return [
        'Each mix is a few sites of these kinds, every parameter drawn from a seeded range (rates ' +
            `${span(r.rate)} req/s, long crawls ${span(r.longRate)}; latency ${span(r.latencyMs)} ms unless said):`,
        '',
        `- \`bucket\`: polite-web token bucket, burst ${span(r.burst)}, 429 or 503 with \`Retry-After\` in seconds, as an HTTP-date or absent.`,
        `- \`window\`: polite-web fixed window of ${r.windowSecs.join(', ')} s (from the first request, or on the epoch), RateLimit headers that tell the truth about it: express-rate-limit's draft-8 or legacy (\`X-RateLimit-*\`, reset in epoch seconds), GitHub's, IETF or \`RateLimit-*\` (delta seconds); \`Retry-After\` to the window's end.`,
        `- \`slow\`: a server that never says "too many": ${span(r.workers)} workers, ${span(r.msPerPage)} ms a page, one FIFO queue, so response times grow with load; a third have a queue limit (503 beyond).`,
        `- \`nginx-limit-req\` / \`nginx-limit-req-delay\`: a real nginx \`limit_req\` (whole requests a minute, burst ${span(r.burst)}) with \`nodelay\`, or without it (requests within the burst are held, not refused); 429 or 503 (\`limit_req_status\`), no \`Retry-After\`.`,
        `- \`nginx-limit-conn\`: a real nginx \`limit_conn\` of ${span(r.conns)} in front of ${span(r.connLatencyMs)} ms pages (\`proxy_pass\` to a Node origin), 503 or 429 beyond.`,
        '- `haproxy`: a real haproxy stick table, `http_req_rate(10s)` above N denied with 429 (refused requests count too).',
        `- \`express-rate-limit\`: express-rate-limit v8, memory store, a window of ${r.windowSecs.join(', ')} s, \`standardHeaders: 'draft-8'\` or legacy headers, 429 with \`Retry-After\`.`,
        '- `rate-limiter-flexible`: `RateLimiterMemory` of points per 1, 2 or 5 s, 429 with `Retry-After`.',
        '',
        "nginx and haproxy run as child processes on free 127.0.0.1 ports with their config in a temp dir (`.ci/install-limiters.sh` installs them from Debian); the Node limiters run in the bench process. polite-web sits in front of every site as the crawlers' proxy and logs each request (arrival, answer, in flight, refusal). A mix's first site turns through the kinds with the seed, so nine consecutive seeds meet every kind.",
        '',
        "Contenders, every one an HttpCrawler with the same settings: (a) Crawlee alone; (b) Crawlee with one `sameDomainDelaySecs` = the slowest site's interval; (c) the oracle: the throttler told each site's limit as its scope, `rampup: false`, `delaySecs` = 1 / (0.95 × rate) with slots for the response time, or `concurrency` = the cap (a slow server's workers, `limit_conn`'s N); (d) the throttler with defaults (`{ domains: 'all' }`), told nothing.",
        '',
        'Run it with `npm run bench -- --only B5` (the report seeds, 3000–3026), `--mixes tuning` (4000–4026: tune on these, never on the report seeds), `--mixes FIRST,COUNT`, or `--quick` (seeds 2000–2008, 8 pages a site, about 2 minutes on an idle 2-core machine). `B5_TRACE=<host>` (a host as the per-mix table names it, e.g. `f3017-s2.example`) prints to stderr how the throttler with defaults crawled that site: each change of its pace, slots and backoff, then its arrivals.',
    ];
}

export function b5Section(
    results: readonly MixResult[],
    sizes: MixFamilySizes,
    contenders: readonly MixContenderId[],
): string {
    const r = FAMILY_RANGES;
    return [
        '## B5 — a family of unknown sites and real limiters',
        '',
        ...b5Description(),
        '',
        `This run: ${results.length} mixes from seeds ${sizes.firstSeed}–${sizes.firstSeed + sizes.count - 1}, ` +
            `${r.shortSiteCounts[0]} to ${Math.max(...r.shortSiteCounts)} sites, short crawls of ${sizes.pages ?? r.shortPages} pages a site and long ones of ${sizes.pages ?? r.longPages} (${Math.round(sizes.longShare * 100)} % of the seeds). ` +
            `Every contender is an HttpCrawler with \`minConcurrency: ${MIX_CRAWLER.minConcurrency}, maxConcurrency: ${MIX_CRAWLER.maxConcurrency}\`, each against its own web and its own limiters; a short mix's contenders run side by side, a long mix's one after another. ` +
            `"makespan / oracle" divides by the oracle's makespan on the same mix; "response / unloaded" is the worst site's median response time over max(its unloaded response time, ${RESPONSE_FLOOR_MS} ms). ` +
            `A run is stopped at ${sizes.capIdeal}× ideal + ${sizes.capSlackMs / 1000} s (counted in "capped"; ideal = the slowest site's pages over its capacity).`,
        '',
        mdTable(['contender', ...FIGURES, 'capped'], summaryRows(results, contenders), [
            'l',
            ...FIGURES.map(() => 'r' as const),
            'r',
        ]),
        '',
        ...b5GoalMarkdown(results),
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
