/**
 * One crawler process of B7, spawned by redis-processes.ts: an HttpCrawler with the throttler and
 * its own in-memory storage, reaching polite-web through its proxy, sharing its clocks in Redis
 * when given a Redis URL. Its work comes as JSON in the B7_WORKER environment variable; it prints
 * one line `RESULT {...}` (a {@link WorkerResult}) when done.
 */
import { processStorage, serveWorker, waitForStart } from '@crawlee-throttling/crawler-processes';
import { log, LogLevel } from '@crawlee/core';

import { benchCrawler } from './bench-crawler';

/** What one process crawls and how. */
export interface WorkerTask {
    urls: string[];
    proxyUrl: string;
    /** Omitted: the throttler's default, adaptive pacing (the process is told no rate). */
    delaySecs?: number;
    /** Adaptive pacing off: `delaySecs` alone paces (the oracle of B7 (d), told each site's rate). */
    noRampup?: boolean;
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
    // Only the clocks are shared: each process keeps its own storage (its share of the pages).
    const storage = processStorage(task.redis && { url: task.redis.url, clockPrefix: task.redis.keyPrefix });
    let handled = 0;
    const { throttler, crawler, crawl } = benchCrawler({
        task,
        fixedConcurrency: task.fixedConcurrency ?? false,
        throttler: {
            ...(task.delaySecs === undefined ? {} : { delaySecs: task.delaySecs }),
            ...(task.noRampup ? { rampup: false } : {}),
        },
        storage,
        requestHandler: () => {
            handled += 1;
        },
    });
    const lateMs = await waitForStart(task.startAt);
    const inFlight: number[] = [];
    const sampler = setInterval(() => inFlight.push(crawler.autoscaledPool?.currentConcurrency ?? 0), 250);
    const { stats, cpuMs } = await crawl(task.urls).finally(() => clearInterval(sampler));
    const paces: Record<string, number> = {};
    for (const { domain, rampup } of throttler.snapshot())
        if (rampup && Number.isFinite(rampup.rate)) paces[domain] = rampup.rate;
    await storage.close();
    return {
        handled,
        failed: stats.requestsFailed,
        lateMs,
        cpuMs,
        peakConcurrency: Math.max(0, ...inFlight),
        meanConcurrency: inFlight.length ? inFlight.reduce((a, b) => a + b, 0) / inFlight.length : 0,
        paces,
    };
}

if (require.main === module) serveWorker(WORKER_ENV, main);
