/**
 * One crawler process of B8, spawned by frontier-fleet.ts: an HttpCrawler with the throttler,
 * following every link of the pages it handles. With `redis` its every storage is a
 * RedisStorageClient and its clocks a RedisDomainClock on that Redis, so all processes of a run
 * share one frontier and one clock; without it, it keeps its own in-memory storage (the baseline).
 * Its task comes as JSON in B8_WORKER. It prints `STARTED <url>` and `HANDLED <url>` per page as it
 * goes (so a process killed mid-crawl has told what it held) and `RESULT {...}` at the end.
 */
import { processStorage, serveWorker } from '@crawlee-throttling/crawler-processes';
import { log, LogLevel } from '@crawlee/core';

import { benchCrawler } from './bench-crawler';
import { type FrontierProbeResult, ProcessProbe } from './frontier-process-probe';

export interface FrontierTask {
    urls: string[];
    proxyUrl: string;
    /** Paced sites and the interval the throttler is told for them (known paces); the rest are free. */
    pacedHosts: string[];
    pacedDelaySecs: number;
    pacedConcurrency: number;
    maxConcurrency: number;
    sites: number;
    /** How long a fetched request stays locked to this process, s. */
    lockSecs: number;
    label: string;
    redis?: { url: string; prefix: string };
    /** Time the shared storage and clock calls, and sample the pool (see frontier-probe.ts). */
    probe?: boolean;
}

export interface FrontierResult {
    handled: number;
    failed: number;
    /** CPU time (user + system) of the crawl, ms. */
    cpuMs: number;
    probe?: FrontierProbeResult;
}

export const FRONTIER_WORKER_ENV = 'B8_WORKER';

const HREF = /href="([^"]+)"/g;

async function main(task: FrontierTask): Promise<FrontierResult> {
    log.setLevel(LogLevel.ERROR);
    const probe = task.probe ? new ProcessProbe(task.pacedHosts, task.maxConcurrency) : undefined;
    const storage = processStorage(
        task.redis && {
            url: task.redis.url,
            clockPrefix: `${task.redis.prefix}:clock:`,
            storage: { prefix: task.redis.prefix },
        },
    );
    if (probe && storage.storageClient) probe.storage(storage.storageClient);
    if (probe && storage.clock) probe.clock(storage.clock);
    let handled = 0;
    const { throttler, crawler, crawl } = benchCrawler({
        task,
        // Every process at maxConcurrency throughout: the machine's CPU, shared with other work, must not set it.
        fixedConcurrency: true,
        throttler: {
            delaySecs: 0,
            // Slow pages: a site takes several at once (slots shared across processes by the clock).
            concurrency: task.maxConcurrency,
            // Known paces: the paced sites' rate is told and the rest are free. Adaptive pacing would
            // read the response times that crawlers on a loaded machine stretch as a queue at the site
            // and pace free sites at what they happened to deliver (measured: 0.5-2 req/s), shared by all.
            rampup: false,
            scopes: Object.fromEntries(
                task.pacedHosts.map((h) => [
                    h,
                    // Enough slots to reach the pace with slow answers (each takes latency / interval).
                    { delaySecs: task.pacedDelaySecs, concurrency: task.pacedConcurrency },
                ]),
            ),
        },
        storage,
        ...(probe ? { watch: probe } : {}),
        requestHandler: async ({ request, body, addRequests }) => {
            process.stdout.write(`STARTED ${request.url}\n`);
            const links = [...String(body).matchAll(HREF)].map((m) => new URL(m[1], request.loadedUrl).href);
            await addRequests(links);
            handled += 1;
            process.stdout.write(`HANDLED ${request.url}\n`);
        },
    });
    crawler.requestQueue!.requestLockSecs = task.lockSecs;
    const { stats, cpuMs } = await crawl(task.urls);
    await storage.close();
    return { handled, failed: stats.requestsFailed, cpuMs, ...(probe ? { probe: probe.result(throttler) } : {}) };
}

if (require.main === module) serveWorker(FRONTIER_WORKER_ENV, main);
