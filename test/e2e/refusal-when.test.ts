/**
 * Rate limits that don't come as a 429, in a real crawl against polite-web.
 * `refusalWhen` marks Shopify's 430 and a 200 "slow down" page as refusals (backoff, free retries),
 * and a 503 challenge page as blocked (Crawlee's session handling, no backoff).
 */
import type { Session } from '@crawlee/core';
import { log, LogLevel, ProxyConfiguration } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';
import { startPoliteWeb } from '@crawlee-throttling/polite-web';
import type { PoliteWeb } from '@crawlee-throttling/polite-web';

import type { ThrottlingRequestManagerOptions } from 'crawlee-throttling';
import { ThrottlingRequestManager } from 'crawlee-throttling';
import { memoryConfig } from '../helpers/storage';

const previousLevel = log.getLevel();
beforeAll(() => log.setLevel(LogLevel.OFF));
afterAll(() => log.setLevel(previousLevel));

const CHALLENGE = '<html><head><title>Just a moment...</title></head><body>Checking your browser</body></html>';

describe('refusalWhen in a real crawl', () => {
    let web: PoliteWeb;
    beforeAll(async () => {
        const limited = { rate: 2, burst: 1, pages: 6 };
        web = await startPoliteWeb({
            sites: [
                { host: 'shop.example', ...limited, refusal: { status: 430, retryAfter: 'none' } },
                {
                    host: 'soft.example',
                    ...limited,
                    refusal: {
                        status: 200,
                        retryAfter: 'none',
                        body: '<html><body><h1>Rate limit exceeded</h1></body></html>',
                        contentType: 'text/html; charset=utf-8',
                    },
                },
                {
                    host: 'guarded.example',
                    ...limited,
                    refusal: { status: 503, retryAfter: 'none', body: CHALLENGE, contentType: 'text/html' },
                },
            ],
        });
    });
    afterAll(async () => web.close());

    interface Outcome {
        url: string;
        status: number;
        body: string;
        retryCount: number;
    }

    async function crawl(host: string, options: Partial<ThrottlingRequestManagerOptions> = {}) {
        web.reset();
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager(
            { domains: 'all', respectCrawlDelay: false, ...options },
            config,
        );
        const handled: Outcome[] = [];
        const failed: string[] = [];
        const errors: { name: string; session?: Session }[] = [];
        const crawler = new HttpCrawler(
            {
                requestQueue: throttler.asRequestQueue(),
                proxyConfiguration: new ProxyConfiguration({ proxyUrls: [web.proxyUrl] }),
                requestHandler: async ({ request, response, body }) => {
                    const { retryCount } = request;
                    handled.push({ url: request.url, status: response.statusCode!, body: body.toString(), retryCount });
                },
                errorHandler: async ({ session }, error) => {
                    errors.push({ name: error.name, session });
                },
                failedRequestHandler: async ({ request }) => {
                    failed.push(request.url);
                },
            },
            config,
        );
        throttler.attach(crawler);
        const urls = Array.from({ length: 6 }, (_, i) => web.url(host, `/page/${i}`));
        await crawler.run(urls);
        const refusedByServer = web.log.filter((e) => e.site === host && e.refused).length;
        const stats = throttler.stats().find((s) => s.domain === host);
        return { handled, failed, errors, urls, refusedByServer, stats };
    }

    const realPage = (o: Outcome) => o.body.includes(`page ${new URL(o.url).pathname.split('/').pop()}</h1>`);

    test("{ statusCodes: [430] }: Shopify's 430 backs off and is retried for free; every page is crawled", async () => {
        const { handled, failed, urls, refusedByServer, stats } = await crawl('shop.example', {
            refusalWhen: { statusCodes: [430] },
        });
        expect(failed).toEqual([]);
        expect(handled.map((h) => h.url).sort()).toEqual([...urls].sort());
        expect(handled.every((h) => h.status === 200 && realPage(h))).toBe(true);
        expect(refusedByServer).toBeGreaterThan(0);
        // Free retries: none of them cost a retry.
        expect(handled.filter((h) => h.retryCount > 0)).toEqual([]);
        expect(stats).toMatchObject({ refused: refusedByServer, freeRetries: refusedByServer });
    });

    test('without refusalWhen the 430s are not taken for refusals: pages fail', async () => {
        const { handled, failed, refusedByServer } = await crawl('shop.example');
        expect(refusedByServer).toBeGreaterThan(0);
        expect(failed.length).toBeGreaterThan(0);
        expect(handled.length).toBeLessThan(6);
    });

    test('{ bodyPattern }: a 200 "Rate limit exceeded" page is refused; the crawler gets the real pages, whole', async () => {
        const { handled, failed, refusedByServer, stats } = await crawl('soft.example', {
            refusalWhen: { bodyPattern: /rate limit exceeded/i },
        });
        expect(failed).toEqual([]);
        expect(handled).toHaveLength(6);
        // Read for matching, then handed to Crawlee: each handled body is its page, not the refusal.
        expect(handled.filter((h) => !realPage(h))).toEqual([]);
        expect(handled.filter((h) => h.retryCount > 0)).toEqual([]);
        expect(refusedByServer).toBeGreaterThan(0);
        expect(stats).toMatchObject({ refused: refusedByServer });

        // Without it, some "slow down" pages pass for pages.
        const control = await crawl('soft.example');
        expect(control.handled.filter((h) => !realPage(h)).length).toBeGreaterThan(0);
    });

    test("a function answering 'blocked' for a 503 challenge page: Crawlee retires the session and retries; nothing backs off", async () => {
        // 'blocked' does not slow the domain down, so the crawl's own pace decides how often a
        // challenge is met; 0.3 s between requests against a 2 req/s site meets one every other request.
        const { handled, failed, errors, refusedByServer, stats } = await crawl('guarded.example', {
            delaySecs: 0.3,
            refusalWhen: async (_context, response) =>
                response.statusCode === 503 && (await response.body())?.includes('Checking your browser')
                    ? 'blocked'
                    : undefined,
        });
        expect(failed).toEqual([]);
        expect(handled).toHaveLength(6);
        expect(handled.filter((h) => !realPage(h))).toEqual([]);
        expect(refusedByServer).toBeGreaterThan(0);
        expect(errors.map((e) => e.name)).toEqual(Array(refusedByServer).fill('RequestBlockedError'));
        // The session of each blocked attempt is retired, and each retry counted (not a free one).
        expect(errors.every((e) => e.session !== undefined && !e.session.isUsable())).toBe(true);
        const retried = handled.reduce((sum, h) => sum + h.retryCount, 0);
        expect(retried).toBe(refusedByServer);
        expect(stats).toMatchObject({ refused: 0, freeRetries: 0, backedOffMs: 0 });
    });
});
