import type { MixContenderId, MixFamilySizes, MixResult, MixRun } from './mix-family';
import { MIX_CRAWLER, slowestIntervalSecs } from './mix-family';
import { MIX_RANGES } from './mixes';
import { mdTable } from './markdown';

const NAMES: Record<MixContenderId, string> = {
    plain: '(a) plain Crawlee',
    sameDomainDelay: '(b) sameDomainDelaySecs = slowest site',
    throttler: "(c) throttler, defaults (`{ domains: 'all' }`: adaptive pacing)",
    throttlerNoRampup: "(d) throttler, backoff alone (`{ domains: 'all', rampup: false }`)",
};

const pct = (x: number) => `${(x * 100).toFixed(1)} %`;
const ratio = (r: MixRun) => `${r.timedOut ? '≥ ' : ''}${(r.makespanMs / r.idealMs).toFixed(2)}×`;

function median(values: number[]): number {
    const sorted = [...values].sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

/** Median and worst of completed %, refused % and makespan / ideal per contender. */
function summaryRows(results: MixResult[], contenders: readonly MixContenderId[]): string[][] {
    return contenders.map((c) => {
        const runs = results.map((r) => r.runs.find((x) => x.contender === c)!).filter(Boolean);
        const completed = runs.map((r) => r.pagesCompleted / r.pagesTotal);
        const refused = runs.map((r) => r.refusedShare);
        const ratios = runs.map((r) => r.makespanMs / r.idealMs);
        const obedient = results.map((r, i) => runs[i].makespanMs / r.mix.obedientIdealMs);
        const capped = runs.filter((r) => r.timedOut).length;
        return [
            NAMES[c],
            pct(median(completed)),
            pct(Math.min(...completed)),
            pct(median(refused)),
            pct(Math.max(...refused)),
            `${median(ratios).toFixed(2)}×`,
            `${Math.max(...ratios).toFixed(2)}×`,
            `${median(obedient).toFixed(2)}×`,
            `${Math.max(...obedient).toFixed(2)}×`,
            String(capped),
        ];
    });
}

function mixRows(results: MixResult[], contenders: readonly MixContenderId[]): string[][] {
    return results.map(({ mix, runs }) => {
        const slow = mix.sites.reduce((a, b) => (a.rate! <= b.rate! ? a : b));
        const describe = `${slow.rate} req/s, burst ${slow.burst}, ${slow.latencyMs} ms, ${slow.refusal!.status} ${slow.refusal!.retryAfter}/${slow.refusal!.rateLimitHeaders}`;
        return [
            String(mix.seed),
            `${mix.kind}, ${mix.sites.length} × ${mix.pages}`,
            describe,
            `${(mix.idealMs / 1000).toFixed(1)} s${mix.obedientIdealMs > mix.idealMs ? ` (obedient ${(mix.obedientIdealMs / 1000).toFixed(1)} s)` : ''}`,
            ...contenders.map((c) => {
                const r = runs.find((x) => x.contender === c)!;
                const done = r.pagesCompleted === r.pagesTotal ? '' : `, ${pct(r.pagesCompleted / r.pagesTotal)} done`;
                return `${ratio(r)}, ${pct(r.refusedShare)}${done}`;
            }),
        ];
    });
}

export function b5Section(results: MixResult[], sizes: MixFamilySizes, contenders: readonly MixContenderId[]): string {
    const ranges =
        `rates ${MIX_RANGES.rate[0]}–${MIX_RANGES.rate[1]} req/s (long crawls ${MIX_RANGES.longRate[0]}–${MIX_RANGES.longRate[1]}, so one run stays near a minute), ` +
        `bursts ${MIX_RANGES.burst[0]}–${MIX_RANGES.burst[1]}, latency ${MIX_RANGES.latencyMs[0]}–${MIX_RANGES.latencyMs[1]} ms, ` +
        `429 or 503 with \`Retry-After\` in seconds, as an HTTP-date or absent, RateLimit headers (IETF, legacy, X-RateLimit) on a third of the sites`;
    const example = results[0] ? slowestIntervalSecs(results[0].mix) : undefined;
    return [
        '## B5 — a family of unknown sites',
        '',
        `${results.length} mixes drawn from seeds ${sizes.firstSeed}–${sizes.firstSeed + sizes.count - 1}: ${ranges}; ` +
            `1 to ${Math.max(...MIX_RANGES.shortSiteCounts)} sites, short crawls of ${sizes.pages ?? MIX_RANGES.shortPages} pages a site and long ones of ${sizes.pages ?? MIX_RANGES.longPages} (${Math.round(sizes.longShare * 100)} % of the seeds). ` +
            `Ideal makespan = the slowest site's pages / its rate. The obedient ideal takes a one-token bucket that sends RateLimit headers at the rate an obedient crawler can reach: it announces "none left, full again in ⌈1 / rate⌉ s" (whole seconds) after every answer. ` +
            `Every contender is an HttpCrawler with \`minConcurrency: ${MIX_CRAWLER.minConcurrency}, maxConcurrency: ${MIX_CRAWLER.maxConcurrency}\`, ` +
            `told nothing about the sites except (b), whose one \`sameDomainDelaySecs\` is the slowest site's interval (${example?.toFixed(2) ?? '…'} s in the first mix). ` +
            `The contenders of a mix run side by side, each against its own polite web. A run is stopped at ${sizes.capIdeal}× ideal + ${sizes.capSlackMs / 1000} s (counted in "capped"; its ratio is then a lower bound). The tuning seeds (1000–1059, in a simulation) are not among these.`,
        '',
        mdTable(
            [
                'contender',
                'completed (median)',
                'completed (worst)',
                'refused (median)',
                'refused (worst)',
                'makespan / ideal (median)',
                'makespan / ideal (worst)',
                'makespan / obedient ideal (median)',
                'makespan / obedient ideal (worst)',
                'capped',
            ],
            summaryRows(results, contenders),
            ['l', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r', 'r'],
        ),
        '',
        'Per mix (makespan / ideal, refused):',
        '',
        mdTable(
            ['seed', 'crawl', 'slowest site', 'ideal', ...contenders.map((c) => NAMES[c].split(' ')[0])],
            mixRows(results, contenders),
            ['l', 'l', 'l', 'r', ...contenders.map(() => 'r' as const)],
        ),
    ].join('\n');
}
