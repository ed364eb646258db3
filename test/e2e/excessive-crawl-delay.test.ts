/**
 * A robots.txt `Crawl-delay` above `maxCrawlDelaySecs`. With
 * `onExcessiveCrawlDelay: 'skip'` that site's requests fail promptly with `CrawlDelayTooLongError`;
 * the default `'cap'` paces it at the maximum.
 */
import { ProxyConfiguration } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';
import { startPoliteWeb } from '@crawlee-throttling/polite-web';
import type { PoliteWeb } from '@crawlee-throttling/polite-web';

import type { ThrottlingRequestManagerOptions } from 'crawlee-throttling';
import { ThrottlingRequestManager } from 'crawlee-throttling';
import { memoryConfig } from '../helpers/storage';

describe('Crawl-delay above maxCrawlDelaySecs', () => {
    let web: PoliteWeb;
    beforeAll(async () => {
        web = await startPoliteWeb({
            sites: [
                { host: 'slow.example', pages: 4, crawlDelay: 90 },
                { host: 'fine.example', pages: 3 },
            ],
        });
    });
    afterAll(async () => web.close());

    async function crawl(options: Partial<ThrottlingRequestManagerOptions>, urls: string[]) {
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager({ domains: 'all', ...options }, config);
        const handled: string[] = [];
        const failed: { url: string; error: string }[] = [];
        const crawler = new HttpCrawler(
            {
                requestQueue: throttler.asRequestQueue(),
                proxyConfiguration: new ProxyConfiguration({ proxyUrls: [web.proxyUrl] }),
                requestHandler: async ({ request }) => {
                    handled.push(request.url);
                },
                failedRequestHandler: async ({ request }, error) => {
                    failed.push({ url: request.url, error: `${error.name}: ${error.message}` });
                },
            },
            config,
        );
        throttler.attach(crawler);
        const started = Date.now();
        await crawler.run(urls);
        return { throttler, handled, failed, tookMs: Date.now() - started };
    }

    test("'skip': the slow site's pages fail with CrawlDelayTooLongError at once, nothing is sent to it", async () => {
        web.reset();
        const slow = Array.from({ length: 4 }, (_, i) => web.url('slow.example', `/page/${i}`));
        const fine = Array.from({ length: 3 }, (_, i) => web.url('fine.example', `/page/${i}`));
        const { handled, failed, tookMs } = await crawl({ onExcessiveCrawlDelay: 'skip' }, [...slow, ...fine]);
        expect(handled.sort()).toEqual([...fine].sort());
        expect(failed.map((f) => f.url).sort()).toEqual([...slow].sort());
        for (const f of failed) {
            expect(f.error).toMatch(
                /^CrawlDelayTooLongError: .*Crawl-delay: 90 s, more than maxCrawlDelaySecs \(60 s\)/,
            );
        }
        // Only robots.txt reached the slow site.
        const pagesServed = web.log.filter((e) => e.site === 'slow.example' && !e.path.startsWith('/robots.txt'));
        expect(pagesServed).toHaveLength(0);
        expect(tookMs).toBeLessThan(20_000);
    });

    test("'cap' (the default): the site is paced at maxCrawlDelaySecs", async () => {
        web.reset();
        const { throttler, handled } = await crawl({ maxCrawlDelaySecs: 0.5 }, [
            web.url('slow.example', '/page/0'),
            web.url('slow.example', '/page/1'),
        ]);
        expect(handled).toHaveLength(2);
        expect(throttler.snapshot().find((s) => s.domain === 'slow.example')).toMatchObject({ crawlDelayMs: 500 });
        const pages = web.log.filter((e) => e.site === 'slow.example' && !e.path.startsWith('/robots.txt'));
        expect(pages[1].time - pages[0].time).toBeGreaterThanOrEqual(495);
    });

    test('onExcessiveCrawlDelay is validated', () => {
        expect(() => new ThrottlingRequestManager({ domains: 'all', onExcessiveCrawlDelay: 'drop' as never })).toThrow(
            /onExcessiveCrawlDelay must be 'cap' or 'skip'/,
        );
    });
});
