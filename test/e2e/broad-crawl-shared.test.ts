/**
 * A broad crawl through `queueLayout: 'shared'`. A real HttpCrawler, attached, crawls
 * 150 polite-web sites that each ask for a `Crawl-delay` in robots.txt and refuse anything faster
 * than their rate, with URLs given site after site (so each site's later pages arrive while its
 * robots.txt is read or its crawl delay runs, and wait in a small frontier window), and with
 * `maxThrottledDomains` far below the number of sites (so idle sites are evicted while it runs).
 */
import { setTimeout as sleep } from 'node:timers/promises';

import { ProxyConfiguration } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';
import { scoreLog, startPoliteWeb } from '@crawlee-throttling/polite-web';
import type { PoliteWeb } from '@crawlee-throttling/polite-web';

import { ThrottlingRequestManager } from 'crawlee-throttling';
import { memoryConfig } from '../helpers/storage';

const SITES = 150;
const PAGES = 3;
const CRAWL_DELAY = 0.3;
const KEPT = 30;
const WINDOW = 24;

describe("a broad crawl with queueLayout: 'shared'", () => {
    let web: PoliteWeb;
    beforeAll(async () => {
        web = await startPoliteWeb({
            sites: Array.from({ length: SITES }, (_, i) => ({
                host: `site-${i}.example`,
                pages: PAGES,
                crawlDelay: CRAWL_DELAY,
                // Anything faster than the crawl delay is refused.
                rate: 1 / CRAWL_DELAY,
                burst: 1,
                latencyMs: 20,
            })),
        });
    });
    afterAll(async () => web.close());

    test('every page is crawled at each site’s crawl delay, with robots.txt read first, while idle sites are evicted', async () => {
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager(
            // A window of a few sites' pages: sites come in over the crawl, so the early ones are idle by then.
            { domains: 'all', queueLayout: 'shared', maxThrottledDomains: KEPT, frontierWindow: WINDOW },
            config,
        );
        const added = new Map<string, number>();
        throttler.on('domainAdded', ({ domain }) => added.set(domain, (added.get(domain) ?? 0) + 1));
        const handled: string[] = [];
        const failed: string[] = [];
        let mostKept = 0;
        const crawler = new HttpCrawler(
            {
                requestQueue: throttler.asRequestQueue(),
                proxyConfiguration: new ProxyConfiguration({ proxyUrls: [web.proxyUrl] }),
                maxConcurrency: 40,
                requestHandler: async ({ request }) => {
                    handled.push(request.url);
                    mostKept = Math.max(mostKept, throttler.snapshot().length);
                },
                failedRequestHandler: async ({ request }) => {
                    failed.push(request.url);
                },
            },
            config,
        );
        throttler.attach(crawler);
        const urls = web.sites.flatMap((site) =>
            Array.from({ length: PAGES }, (_, p) => web.url(site.host, `/page/${p}`)),
        );
        await crawler.run(urls);
        // Once the last crawl delays have run out, the crawler's next poll forgets the idle sites.
        await sleep(CRAWL_DELAY * 1000 + 200);
        await throttler.isEmpty();

        const score = scoreLog(web.log, web.sites, { pages: PAGES });
        const robotsReads = web.log.filter((e) => e.path === '/robots.txt').length;
        const firstContact = web.sites.filter((site) => {
            const entries = web.log.filter((e) => e.site === site.host);
            return entries[0]?.path === '/robots.txt';
        }).length;
        console.log(
            `BROAD CRAWL ${JSON.stringify({
                sites: SITES,
                pages: urls.length,
                handled: handled.length,
                failed: failed.length,
                violations: score.totals.crawlDelayViolations,
                refusals: score.totals.refusals,
                robotsReads,
                mostKept,
                keptAtEnd: throttler.snapshot().length,
                domainsAddedTwice: [...added.values()].filter((n) => n > 1).length,
                makespanMs: score.makespanMs,
            })}`,
        );
        expect(failed).toEqual([]);
        expect(new Set(handled)).toEqual(new Set(urls));
        expect(score.totals.crawlDelayViolations).toBe(0);
        expect(score.totals.refusals).toBe(0);
        // robots.txt came before each site's first page.
        expect(firstContact).toBe(SITES);
        // Idle sites were forgotten while it ran and once it ended: far fewer kept than met.
        expect(added.size).toBe(SITES);
        expect(mostKept).toBeLessThan(SITES / 2);
        expect(throttler.snapshot().length).toBeLessThanOrEqual(KEPT);
        // Everything lived in the default queue and the window: no site needed a queue of its own.
        expect(throttler.innerManager!.getTotalCount()).toBe(urls.length);
        expect(await throttler.handledCount()).toBe(urls.length);
    }, 120_000);
});
