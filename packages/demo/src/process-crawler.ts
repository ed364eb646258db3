/**
 * One crawler process of the demo's multi-process mode (`--processes N`), spawned by processes.ts: a
 * CheerioCrawler with the throttler and its own in-memory storage, reaching the polite web through
 * its proxy, sending its label as the `x-crawler-process` header (the polite web logs it), and
 * sharing its clocks, slots and quotas in Redis when given a Redis URL. Its work comes as JSON in
 * the DEMO_WORKER environment variable; it prints one line `RESULT {...}` when done. With Redis,
 * every storage of the process (the throttler's queues included) is a RedisStorageClient on it:
 * all processes crawl one frontier, each page once, by whichever process takes it first.
 */
import { labelHeader, processStorage, serveWorker, waitForStart } from '@crawlee-throttling/crawler-processes';
import { CheerioCrawler } from '@crawlee/cheerio';
import { log, LogLevel, ProxyConfiguration } from '@crawlee/core';
import { ThrottlingRequestManager } from 'crawlee-throttling';
import type { ThrottlingRequestManagerOptions } from 'crawlee-throttling';

/** What one process crawls and how. */
export interface WorkerTask {
    urls: string[];
    proxyUrl: string;
    throttlerOptions: ThrottlingRequestManagerOptions;
    /** Epoch ms at which every process starts crawling (they load at different speeds). */
    startAt: number;
    /** Sent as the x-crawler-process header. */
    label: string;
    /** Share the clocks and the frontier in this Redis; without it the process paces alone on its own storage. */
    redis?: { url: string; keyPrefix: string; storagePrefix: string };
    timeoutMs: number;
}

export interface WorkerResult {
    finished: number;
    failed: number;
    timedOut: boolean;
}

export const WORKER_ENV = 'DEMO_WORKER';

async function main(task: WorkerTask): Promise<WorkerResult> {
    log.setLevel(LogLevel.OFF);
    const storage = processStorage(
        task.redis && {
            url: task.redis.url,
            clockPrefix: task.redis.keyPrefix,
            // A demo site has a handful of pages: one at a time, so every process gets some.
            storage: { prefix: task.redis.storagePrefix, lockLimit: 1 },
        },
    );
    const { config, clock } = storage;
    const throttler = new ThrottlingRequestManager(
        { ...task.throttlerOptions, ...(clock ? { sharedClock: clock } : {}) },
        config,
    );
    const crawler = new CheerioCrawler(
        {
            requestQueue: throttler.asRequestQueue(),
            proxyConfiguration: new ProxyConfiguration({ proxyUrls: [task.proxyUrl] }),
            preNavigationHooks: [labelHeader(task.label)],
            // Each process has its pages already (its share, or all of them on the shared frontier): links are not followed.
            async requestHandler() {},
            async failedRequestHandler() {},
        },
        config,
    );
    throttler.attach(crawler);
    await waitForStart(task.startAt);
    let timedOut = false;
    const cap = setTimeout(() => {
        timedOut = true;
        crawler.stop(`Process ${task.label} hit its ${task.timeoutMs / 1000} s cap.`);
    }, task.timeoutMs);
    try {
        const stats = await crawler.run(task.urls);
        return { finished: stats.requestsFinished, failed: stats.requestsFailed, timedOut };
    } finally {
        clearTimeout(cap);
        await storage.close();
    }
}

if (require.main === module) serveWorker(WORKER_ENV, main);
