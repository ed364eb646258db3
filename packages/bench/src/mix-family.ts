import { log, LogLevel, ProxyConfiguration, RequestQueue } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';
import type { HttpCrawlerOptions } from '@crawlee/http';
import { type PoliteWeb, startPoliteWeb } from '@crawlee-throttling/polite-web';
import { ThrottlingRequestManager, type ThrottlingRequestManagerOptions } from 'crawlee-throttling';

import { drawMixes, type Mix } from './mixes';
import { sleep } from './stats';
import { memoryConfig } from './storage';

/**
 * B5's contenders: Crawlee alone (two ways), the throttler with defaults (adaptive pacing), and the
 * throttler with rampup off (backoff alone).
 */
export type MixContenderId = 'plain' | 'sameDomainDelay' | 'throttler' | 'throttlerNoRampup';

export const MIX_CONTENDERS: readonly MixContenderId[] = ['plain', 'sameDomainDelay', 'throttler', 'throttlerNoRampup'];

/** The crawler settings every contender shares: a pool that starts wide, as a crawl of many sites does. */
export const MIX_CRAWLER = { minConcurrency: 20, maxConcurrency: 40 } as const;

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

export interface MixRun {
    contender: MixContenderId;
    pagesTotal: number;
    pagesCompleted: number;
    requests: number;
    refusals: number;
    refusedShare: number;
    makespanMs: number;
    idealMs: number;
    timedOut: boolean;
}

export interface MixResult {
    mix: Mix;
    runs: MixRun[];
}

function throttlerOptions(contender: MixContenderId): ThrottlingRequestManagerOptions {
    return contender === 'throttlerNoRampup' ? { domains: 'all', rampup: false } : { domains: 'all' };
}

/** The slowest site's interval: one `sameDomainDelaySecs` is all Crawlee takes, for every site. */
export function slowestIntervalSecs(mix: Mix): number {
    return Math.max(...mix.sites.map((s) => 1 / s.rate!));
}

function urlList(web: PoliteWeb, mix: Mix): string[] {
    const urls: string[] = [];
    for (let p = 0; p < mix.pages; p++) for (const site of web.sites) urls.push(web.url(site.host, `/page/${p}`));
    return urls;
}

async function runContender(web: PoliteWeb, mix: Mix, contender: MixContenderId, capMs: number): Promise<MixRun> {
    web.reset();
    const config = memoryConfig();
    const options: HttpCrawlerOptions = {
        ...MIX_CRAWLER,
        proxyConfiguration: new ProxyConfiguration({ proxyUrls: [web.proxyUrl] }),
        async requestHandler() {},
        async failedRequestHandler() {},
    };
    let throttler: ThrottlingRequestManager | undefined;
    if (contender === 'throttler' || contender === 'throttlerNoRampup') {
        throttler = new ThrottlingRequestManager(throttlerOptions(contender), config);
        options.requestQueue = throttler.asRequestQueue();
    } else {
        options.requestQueue = await RequestQueue.open(null, { config });
        if (contender === 'sameDomainDelay') options.sameDomainDelaySecs = slowestIntervalSecs(mix);
    }
    const crawler = new HttpCrawler(options, config);
    throttler?.attach(crawler);
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
    const score = web.score({ pages: mix.pages });
    return {
        contender,
        pagesTotal: mix.sites.length * mix.pages,
        pagesCompleted: score.totals.distinctPagesServed,
        requests: score.totals.requests,
        refusals: score.totals.refusals,
        refusedShare: score.totals.refusedShare,
        makespanMs: score.makespanMs,
        idealMs: mix.idealMs,
        timedOut,
    };
}

/** Runs `tasks` one after another (`inTurn`) or all at once; answers their results in order. */
async function inTurnOrTogether<T>(inTurn: boolean, tasks: (() => Promise<T>)[]): Promise<T[]> {
    if (!inTurn) return Promise.all(tasks.map((task) => task()));
    const results: T[] = [];
    for (const task of tasks) results.push(await task());
    return results;
}

/** Runs every mix of the family against each contender, one polite web per contender. */
export async function runMixFamily(
    sizes: MixFamilySizes,
    progress: (line: string) => void,
    contenders: readonly MixContenderId[] = MIX_CONTENDERS,
): Promise<MixResult[]> {
    const mixes = drawMixes(sizes.firstSeed, sizes.count, sizes.longShare, {
        pages: sizes.pages,
        minRate: sizes.minRate,
    });
    const previousLevel = log.getLevel();
    log.setLevel(LogLevel.OFF);
    const results: MixResult[] = [];
    try {
        for (const mix of mixes) {
            const capMs = mix.idealMs * sizes.capIdeal + sizes.capSlackMs;
            // Side by side, each against its own polite web: short crawls mostly wait on the sites'
            // rates, and a sequential run of the family would take an hour. A long crawl of a fast
            // site keeps an event loop busy: side by side, the four crawlers and webs would share one
            // (mix 3012's throttler took 2.2x ideal there and 1.14x alone), so they go one at a time.
            const runs = await inTurnOrTogether(
                mix.kind === 'long',
                contenders.map((contender) => async () => {
                    const web = await startPoliteWeb({ sites: mix.sites });
                    try {
                        const run = await runContender(web, mix, contender, capMs);
                        progress(
                            `B5 mix ${mix.seed} (${mix.kind}, ${mix.sites.length} sites) ${contender}: ${run.pagesCompleted}/${run.pagesTotal} pages, ` +
                                `${run.refusals}/${run.requests} refused, ${(run.makespanMs / run.idealMs).toFixed(2)}× ideal${run.timedOut ? ' (time cap)' : ''}`,
                        );
                        return run;
                    } finally {
                        await web.close();
                    }
                }),
            );
            results.push({ mix, runs });
        }
    } finally {
        log.setLevel(previousLevel);
    }
    return results;
}
