/**
 * Per-domain statistics from `throttler.stats()`, and the summary logged when
 * the crawl ends, after a real HttpCrawler crawl of polite-web.
 */
import { log as crawleeLog, ProxyConfiguration } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';
import { startPoliteWeb } from '@crawlee-throttling/polite-web';
import type { PoliteWeb } from '@crawlee-throttling/polite-web';

import { ThrottlingRequestManager } from 'crawlee-throttling';
import { memoryConfig } from '../helpers/storage';

describe('statistics', () => {
    let web: PoliteWeb;
    beforeAll(async () => {
        web = await startPoliteWeb({
            sites: [
                { host: 'busy.example', pages: 10, rate: 4, burst: 1, refusal: { status: 429, retryAfter: 'seconds' } },
                { host: 'calm.example', pages: 4 },
            ],
        });
    });
    afterAll(async () => web.close());

    test('stats() counts requests, refusals, free retries and time backed off; the summary is logged at the end', async () => {
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager({ domains: 'all', concurrency: 4 }, config);
        const infos: string[] = [];
        let final: Record<string, unknown> = {};
        let finalLogged: Record<string, unknown> | undefined;
        const spy = jest.spyOn(crawleeLog.constructor.prototype, 'info').mockImplementation(function (
            this: unknown,
            ...args: unknown[]
        ) {
            infos.push(String(args[0]));
            if (args[0] === 'Final request statistics:') finalLogged = args[1] as Record<string, unknown>;
        });
        try {
            const crawler = new HttpCrawler(
                {
                    requestQueue: throttler.asRequestQueue(),
                    proxyConfiguration: new ProxyConfiguration({ proxyUrls: [web.proxyUrl] }),
                    maxConcurrency: 8,
                    requestHandler: async () => undefined,
                },
                config,
            );
            throttler.attach(crawler);
            const urls = [
                ...Array.from({ length: 10 }, (_, i) => web.url('busy.example', `/page/${i}`)),
                ...Array.from({ length: 4 }, (_, i) => web.url('calm.example', `/page/${i}`)),
            ];
            final = (await crawler.run(urls)) as unknown as Record<string, unknown>;
        } finally {
            spy.mockRestore();
        }
        const busy = throttler.stats().find((s) => s.domain === 'busy.example')!;
        const calm = throttler.stats().find((s) => s.domain === 'calm.example')!;
        const served = web.score().sites.find((s) => s.host === 'busy.example')!;
        expect(busy.handled).toBe(10);
        expect(busy.refused).toBe(served.refusals);
        expect(busy.refused).toBeGreaterThan(0);
        expect(busy.freeRetries).toBe(busy.refused);
        expect(busy.requests).toBe(10 + busy.freeRetries);
        expect(busy.backedOffMs).toBeGreaterThanOrEqual(1_000);
        expect(calm).toMatchObject({ requests: 4, handled: 4, refused: 0, freeRetries: 0, backedOffMs: 0 });
        // Crawlee's own statistics show the free retries its retry histogram leaves out.
        expect(final.throttledRetries).toBe(busy.freeRetries);
        expect(finalLogged?.throttledRetries).toBe(busy.freeRetries);
        expect(final.retryHistogram).toEqual([10 + 4]);
        const summary = infos.filter((line) => line.startsWith('Final throttling statistics per domain'));
        expect(summary).toHaveLength(1);
        expect(summary[0]).toContain(`busy.example: ${busy.requests} requests, 10 handled, ${busy.refused} refused`);
        expect(summary[0]).toContain('calm.example: 4 requests, 4 handled, 0 refused');
    });
});
