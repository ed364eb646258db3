/**
 * The typed events a throttler emits, seen from a real HttpCrawler against
 * polite-web: a new domain, a backoff with its reason and figures, the recovery, and a stall.
 */
import { ProxyConfiguration } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';
import { startPoliteWeb } from '@crawlee-throttling/polite-web';
import type { PoliteWeb } from '@crawlee-throttling/polite-web';

import type { ThrottlingEvents } from 'crawlee-throttling';
import { PersistentRateLimitError, ThrottlingRequestManager } from 'crawlee-throttling';
import { memoryConfig } from '../helpers/storage';

type Seen = { [K in keyof ThrottlingEvents]: ThrottlingEvents[K][] };

describe('events (domainAdded, backoff, recovered, rateLearned, stalled)', () => {
    let web: PoliteWeb;
    beforeAll(async () => {
        web = await startPoliteWeb({
            sites: [
                { host: 'busy.example', pages: 12, rate: 5, burst: 1, refusal: { status: 429, retryAfter: 'seconds' } },
                {
                    host: 'closed.example',
                    pages: 3,
                    rate: 0.001,
                    burst: 1,
                    refusal: { status: 503, retryAfter: 'none' },
                },
            ],
        });
    });
    afterAll(async () => web.close());

    function listen(throttler: ThrottlingRequestManager): Seen {
        const seen: Seen = { domainAdded: [], backoff: [], recovered: [], rateLearned: [], stalled: [] };
        for (const name of Object.keys(seen) as (keyof ThrottlingEvents)[]) {
            throttler.on(name, (event) => (seen[name] as unknown[]).push(event));
        }
        return seen;
    }

    function crawler(throttler: ThrottlingRequestManager, config: ReturnType<typeof memoryConfig>) {
        const c = new HttpCrawler(
            {
                requestQueue: throttler.asRequestQueue(),
                proxyConfiguration: new ProxyConfiguration({ proxyUrls: [web.proxyUrl] }),
                maxConcurrency: 6,
                requestHandler: async () => undefined,
            },
            config,
        );
        throttler.attach(c);
        return c;
    }

    test('a refusing site: domainAdded once, a backoff naming 429 and Retry-After, then recovered and rateLearned', async () => {
        web.reset();
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager({ domains: 'all', concurrency: 4 }, config);
        const seen = listen(throttler);
        const urls = Array.from({ length: 12 }, (_, i) => web.url('busy.example', `/page/${i}`));
        await crawler(throttler, config).run(urls);

        expect(seen.domainAdded).toEqual([{ domain: 'busy.example', queueName: 'throttled-busy.example' }]);
        expect(seen.backoff.length).toBeGreaterThan(0);
        expect(seen.backoff[0]).toMatchObject({
            domain: 'busy.example',
            reason: 'refused',
            statusCode: 429,
            exponent: 1,
        });
        expect(seen.backoff[0].retryAfterMs).toBeGreaterThan(0);
        expect(seen.backoff[0].waitMs).toBeGreaterThanOrEqual(seen.backoff[0].retryAfterMs!);
        expect(seen.recovered.length).toBeGreaterThan(0);
        expect(seen.recovered[0]).toMatchObject({ domain: 'busy.example' });
        expect(seen.recovered[0].refusals).toBeGreaterThan(0);
        expect(seen.stalled).toEqual([]);
        // Adaptive pacing (the default) reported what it learned of the 5 req/s site, first after a refusal.
        expect(seen.rateLearned[0]).toMatchObject({ domain: 'busy.example', previousRate: 0, reason: 'refused' });
        for (const e of seen.rateLearned) {
            expect(e.rate).toBeGreaterThan(0);
            expect(e.rate).toBeLessThan(50);
            expect(Math.abs(e.rate - e.previousRate)).toBeGreaterThanOrEqual(e.previousRate * 0.1);
        }
        // The same figures the score counts: every backoff followed a refusal the server logged.
        expect(web.score().sites.find((s) => s.host === 'busy.example')!.refusals).toBeGreaterThanOrEqual(
            seen.backoff.length,
        );
    });

    test('a site refusing everything: a stalled event before PersistentRateLimitError', async () => {
        web.reset();
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager(
            { domains: 'all', maxDomainStallSecs: 2, baseDelaySecs: 0.2, maxDelaySecs: 0.5 },
            config,
        );
        const seen = listen(throttler);
        const urls = Array.from({ length: 3 }, (_, i) => web.url('closed.example', `/page/${i}`));
        // The first request gets the site's one token; the rest are refused until the stall ends the crawl.
        await expect(crawler(throttler, config).run(urls)).rejects.toBeInstanceOf(PersistentRateLimitError);
        expect(seen.stalled).toHaveLength(1);
        expect(seen.stalled[0]).toMatchObject({ domain: 'closed.example' });
        expect(seen.stalled[0].stalledForMs).toBeGreaterThan(2_000);
        expect(seen.backoff.every((b) => b.reason === 'refused' && b.statusCode === 503)).toBe(true);
    });

    test('a listener that throws is logged and ignored; off() removes a listener', async () => {
        // Under 'perDomain' a domain is added when its first request is; 'shared' meets it when fetched.
        const throttler = new ThrottlingRequestManager({ domains: 'all', queueLayout: 'perDomain' }, memoryConfig());
        let calls = 0;
        const listener = () => {
            calls += 1;
            throw new Error('broken exporter');
        };
        throttler.on('domainAdded', listener);
        await throttler.addRequest({ url: 'https://a.example/1' });
        throttler.off('domainAdded', listener);
        await throttler.addRequest({ url: 'https://b.example/1' });
        expect(calls).toBe(1);
    });
});
