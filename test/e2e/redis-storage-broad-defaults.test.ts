/**
 * The README's usage block (`{ domains: 'all'`, no layout chosen) on storage shared by several
 * processes: a real HttpCrawler on a RedisStorageClient crawls 150 polite-web sites, more than
 * `'perDomain'`'s limit of 100 domains. Every page must be handled, each site paced at its crawl
 * delay, robots.txt read first.
 */
import { Configuration } from '@crawlee/core';
import type { PoliteWeb } from '@crawlee-throttling/polite-web';
import { ThrottlingRequestManager } from 'crawlee-throttling';

import { crawlBroadWeb, expectEveryPagePaced, startBroadWeb } from '../helpers/broad-web';
import { describeRedis, uniquePrefix } from '../helpers/redis';
import { redisStorage } from '../helpers/redis-storage';

const SITES = 150;
const PAGES = 2;

describeRedis('a broad crawl with the default options on RedisStorageClient', () => {
    let web: PoliteWeb;
    // Crawlee tears the storage client down at the end of the run; the helper cleans up on its own connection.
    const under = redisStorage(uniquePrefix('broad-defaults').replace(/:+$/, ''));
    beforeAll(async () => {
        web = await startBroadWeb({
            prefix: 'wide-rs',
            sites: SITES,
            pages: PAGES,
            crawlDelaySecs: 0.3,
            latencyMs: 10,
        });
    });
    afterAll(async () => {
        await web.close();
        await under.close();
    });

    test("150 sites under { domains: 'all' } all complete, each paced, without ThrottledDomainLimitError", async () => {
        const config = new Configuration({ storageClient: under.client(), purgeOnStart: false, persistStorage: false });
        const throttler = new ThrottlingRequestManager({ domains: 'all' }, config);
        const crawl = await crawlBroadWeb(web, throttler, config, PAGES);

        expect(throttler.options.queueLayout).toBe('shared');
        // One request per domain waits in this process's window; the rest stay where others can take them.
        expect(throttler.options.frontierWindowPerDomain).toBe(1);
        expectEveryPagePaced(web, PAGES, crawl);
    }, 120_000);
});
