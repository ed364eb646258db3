/**
 * A robots.txt answering 5xx or 429, or not at all, in a real crawl. The origin is
 * paused (its pages wait, spending no retry) and robots.txt is read again after growing waits; a
 * robots.txt that stays unreachable through `maxRobotsRetries` disallows the origin
 * (`RobotsUnreachableError`, RFC 9309 §2.3.1.4) instead of being crawled as if it had no rules.
 */
import { log, LogLevel, ProxyConfiguration } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';
import { startPoliteWeb } from '@crawlee-throttling/polite-web';
import type { LogEntry, PoliteWeb } from '@crawlee-throttling/polite-web';

import type { ThrottlingRequestManagerOptions } from 'crawlee-throttling';
import { ThrottlingRequestManager } from 'crawlee-throttling';
import { memoryConfig } from '../helpers/storage';

const previousLevel = log.getLevel();
beforeAll(() => log.setLevel(LogLevel.ERROR));
afterAll(() => log.setLevel(previousLevel));

describe('robots.txt that answers 5xx or 429, or not at all', () => {
    let web: PoliteWeb;
    beforeAll(async () => {
        web = await startPoliteWeb({
            sites: [
                { host: 'flaky.example', pages: 3, crawlDelay: 0.3, robots: { failFirst: { times: 2 } } },
                {
                    host: 'limited.example',
                    pages: 3,
                    robots: { failFirst: { times: 1, status: 429, retryAfterSecs: 1 } },
                },
                { host: 'cut.example', pages: 3, robots: { failFirst: { times: 1, reset: true } } },
                { host: 'down.example', pages: 4, robots: { status: 503 } },
                { host: 'fine.example', pages: 3 },
            ],
        });
    });
    afterAll(async () => web.close());

    async function crawl(options: Partial<ThrottlingRequestManagerOptions>, hosts: string[]) {
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager({ domains: 'all', ...options }, config);
        const handled: { url: string; retryCount: number }[] = [];
        const failed: { url: string; error: Error }[] = [];
        const crawler = new HttpCrawler(
            {
                requestQueue: throttler.asRequestQueue(),
                proxyConfiguration: new ProxyConfiguration({ proxyUrls: [web.proxyUrl] }),
                requestHandler: async ({ request }) => {
                    handled.push({ url: request.url, retryCount: request.retryCount });
                },
                failedRequestHandler: async ({ request }, error) => {
                    failed.push({ url: request.url, error });
                },
            },
            config,
        );
        throttler.attach(crawler);
        const urls = hosts.flatMap((host) => {
            const pages = web.sites.find((s) => s.host === host)!.pages;
            return Array.from({ length: pages }, (_, i) => web.url(host, `/page/${i}`));
        });
        const started = Date.now();
        await crawler.run(urls);
        return { throttler, handled, failed, urls, tookMs: Date.now() - started };
    }

    const robotsOf = (host: string): LogEntry[] => web.log.filter((e) => e.site === host && e.path === '/robots.txt');
    const pagesOf = (host: string): LogEntry[] => web.log.filter((e) => e.site === host && e.path !== '/robots.txt');

    test('defaults: a 503 twice, a 429 with Retry-After: 1, a reset connection: each origin waits, reads again, and is crawled once robots.txt answers', async () => {
        web.reset();
        const hosts = ['flaky.example', 'limited.example', 'cut.example', 'fine.example'];
        const { handled, failed, urls, throttler } = await crawl({}, hosts);

        expect(failed).toEqual([]);
        expect(handled.map((h) => h.url).sort()).toEqual([...urls].sort());
        // Waiting for robots.txt spent no retry.
        expect(handled.filter((h) => h.retryCount > 0)).toEqual([]);

        // 503, 503, then the file: pauses of 2 s, then 4 s (the backoff steps from baseDelaySecs),
        // and no page before the file.
        const flaky = robotsOf('flaky.example');
        expect(flaky.map((e) => e.status)).toEqual([503, 503, 200]);
        expect(flaky[1].time - flaky[0].time).toBeGreaterThanOrEqual(2_000);
        expect(flaky[2].time - flaky[1].time).toBeGreaterThanOrEqual(4_000);
        expect(pagesOf('flaky.example')[0].time).toBeGreaterThan(flaky[2].time);
        // Its Crawl-delay, read on the third try, applies.
        expect(throttler.snapshot().find((s) => s.domain === 'flaky.example')).toMatchObject({ crawlDelayMs: 300 });

        // 429 with Retry-After: 1, then the file.
        const limited = robotsOf('limited.example');
        expect(limited.map((e) => e.status)).toEqual([429, 200]);
        expect(limited[1].time - limited[0].time).toBeGreaterThanOrEqual(1_000);
        expect(pagesOf('limited.example')[0].time).toBeGreaterThan(limited[1].time);

        // A connection reset mid-body is no answer: read again at once (the error budget bounds a run
        // of those), and no page goes before the file.
        const cut = robotsOf('cut.example');
        expect(cut.map((e) => e.reset ?? false)).toEqual([true, false]);
        expect(pagesOf('cut.example')[0].time).toBeGreaterThan(cut[1].time);
        // A failed read is not a refusal of the site's pages: the pacing learns nothing from it.
        for (const host of ['flaky.example', 'limited.example', 'cut.example']) {
            expect(throttler.stats().find((s) => s.domain === host)).toMatchObject({ refused: 0, backedOffMs: 0 });
        }

        // A site whose robots.txt answered at once is not held back by the others.
        expect(pagesOf('fine.example')[0].time).toBeLessThan(flaky[1].time);
    });

    test('a robots.txt that stays at 503 through maxRobotsRetries: its pages fail with RobotsUnreachableError, none is sent', async () => {
        web.reset();
        const { handled, failed, tookMs } = await crawl({ maxRobotsRetries: 2 }, ['down.example', 'fine.example']);

        const down = robotsOf('down.example');
        expect(down.map((e) => e.status)).toEqual([503, 503, 503]);
        expect(down[1].time - down[0].time).toBeGreaterThanOrEqual(1_000);
        expect(down[2].time - down[1].time).toBeGreaterThanOrEqual(2_000);
        // RFC 9309 §2.3.1.4: complete disallow, not "no delay".
        expect(pagesOf('down.example')).toEqual([]);
        expect(failed.map((f) => new URL(f.url).hostname)).toEqual(Array(4).fill('down.example'));
        for (const { error } of failed) {
            expect(error.name).toBe('RobotsUnreachableError');
            expect(error).toMatchObject({
                code: 'ERR_THROTTLING_ROBOTS_UNREACHABLE',
                reason: 'answered 503',
                attempts: 3,
            });
        }
        expect(handled.map((h) => new URL(h.url).hostname)).toEqual(Array(3).fill('fine.example'));
        // They fail promptly once the retries are spent: the crawl ends soon after the third read.
        expect(tookMs).toBeLessThan(20_000);
    });
});
