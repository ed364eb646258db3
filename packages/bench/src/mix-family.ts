import { log, LogLevel, ProxyConfiguration, RequestQueue } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';
import type { HttpCrawlerOptions } from '@crawlee/http';
import { memoryConfig } from '@crawlee-throttling/crawler-processes';
import { type PoliteWeb, type SiteOptions, startPoliteWeb } from '@crawlee-throttling/polite-web';
import { ThrottlingRequestManager, type ThrottlingRequestManagerOptions } from 'crawlee-throttling';

import { TRACE_ENV, traceSite } from './site-trace';
import { drawFamilyMixes, type FamilyMix, oracleScope } from './family-mixes';
import { type FamilyRunScore, scoreFamilyRun } from './family-score';
import { type RunningLimiter, startRealLimiter } from './limiters/real-limiter';
import { sleep } from './stats';

/**
 * B5's contenders: Crawlee alone (two ways), the oracle (the throttler told each site's limit, rampup
 * off) and the throttler with defaults, told nothing.
 */
export type MixContenderId = 'plain' | 'sameDomainDelay' | 'oracle' | 'throttler';

export const MIX_CONTENDERS: readonly MixContenderId[] = ['plain', 'sameDomainDelay', 'oracle', 'throttler'];

/** The crawler settings every contender shares: a pool that starts wide, as a crawl of many sites does. */
export const MIX_CRAWLER = { minConcurrency: 20, maxConcurrency: 40 } as const;

/** Named seed sets: tune on one, report on the other. */
export const MIX_SEED_SETS = {
    report: { firstSeed: 3000, count: 27 },
    tuning: { firstSeed: 4000, count: 27 },
    quick: { firstSeed: 2000, count: 9 },
} as const;

export interface MixFamilySizes {
    firstSeed: number;
    count: number;
    longShare: number;
    /** Pages per site instead of the family's 20 / 500 (quick runs). */
    pages?: number;
    /** Least site rate instead of the family's 0.5 req/s (quick runs). */
    minRate?: number;
    /** A contender's run is stopped at this multiple of the ideal makespan, plus `capSlackMs`. */
    capIdeal: number;
    capSlackMs: number;
}

export interface MixRun extends FamilyRunScore {
    contender: MixContenderId;
    idealMs: number;
    timedOut: boolean;
}

export interface MixResult {
    mix: FamilyMix;
    runs: MixRun[];
}

/** The one `sameDomainDelaySecs` Crawlee takes for every site: the slowest site's interval. */
export function slowestIntervalSecs(mix: FamilyMix): number {
    return Math.max(...mix.sites.map((s) => 1 / s.capacity));
}

/** The throttler's options: defaults, or (oracle) each site's limit as its scope. */
export function contenderThrottlerOptions(
    contender: 'oracle' | 'throttler',
    mix: FamilyMix,
): ThrottlingRequestManagerOptions {
    if (contender === 'throttler') return { domains: 'all' };
    return { domains: 'all', scopes: Object.fromEntries(mix.sites.map((s) => [s.host, oracleScope(s)])) };
}

function urlList(web: PoliteWeb, mix: FamilyMix): string[] {
    const urls: string[] = [];
    for (let p = 0; p < mix.pages; p++) for (const site of mix.sites) urls.push(web.url(site.host, `/page/${p}`));
    return urls;
}

/** Starts the mix's real limiters and a polite web whose sites forward to them. */
async function startMixWeb(mix: FamilyMix): Promise<{ web: PoliteWeb; close: () => Promise<void> }> {
    const limiters: RunningLimiter[] = [];
    const close = async () => void (await Promise.all(limiters.map((l) => l.close())));
    try {
        const sites: SiteOptions[] = [];
        for (const site of mix.sites) {
            if (!site.limiter) {
                sites.push(site.site);
                continue;
            }
            const limiter = await startRealLimiter(site.limiter);
            limiters.push(limiter);
            sites.push({ ...site.site, upstream: { port: limiter.port } });
        }
        const web = await startPoliteWeb({ sites });
        return {
            web,
            close: async () => {
                await web.close();
                await close();
            },
        };
    } catch (error) {
        await close();
        throw error;
    }
}

async function runContender(mix: FamilyMix, contender: MixContenderId, capMs: number): Promise<MixRun> {
    const { web, close } = await startMixWeb(mix);
    try {
        const config = memoryConfig();
        const options: HttpCrawlerOptions = {
            ...MIX_CRAWLER,
            proxyConfiguration: new ProxyConfiguration({ proxyUrls: [web.proxyUrl] }),
            async requestHandler() {},
            async failedRequestHandler() {},
        };
        let throttler: ThrottlingRequestManager | undefined;
        if (contender === 'throttler' || contender === 'oracle') {
            throttler = new ThrottlingRequestManager(contenderThrottlerOptions(contender, mix), config);
            options.requestQueue = throttler.asRequestQueue();
        } else {
            options.requestQueue = await RequestQueue.open(null, { config });
            if (contender === 'sameDomainDelay') options.sameDomainDelaySecs = slowestIntervalSecs(mix);
        }
        const crawler = new HttpCrawler(options, config);
        throttler?.attach(crawler);
        const traced = process.env[TRACE_ENV];
        const endTrace = traced && contender === 'throttler' ? traceSite(throttler!, traced, () => web.log) : undefined;
        let timedOut = false;
        const cap = setTimeout(() => {
            timedOut = true;
            crawler.stop('benchmark time cap');
            setTimeout(() => void crawler.teardown().catch(() => undefined), 5_000).unref();
        }, capMs);
        try {
            await crawler.run(urlList(web, mix));
        } finally {
            clearTimeout(cap);
        }
        if (timedOut) await sleep(500);
        endTrace?.();
        return { contender, idealMs: mix.idealMs, timedOut, ...scoreFamilyRun(web.log, mix) };
    } finally {
        await close();
    }
}

/** Runs `tasks` one after another (`inTurn`) or all at once; answers their results in order. */
async function inTurnOrTogether<T>(inTurn: boolean, tasks: (() => Promise<T>)[]): Promise<T[]> {
    if (!inTurn) return Promise.all(tasks.map((task) => task()));
    const results: T[] = [];
    for (const task of tasks) results.push(await task());
    return results;
}

/** Runs every mix of the family against each contender, each contender with its own web and limiters. */
export async function runMixFamily(
    sizes: MixFamilySizes,
    progress: (line: string) => void,
    contenders: readonly MixContenderId[] = MIX_CONTENDERS,
): Promise<MixResult[]> {
    const mixes = drawFamilyMixes(sizes.firstSeed, sizes.count, sizes.longShare, {
        pages: sizes.pages,
        minRate: sizes.minRate,
    });
    const previousLevel = log.getLevel();
    log.setLevel(LogLevel.OFF);
    const results: MixResult[] = [];
    try {
        for (const mix of mixes) {
            const capMs = mix.idealMs * sizes.capIdeal + sizes.capSlackMs;
            // Side by side: short crawls mostly wait on the sites' limits. A long crawl of fast sites keeps
            // an event loop busy, so there the contenders go one at a time.
            const runs = await inTurnOrTogether(
                mix.kind === 'long',
                contenders.map((contender) => async () => {
                    const run = await runContender(mix, contender, capMs);
                    progress(
                        `B5 mix ${mix.seed} (${mix.kind}, ${mix.sites.map((s) => s.kind).join(' ')}) ${contender}: ` +
                            `${run.pagesCompleted}/${run.pagesTotal} pages, ${run.refusals}/${run.requests} refused, ` +
                            `${(run.makespanMs / 1000).toFixed(1)} s${run.timedOut ? ' (time cap)' : ''}`,
                    );
                    return run;
                }),
            );
            results.push({ mix, runs });
        }
    } finally {
        log.setLevel(previousLevel);
    }
    return results;
}
