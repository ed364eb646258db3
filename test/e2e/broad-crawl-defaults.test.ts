/**
 * A broad crawl on the README's usage block alone (`{ domains: 'all' }`, no layout chosen): a real
 * HttpCrawler crawls 150 polite-web sites, more than `'perDomain'`'s limit of 100 domains. Every page
 * must be handled, each site paced at its crawl delay, robots.txt read first.
 */
import type { PoliteWeb } from '@crawlee-throttling/polite-web';
import { ThrottlingRequestManager } from 'crawlee-throttling';

import { crawlBroadWeb, expectEveryPagePaced, startBroadWeb } from '../helpers/broad-web';
import { memoryConfig } from '../helpers/storage';

const SITES = 150;
const PAGES = 2;

describe('a broad crawl with the default options', () => {
    let web: PoliteWeb;
    beforeAll(async () => {
        web = await startBroadWeb({ prefix: 'wide', sites: SITES, pages: PAGES, crawlDelaySecs: 0.3, latencyMs: 10 });
    });
    afterAll(async () => web.close());

    test("150 sites under { domains: 'all' } all complete, each paced, without ThrottledDomainLimitError", async () => {
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager({ domains: 'all' }, config);
        const crawl = await crawlBroadWeb(web, throttler, config, PAGES);

        expect(throttler.options.queueLayout).toBe('shared');
        expectEveryPagePaced(web, PAGES, crawl);
    }, 120_000);
});
