import type { BasicCrawler } from '@crawlee/basic';
import type { Configuration } from '@crawlee/core';

import { ThrottlingRequestManager } from 'crawlee-throttling';
import { memoryConfig } from './storage';

export type CrawlerFactory = (options: any, config: Configuration) => BasicCrawler<any>;

/** What the request handler saw of one page. */
export interface HandledPage {
    path: string;
    retryCount: number;
    sessionId?: string;
    errorScore?: number;
}

/**
 * Crawls `urls` with a crawler from `makeCrawler`, given a throttler as its request queue and
 * attached: one session in the pool and one retry only, so a 429 that spent a retry or penalised
 * the session would show in what the handler records.
 */
export async function crawlThroughThrottler(
    makeCrawler: CrawlerFactory,
    urls: string[],
    options: { maxConcurrency: number },
) {
    const config = memoryConfig();
    const throttler = new ThrottlingRequestManager(
        { domains: 'all', maxDomainStallSecs: 30, baseDelaySecs: 0.3 },
        config,
    );
    const handled: HandledPage[] = [];
    const failed: string[] = [];
    const crawler = makeCrawler(
        {
            requestQueue: throttler.asRequestQueue(),
            // One retry only: were a 429 to spend it, the second 429 of a path would fail the request.
            maxRequestRetries: 1,
            maxConcurrency: options.maxConcurrency,
            sessionPoolOptions: { maxPoolSize: 1 },
            requestHandler: async ({
                request,
                session,
            }: {
                request: { url: string; retryCount: number };
                session?: { id: string; errorScore: number };
            }) => {
                handled.push({
                    path: new URL(request.url).pathname,
                    retryCount: request.retryCount,
                    sessionId: session?.id,
                    errorScore: session?.errorScore,
                });
            },
            failedRequestHandler: async ({ request }: { request: { url: string } }) => {
                failed.push(request.url);
            },
        },
        config,
    );
    throttler.attach(crawler);
    // run() tears a browser pool down itself, also when it throws.
    const stats = await crawler.run(urls);
    return { throttler, handled, failed, stats };
}
