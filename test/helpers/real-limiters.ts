import { log, LogLevel, ProxyConfiguration, RequestQueue } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';
import { type LogEntry, type PoliteWeb, type SiteOptions, startPoliteWeb } from '@crawlee-throttling/polite-web';

import { ThrottlingRequestManager } from 'crawlee-throttling';
import { findBinary, MissingLimiterBinaryError } from '../../packages/bench/src/limiters/find-binary';
import {
    binaryOf,
    type RealLimiterKind,
    type RealLimiterSpec,
    type RunningLimiter,
    startRealLimiter,
} from '../../packages/bench/src/limiters/real-limiter';
import { memoryConfig } from './storage';

/**
 * `describe` for tests that start a real limiter. When the limiter's binary (nginx, haproxy) is missing,
 * the block is skipped on a developer's machine with a test name saying what to install, and fails
 * under CI (`CI=true`), where `.ci/run` installs it.
 */
export function describeLimiter(
    kinds: RealLimiterKind | 'polite-web' | readonly RealLimiterKind[],
    name: string,
    body: () => void,
): void {
    const list = typeof kinds === 'string' ? (kinds === 'polite-web' ? [] : [kinds]) : kinds;
    const binary = list.map(binaryOf).find((b) => b !== undefined && !findBinary(b));
    if (binary === undefined) {
        describe(name, body);
        return;
    }
    const missing = new MissingLimiterBinaryError(binary);
    describe(name, () => {
        if (process.env.CI === 'true') {
            test(`needs ${binary}`, () => {
                throw missing;
            });
        } else {
            test.skip(`skipped: ${missing.message}`, () => undefined);
        }
    });
}

/** A polite-web site in front of a real limiter (started here), or one of polite-web's own sites. */
export interface LimitedSite {
    host: string;
    limiter?: RealLimiterSpec;
    site?: Omit<SiteOptions, 'host'>;
}

/** What a crawl behind limiters saw, from the web's log (robots.txt left out). */
export interface LimitedCrawl {
    web: PoliteWeb;
    entries: LogEntry[];
    failed: string[];
    handled: number;
    throttler: ThrottlingRequestManager | undefined;
}

/**
 * Starts the sites (and their limiters), crawls `pages` pages of each with an HttpCrawler whose pool
 * starts wide, as in B5 (`minConcurrency: 20, maxConcurrency: 40`: many requests at once from the start),
 * throttled with defaults (`{ domains: 'all' }`) unless
 * `throttled` is false, and closes everything again.
 */
export async function crawlBehindLimiters(
    sites: LimitedSite[],
    pages: number,
    options: { throttled?: boolean } = {},
): Promise<LimitedCrawl> {
    const limiters: RunningLimiter[] = [];
    let web: PoliteWeb | undefined;
    const previousLevel = log.getLevel();
    log.setLevel(LogLevel.OFF);
    try {
        const webSites: SiteOptions[] = [];
        for (const s of sites) {
            const limiter = s.limiter ? await startRealLimiter(s.limiter) : undefined;
            if (limiter) limiters.push(limiter);
            webSites.push({ pages, ...s.site, host: s.host, ...(limiter ? { upstream: { port: limiter.port } } : {}) });
        }
        web = await startPoliteWeb({ sites: webSites });
        const config = memoryConfig();
        const throttler =
            options.throttled === false ? undefined : new ThrottlingRequestManager({ domains: 'all' }, config);
        const failed: string[] = [];
        let handled = 0;
        const crawler = new HttpCrawler(
            {
                minConcurrency: 20,
                maxConcurrency: 40,
                proxyConfiguration: new ProxyConfiguration({ proxyUrls: [web.proxyUrl] }),
                requestQueue: throttler ? throttler.asRequestQueue() : await RequestQueue.open(null, { config }),
                requestHandler: async () => void (handled += 1),
                failedRequestHandler: async ({ request }) => void failed.push(request.url),
            },
            config,
        );
        throttler?.attach(crawler);
        const urls = sites.flatMap((s) => Array.from({ length: pages }, (_, p) => web!.url(s.host, `/page/${p}`)));
        await crawler.run(urls);
        const entries = web.log.filter((e) => e.path !== '/robots.txt');
        return { web, entries, failed, handled, throttler };
    } finally {
        log.setLevel(previousLevel);
        await web?.close();
        await Promise.all(limiters.map((l) => l.close()));
    }
}

/** Distinct pages a site served with 2xx. */
export function pagesServed(entries: readonly LogEntry[], host: string): number {
    return new Set(entries.filter((e) => e.site === host && e.status < 300 && !e.refused).map((e) => e.path)).size;
}

/** Refusals a site answered. */
export function refusals(entries: readonly LogEntry[], host: string): LogEntry[] {
    return entries.filter((e) => e.site === host && e.refused);
}

/** Most of a site's requests in flight at one arrival, among the arrivals after the first `skip`. */
export function maxInFlightAfter(entries: readonly LogEntry[], host: string, skip: number): number {
    const arrivals = entries.filter((e) => e.site === host).sort((a, b) => a.time - b.time);
    return arrivals.slice(skip).reduce((max, e) => Math.max(max, e.inFlightAtArrival), 0);
}

/**
 * For every refusal with a `Retry-After` in seconds, the arrivals at its site that came sooner than it
 * asked, leaving out those that may have been on their way already (arrived within `inFlightMs` of the
 * refusal's answer: on a loaded 2-core machine, with several requests in flight, an answer can take
 * hundreds of ms to reach the crawler and a dispatched request as long to arrive).
 * Each is described by its arrival, ms after the refusal's answer, and the wait asked for.
 */
export function retryAfterViolations(entries: readonly LogEntry[], host: string, inFlightMs = 1000): string[] {
    const arrivals = entries.filter((e) => e.site === host).sort((a, b) => a.time - b.time);
    const early: string[] = [];
    for (const refusal of arrivals.filter((e) => e.refused && /^\d+$/.test(e.retryAfter ?? ''))) {
        const answeredAt = refusal.respondedAt ?? refusal.time;
        const until = answeredAt + Number(refusal.retryAfter) * 1000;
        for (const e of arrivals) {
            if (e.time > answeredAt + inFlightMs && e.time < until - inFlightMs) {
                early.push(`${e.path} arrived ${e.time - answeredAt} ms after a Retry-After: ${refusal.retryAfter}`);
            }
        }
    }
    return early;
}
