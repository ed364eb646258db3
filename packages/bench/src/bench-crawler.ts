import { labelHeader, type ProcessStorage } from '@crawlee-throttling/crawler-processes';
import { type FinalStatistics, ProxyConfiguration, type RequestProvider } from '@crawlee/core';
import { HttpCrawler, type HttpCrawlerOptions, type HttpCrawlingContext } from '@crawlee/http';
import { ThrottlingRequestManager, type ThrottlingRequestManagerOptions } from 'crawlee-throttling';

/** The throttler's options every benchmark process sets alike. */
type SharedOption = 'domains' | 'respectCrawlDelay' | 'maxThrottledDomains' | 'sharedClock';

/** What B7's and B8's tasks tell a process alike. */
export interface BenchProcessTask {
    proxyUrl: string;
    /** Sent as the x-crawler-process header. */
    label: string;
    maxConcurrency: number;
    /** Sites in the crawl: every one is throttled (the default cap of 100 would leave the rest unthrottled). */
    sites: number;
}

/** How one crawler process of B7 or B8 crawls. */
export interface BenchCrawlerSetup {
    task: BenchProcessTask;
    /** Keep `maxConcurrency` in flight throughout (minConcurrency = maxConcurrency), whatever the machine's CPU. */
    fixedConcurrency: boolean;
    /** The throttler's options beyond those every benchmark process shares (all domains, no robots delay, the clock). */
    throttler: Omit<ThrottlingRequestManagerOptions, SharedOption>;
    storage: ProcessStorage;
    requestHandler: NonNullable<HttpCrawlerOptions['requestHandler']>;
    /** Watches the crawl (B8's probe, frontier-process-probe.ts). */
    watch?: CrawlWatch;
}

/** What watches a benchmark crawl, told in the order the crawl meets it. */
export interface CrawlWatch {
    /** The throttler's queue, before the crawler takes it. */
    queue(queue: RequestProvider): void;
    /** A request leaves (its pre-navigation hook, after the label is set). */
    sent(uniqueKey: string): void;
    /** The crawl starts (its CPU counted from just before). */
    start(throttler: ThrottlingRequestManager, crawler: HttpCrawler<HttpCrawlingContext>): void;
}

/** A benchmark crawler process's throttler and crawler, and its crawl. */
export interface BenchCrawler {
    throttler: ThrottlingRequestManager;
    crawler: HttpCrawler<HttpCrawlingContext>;
    /** Crawls from `urls` to the end; answers Crawlee's statistics and the CPU time (user + system) the crawl used, ms. */
    crawl: (urls: string[]) => Promise<{ stats: FinalStatistics; cpuMs: number }>;
}

/**
 * The crawler B7's and B8's processes share: an HttpCrawler with the throttler over every site,
 * reaching the polite web through its proxy, its clocks shared when the storage has a clock.
 */
export function benchCrawler(setup: BenchCrawlerSetup): BenchCrawler {
    const { task, storage, watch } = setup;
    const { config, clock } = storage;
    const throttler = new ThrottlingRequestManager(
        {
            domains: 'all',
            respectCrawlDelay: false,
            maxThrottledDomains: Math.max(100, task.sites),
            ...setup.throttler,
            ...(clock ? { sharedClock: clock } : {}),
        },
        config,
    );
    const requestQueue = throttler.asRequestQueue();
    watch?.queue(requestQueue);
    const crawler = new HttpCrawler(
        {
            requestQueue,
            proxyConfiguration: new ProxyConfiguration({ proxyUrls: [task.proxyUrl] }),
            maxConcurrency: task.maxConcurrency,
            ...(setup.fixedConcurrency ? { minConcurrency: task.maxConcurrency } : {}),
            preNavigationHooks: [
                labelHeader(task.label),
                ...(watch ? [({ request }: HttpCrawlingContext) => watch.sent(request.uniqueKey)] : []),
            ],
            requestHandler: setup.requestHandler,
        },
        config,
    );
    throttler.attach(crawler);
    return {
        throttler,
        crawler,
        async crawl(urls) {
            const cpuAtStart = process.cpuUsage();
            watch?.start(throttler, crawler);
            const stats = await crawler.run(urls);
            const cpu = process.cpuUsage(cpuAtStart);
            return { stats, cpuMs: Math.round((cpu.user + cpu.system) / 1000) };
        },
    };
}
