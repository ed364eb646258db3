import { ProxyConfiguration } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';
import { startPoliteWeb } from '@crawlee-throttling/polite-web';
import type { PoliteWeb } from '@crawlee-throttling/polite-web';

import { ThrottlingRequestManager } from 'crawlee-throttling';
import { memoryConfig } from '../helpers/storage';

describe('per-domain concurrency against a server that refuses overload', () => {
    let web: PoliteWeb;
    beforeAll(async () => {
        web = await startPoliteWeb({
            sites: [
                {
                    host: 'busy.example',
                    pages: 20,
                    latencyMs: 80,
                    maxConcurrent: 2,
                    refusal: { status: 503, retryAfter: 'none' },
                },
            ],
        });
    });
    afterAll(async () => web.close());

    test('a scope with concurrency 2: never more than 2 in flight server-side, all pages done', async () => {
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager(
            { domains: 'all', scopes: { 'busy.example': { concurrency: 2 } } },
            config,
        );
        const done: string[] = [];
        const crawler = new HttpCrawler(
            {
                requestQueue: throttler.asRequestQueue(),
                proxyConfiguration: new ProxyConfiguration({ proxyUrls: [web.proxyUrl] }),
                maxConcurrency: 10,
                requestHandler: async ({ request }) => {
                    done.push(request.url);
                },
            },
            config,
        );
        throttler.attach(crawler);
        const urls = Array.from({ length: 20 }, (_, i) => web.url('busy.example', `/page/${i}`));
        await crawler.run(urls);
        const score = web.score().sites.find((s) => s.host === 'busy.example')!;
        expect(new Set(done).size).toBe(20);
        expect(web.maxInFlight('busy.example')).toBeLessThanOrEqual(2);
        expect(score.refusals).toBe(0);
    });

    test('without a scope, the same crawl with Crawlee alone overloads the server', async () => {
        web.reset();
        const config = memoryConfig();
        const crawler = new HttpCrawler(
            {
                proxyConfiguration: new ProxyConfiguration({ proxyUrls: [web.proxyUrl] }),
                maxConcurrency: 10,
                maxRequestRetries: 8,
                requestHandler: async () => undefined,
            },
            config,
        );
        const urls = Array.from({ length: 20 }, (_, i) => web.url('busy.example', `/page/${i}?plain`));
        await crawler.run(urls);
        expect(web.maxInFlight('busy.example')).toBeGreaterThan(2);
    });
});
