import { log, LogLevel, ProxyConfiguration, RequestQueue } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';
import type { HttpCrawlerOptions } from '@crawlee/http';
import { memoryConfig } from '@crawlee-throttling/crawler-processes';
import { type PoliteWeb, type SiteOptions, startPoliteWeb } from '@crawlee-throttling/polite-web';
import { ThrottlingRequestManager } from 'crawlee-throttling';

import { sleep } from './stats';

/** The ways of crawling the same URL list: three with Crawlee alone, two with the throttler. */
export type ContenderId = 'plain' | 'sameDomainDelay' | 'maxRequestsPerMinute' | 'throttler' | 'throttlerBackoffOnly';

export const CONTENDERS: readonly ContenderId[] = [
    'plain',
    'sameDomainDelay',
    'maxRequestsPerMinute',
    'throttler',
    'throttlerBackoffOnly',
];

/** A crawl scenario: identical sites, all pages given up front. */
export interface CrawlScenario {
    id: 'B1' | 'B2';
    title: string;
    sites: number;
    pages: number;
    rate: number;
    burst: number;
    crawlDelay?: number;
    /** Cap on one contender's run. */
    timeoutMs: number;
}

export interface ContenderResult {
    contender: ContenderId;
    /** How the contender was configured, in words. */
    setup: string;
    pagesTotal: number;
    pagesCompleted: number;
    requests: number;
    refusals: number;
    refusedShare: number;
    crawlDelayViolations: number;
    /** Requests the crawler gave up on (retries spent). */
    failed: number;
    /** First to last request arrival at the sites, ms. */
    makespanMs: number;
    idealMs: number;
    /** `crawler.run()` from call to return, ms. */
    wallMs: number;
    timedOut: boolean;
}

export interface ScenarioResult {
    scenario: CrawlScenario;
    contenders: ContenderResult[];
}

function siteOptions(s: CrawlScenario): SiteOptions[] {
    return Array.from({ length: s.sites }, (_, i) => ({
        host: `site-${i + 1}.example`,
        rate: s.rate,
        burst: s.burst,
        crawlDelay: s.crawlDelay,
        refusal: { status: 429, retryAfter: 'seconds' },
        pages: s.pages,
    }));
}

/** Every page of every site, interleaved site by site so no contender is handed one site's pages in a row. */
function urlList(web: PoliteWeb, s: CrawlScenario): string[] {
    const urls: string[] = [];
    for (let p = 0; p < s.pages; p++) for (const site of web.sites) urls.push(web.url(site.host, `/page/${p}`));
    return urls;
}

function describe(contender: ContenderId, s: CrawlScenario): string {
    switch (contender) {
        case 'plain':
            return 'HttpCrawler, Crawlee defaults';
        case 'sameDomainDelay':
            return `sameDomainDelaySecs: ${1 / s.rate}`;
        case 'maxRequestsPerMinute':
            return `maxRequestsPerMinute: ${s.rate * s.sites * 60}`;
        case 'throttler':
            return "ThrottlingRequestManager { domains: 'all' } (adaptive pacing), attached";
        case 'throttlerBackoffOnly':
            return "ThrottlingRequestManager { domains: 'all', rampup: false }, attached";
    }
}

async function runContender(web: PoliteWeb, s: CrawlScenario, contender: ContenderId): Promise<ContenderResult> {
    web.reset();
    const config = memoryConfig();
    const options: HttpCrawlerOptions = {
        proxyConfiguration: new ProxyConfiguration({ proxyUrls: [web.proxyUrl] }),
        async requestHandler() {},
        async failedRequestHandler() {},
    };
    let throttler: ThrottlingRequestManager | undefined;
    if (contender === 'throttler' || contender === 'throttlerBackoffOnly') {
        throttler = new ThrottlingRequestManager(
            { domains: 'all', ...(contender === 'throttlerBackoffOnly' ? { rampup: false } : {}) },
            config,
        );
        options.requestQueue = throttler.asRequestQueue();
    } else {
        options.requestQueue = await RequestQueue.open(null, { config });
        if (contender === 'sameDomainDelay') options.sameDomainDelaySecs = 1 / s.rate;
        if (contender === 'maxRequestsPerMinute') options.maxRequestsPerMinute = s.rate * s.sites * 60;
    }
    const crawler = new HttpCrawler(options, config);
    throttler?.attach(crawler);

    let timedOut = false;
    const cap = setTimeout(() => {
        timedOut = true;
        crawler.stop('benchmark time cap');
        setTimeout(() => void crawler.teardown().catch(() => undefined), 5_000).unref();
    }, s.timeoutMs);
    const started = Date.now();
    let failed = 0;
    try {
        const stats = await crawler.run(urlList(web, s));
        failed = stats.requestsFailed;
    } finally {
        clearTimeout(cap);
    }
    const wallMs = Date.now() - started;
    if (timedOut) await sleep(500); // let stragglers land before the web is reset

    const score = web.score({ pages: s.pages });
    return {
        contender,
        setup: describe(contender, s),
        pagesTotal: s.sites * s.pages,
        pagesCompleted: score.totals.distinctPagesServed,
        requests: score.totals.requests,
        refusals: score.totals.refusals,
        refusedShare: score.totals.refusedShare,
        crawlDelayViolations: score.totals.crawlDelayViolations,
        failed,
        makespanMs: score.makespanMs,
        idealMs: score.idealMs,
        wallMs,
        timedOut,
    };
}

/** Runs one scenario against each contender in turn, on one polite web reset between runs. */
export async function runCrawlScenario(s: CrawlScenario, progress: (line: string) => void): Promise<ScenarioResult> {
    const web = await startPoliteWeb({ sites: siteOptions(s) });
    const previousLevel = log.getLevel();
    // Baselines fail requests by design and the throttler retries refusals: Crawlee would log each one.
    log.setLevel(LogLevel.OFF);
    try {
        const contenders: ContenderResult[] = [];
        for (const contender of CONTENDERS) {
            progress(`${s.id} ${contender} …`);
            const result = await runContender(web, s, contender);
            progress(
                `${s.id} ${contender}: ${result.pagesCompleted}/${result.pagesTotal} pages, ${result.refusals}/${result.requests} refused, makespan ${(result.makespanMs / 1000).toFixed(1)} s${result.timedOut ? ' (time cap)' : ''}`,
            );
            contenders.push(result);
        }
        return { scenario: s, contenders };
    } finally {
        log.setLevel(previousLevel);
        await web.close();
    }
}
