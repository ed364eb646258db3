import { memoryConfig } from '@crawlee-throttling/crawler-processes';
import { BasicCrawler } from '@crawlee/basic';
import { log, LogLevel, RequestQueue } from '@crawlee/core';
import { ThrottlingRequestManager } from 'crawlee-throttling';

import { percentile } from './stats';

export interface PromptnessOptions {
    intervalMs: number;
    /** Throttler runs: domain count and requests per domain (each domain paced on its own). */
    throttlerRuns: { domains: number; requests: number }[];
    /** Requests of the reference run (Crawlee's sameDomainDelaySecs, one domain). */
    referenceRequests: number;
    timeoutMs: number;
}

export interface PromptnessRow {
    setup: string;
    domains: number;
    requests: number;
    /** Lateness samples: dispatch − (previous dispatch of the domain + interval), ms. */
    samples: number;
    p50: number;
    p99: number;
    max: number;
    min: number;
    wallMs: number;
    timedOut: boolean;
}

/**
 * Runs a BasicCrawler (no HTTP) over `domains` × `requests` URLs and records when each request's
 * handler starts (the moment it left the queue, give or take the crawler's own bookkeeping).
 */
async function run(
    setup: string,
    domains: number,
    requests: number,
    o: PromptnessOptions,
    throttled: boolean,
): Promise<PromptnessRow> {
    const config = memoryConfig();
    const starts = new Map<string, number[]>();
    const throttler = throttled
        ? new ThrottlingRequestManager(
              { domains: 'all', minCrawlDelaySecs: o.intervalMs / 1000, respectCrawlDelay: false },
              config,
          )
        : undefined;
    const crawler = new BasicCrawler(
        {
            requestQueue: throttler ? throttler.asRequestQueue() : await RequestQueue.open(null, { config }),
            // Free concurrency: the pacing, not the pool, must be what holds requests back.
            maxConcurrency: 50,
            // No HTTP, so no sessions to rotate (and no session-pool advice from the throttler).
            useSessionPool: false,
            ...(throttler ? {} : { sameDomainDelaySecs: o.intervalMs / 1000 }),
            async requestHandler({ request }) {
                const at = performance.timeOrigin + performance.now();
                const host = new URL(request.url).hostname;
                const list = starts.get(host) ?? [];
                list.push(at);
                starts.set(host, list);
            },
        },
        config,
    );
    throttler?.attach(crawler);
    const urls: string[] = [];
    for (let i = 0; i < requests; i++)
        for (let d = 0; d < domains; d++) urls.push(`http://p${d}.promptness.example/${i}`);

    let timedOut = false;
    const cap = setTimeout(() => {
        timedOut = true;
        crawler.stop('benchmark time cap');
    }, o.timeoutMs);
    const started = Date.now();
    try {
        await crawler.run(urls);
    } finally {
        clearTimeout(cap);
    }
    const wallMs = Date.now() - started;
    const lateness: number[] = [];
    for (const times of starts.values()) {
        times.sort((a, b) => a - b);
        for (let i = 1; i < times.length; i++) lateness.push(times[i] - (times[i - 1] + o.intervalMs));
    }
    return {
        setup,
        domains,
        requests: domains * requests,
        samples: lateness.length,
        p50: percentile(lateness, 50),
        p99: percentile(lateness, 99),
        max: lateness.length ? Math.max(...lateness) : NaN,
        min: lateness.length ? Math.min(...lateness) : NaN,
        wallMs,
        timedOut,
    };
}

/** How late requests leave after their domain became ready, with free concurrency. */
export async function runPromptness(o: PromptnessOptions, progress: (line: string) => void): Promise<PromptnessRow[]> {
    const previousLevel = log.getLevel();
    log.setLevel(LogLevel.ERROR);
    try {
        const rows: PromptnessRow[] = [];
        for (const { domains, requests } of o.throttlerRuns) {
            const setup = `throttler, minCrawlDelaySecs ${o.intervalMs / 1000}, ${domains} domain${domains === 1 ? '' : 's'}`;
            progress(`B4 ${setup} …`);
            rows.push(await run(setup, domains, requests, o, true));
        }
        const setup = `Crawlee sameDomainDelaySecs ${o.intervalMs / 1000}, 1 domain (reference)`;
        progress(`B4 ${setup} …`);
        rows.push(await run(setup, 1, o.referenceRequests, o, false));
        for (const r of rows) progress(`B4 ${r.setup}: p50 ${r.p50.toFixed(1)} ms, p99 ${r.p99.toFixed(1)} ms`);
        return rows;
    } finally {
        log.setLevel(previousLevel);
    }
}
