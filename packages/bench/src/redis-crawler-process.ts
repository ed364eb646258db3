/**
 * One crawler process of B7, spawned by redis-processes.ts: an HttpCrawler with the throttler and
 * its own in-memory storage, reaching polite-web through its proxy, sharing its clocks in Redis
 * when given a Redis URL. Its work comes as JSON in the B7_WORKER environment variable; it prints
 * one line `RESULT {...}` (a {@link WorkerResult}) when done.
 */
import { serveWorker } from '@crawlee-throttling/crawler-processes';
import { log, LogLevel, ProxyConfiguration } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';
import { ThrottlingRequestManager } from 'crawlee-throttling';
import { RedisDomainClock } from 'crawlee-throttling/redis';

import { memoryConfig } from './storage';

/** What one process crawls and how. */
export interface WorkerTask {
    urls: string[];
    proxyUrl: string;
    /** Omitted: the throttler's default, adaptive pacing (the process is told no rate). */
    delaySecs?: number;
    maxConcurrency: number;
    /**
     * Keep `maxConcurrency` in flight throughout (minConcurrency = maxConcurrency). Otherwise Crawlee's
     * autoscaled pool starts no task beyond minConcurrency (1) while the machine's CPU, anyone's
     * use of it, is over 95 % busy: on a shared machine that, not the crawl, sets the concurrency.
     */
    fixedConcurrency?: boolean;
    /** Sites in the crawl: every one is throttled (the default cap of 100 would leave the rest unthrottled). */
    sites: number;
    /** Epoch ms at which every process of a run starts crawling. */
    startAt: number;
    /** Sent as the x-crawler-process header. */
    label: string;
    /** Share the clocks in this Redis; without it the process paces alone. */
    redis?: { url: string; keyPrefix: string };
}

export interface WorkerResult {
    handled: number;
    failed: number;
    /** How long after `startAt` this process began (it loaded too slowly), ms; 0 when on time. */
    lateMs: number;
    /** CPU time (user + system) this process used crawling (from its start of crawling to the end), ms. */
    cpuMs: number;
    /** Requests in flight, sampled every 250 ms while crawling: most and mean. */
    peakConcurrency: number;
    meanConcurrency: number;
    /** Per domain, the pace adaptive pacing ended at (requests/s); empty when not pacing adaptively. */
    paces: Record<string, number>;
}

export const WORKER_ENV = 'B7_WORKER';

async function main(task: WorkerTask): Promise<WorkerResult> {
    log.setLevel(LogLevel.ERROR);
    const config = memoryConfig();
    const clock = task.redis ? new RedisDomainClock(task.redis) : undefined;
    const throttler = new ThrottlingRequestManager(
        {
            domains: 'all',
            ...(task.delaySecs === undefined ? {} : { delaySecs: task.delaySecs }),
            respectCrawlDelay: false,
            maxThrottledDomains: Math.max(100, task.sites),
            ...(clock ? { sharedClock: clock } : {}),
        },
        config,
    );
    let handled = 0;
    const crawler = new HttpCrawler(
        {
            requestQueue: throttler.asRequestQueue(),
            proxyConfiguration: new ProxyConfiguration({ proxyUrls: [task.proxyUrl] }),
            maxConcurrency: task.maxConcurrency,
            ...(task.fixedConcurrency ? { minConcurrency: task.maxConcurrency } : {}),
            preNavigationHooks: [
                (_ctx, gotOptions) =>
                    void (gotOptions.headers = { ...gotOptions.headers, 'x-crawler-process': task.label }),
            ],
            requestHandler: () => {
                handled += 1;
            },
        },
        config,
    );
    throttler.attach(crawler);
    const wait = task.startAt - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const lateMs = Math.max(0, -wait);
    const cpuAtStart = process.cpuUsage();
    const inFlight: number[] = [];
    const sampler = setInterval(() => inFlight.push(crawler.autoscaledPool?.currentConcurrency ?? 0), 250);
    const stats = await crawler.run(task.urls).finally(() => clearInterval(sampler));
    const cpu = process.cpuUsage(cpuAtStart);
    const paces: Record<string, number> = {};
    for (const { domain, rampup } of throttler.snapshot())
        if (rampup && Number.isFinite(rampup.rate)) paces[domain] = rampup.rate;
    await clock?.close();
    return {
        handled,
        failed: stats.requestsFailed,
        lateMs,
        cpuMs: Math.round((cpu.user + cpu.system) / 1000),
        peakConcurrency: Math.max(0, ...inFlight),
        meanConcurrency: inFlight.length ? inFlight.reduce((a, b) => a + b, 0) / inFlight.length : 0,
        paces,
    };
}

if (require.main === module) serveWorker(WORKER_ENV, main);
