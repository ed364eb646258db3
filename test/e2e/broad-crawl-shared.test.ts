/**
 * A broad crawl through `queueLayout: 'shared'`. A real HttpCrawler, attached, crawls
 * 150 polite-web sites that each ask for a `Crawl-delay` in robots.txt and refuse anything faster
 * than their rate, with URLs given site after site (so each site's later pages arrive while its
 * robots.txt is read or its crawl delay runs, and wait in a small frontier window), and with
 * `maxThrottledDomains` far below the number of sites (so idle sites are evicted while it runs).
 */
import { setTimeout as sleep } from 'node:timers/promises';

import type { PoliteWeb } from '@crawlee-throttling/polite-web';
import { ThrottlingRequestManager } from 'crawlee-throttling';

import { crawlBroadWeb, scoreBroadWeb, startBroadWeb } from '../helpers/broad-web';
import { memoryConfig } from '../helpers/storage';

const SITES = 150;
const PAGES = 3;
const CRAWL_DELAY = 0.3;
const KEPT = 30;
const WINDOW = 24;

describe("a broad crawl with queueLayout: 'shared'", () => {
    let web: PoliteWeb;
    beforeAll(async () => {
        web = await startBroadWeb({
            prefix: 'site',
            sites: SITES,
            pages: PAGES,
            crawlDelaySecs: CRAWL_DELAY,
            latencyMs: 20,
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
        let mostKept = 0;
        const { urls, handled, failed } = await crawlBroadWeb(web, throttler, config, PAGES, () => {
            mostKept = Math.max(mostKept, throttler.snapshot().length);
        });
        // Once the last crawl delays have run out, the crawler's next poll forgets the idle sites.
        await sleep(CRAWL_DELAY * 1000 + 200);
        await throttler.isEmpty();

        const { score, robotsFirst: firstContact, robotsReads } = scoreBroadWeb(web, PAGES);
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
