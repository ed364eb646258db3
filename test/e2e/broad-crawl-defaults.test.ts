/**
 * A broad crawl on the README's usage block alone (`{ domains: 'all' }`, no layout chosen): a real
 * HttpCrawler crawls 150 polite-web sites, more than `'perDomain'`'s limit of 100 domains. Every page
 * must be handled, each site paced at its crawl delay, robots.txt read first.
 */
import { ProxyConfiguration } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';
import { scoreLog, startPoliteWeb } from '@crawlee-throttling/polite-web';
import type { PoliteWeb } from '@crawlee-throttling/polite-web';

import { ThrottlingRequestManager } from 'crawlee-throttling';
import { memoryConfig } from '../helpers/storage';

const SITES = 150;
const PAGES = 2;
const CRAWL_DELAY = 0.3;

describe('a broad crawl with the default options', () => {
    let web: PoliteWeb;
    beforeAll(async () => {
        web = await startPoliteWeb({
            sites: Array.from({ length: SITES }, (_, i) => ({
                host: `wide-${i}.example`,
                pages: PAGES,
                crawlDelay: CRAWL_DELAY,
                // Anything faster than the crawl delay is refused.
                rate: 1 / CRAWL_DELAY,
                burst: 1,
                latencyMs: 10,
            })),
        });
    });
    afterAll(async () => web.close());

    test("150 sites under { domains: 'all' } all complete, each paced, without ThrottledDomainLimitError", async () => {
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager({ domains: 'all' }, config);
        const handled: string[] = [];
        const failed: string[] = [];
        const crawler = new HttpCrawler(
            {
                requestQueue: throttler.asRequestQueue(),
                proxyConfiguration: new ProxyConfiguration({ proxyUrls: [web.proxyUrl] }),
                maxConcurrency: 40,
                requestHandler: async ({ request }) => {
                    handled.push(request.url);
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

        const score = scoreLog(web.log, web.sites, { pages: PAGES });
        const robotsFirst = web.sites.filter(
            (site) => web.log.find((e) => e.site === site.host)?.path === '/robots.txt',
        ).length;
        expect(throttler.options.queueLayout).toBe('shared');
        expect(failed).toEqual([]);
        expect(new Set(handled)).toEqual(new Set(urls));
        expect(score.totals.crawlDelayViolations).toBe(0);
        expect(score.totals.refusals).toBe(0);
        expect(robotsFirst).toBe(SITES);
    }, 120_000);
});
