import { ProxyConfiguration } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';
import { startPoliteWeb } from '@crawlee-throttling/polite-web';
import type { PoliteWeb } from '@crawlee-throttling/polite-web';

import { ThrottlingRequestManager } from 'crawlee-throttling';
import { memoryConfig } from '../helpers/storage';

const HOST = 'bucket.example';
const RATE = 5;
const PAGES = 12;
// The share of the rate the throttler is told: a 333 ms interval at a 200 ms bucket. Requests sent an
// interval apart still reach the site tens of ms apart less on a loaded machine (a new connection
// through the proxy, the socket), which no client sees: with a 50 ms margin (told 80 %) one request
// in a clean-clone CI run was still refused now and then. 133 ms leaves room for that lag, and the
// holds below are sized so that a request counted only from the first hook lands at least 67 ms too
// close, and is refused.
const TOLD = 0.6;

/**
 * A request can lag after the throttler's pre-navigation hook: the crawler's own later hooks, and
 * got-scraping's header generation, run between it and the send. When only that first hook counted
 * the departure, a request that lagged there reached the site late, and the next one, on time, less
 * than an interval after it: a burst-1 bucket refused it.
 */
describe('the interval counts from when the request is sent', () => {
    let web: PoliteWeb;
    beforeAll(async () => {
        web = await startPoliteWeb({ sites: [{ host: HOST, pages: PAGES, latencyMs: 20, rate: RATE, burst: 1 }] });
    });
    afterAll(async () => web.close());
    // Each case judges its own arrivals, against a full bucket.
    beforeEach(() => web.reset());

    // 200 ms: the held request is counted again at its send, before the next one is handed out (counted
    // from the first hook, the next one would arrive 133 ms after it). 400 ms, longer than the
    // interval: the next one is handed out and sent first, and the held one waits at its send for an
    // interval after it (counted from the first hook, it would arrive 67 ms after the next one).
    test.each([200, 400])(
        'a pre-navigation hook that holds every other request %i ms does not bring the next one too close',
        async (holdMs) => {
            const config = memoryConfig();
            const throttler = new ThrottlingRequestManager(
                {
                    domains: 'all',
                    rampup: false,
                    respectCrawlDelay: false,
                    scopes: { [HOST]: { delaySecs: 1 / (TOLD * RATE), concurrency: 2 } },
                },
                config,
            );
            let sent = 0;
            const crawler = new HttpCrawler(
                {
                    requestQueue: throttler.asRequestQueue(),
                    proxyConfiguration: new ProxyConfiguration({ proxyUrls: [web.proxyUrl] }),
                    maxConcurrency: 4,
                    maxRequestRetries: 5,
                    // The user's own hook, after the throttler's: every other request waits in it.
                    preNavigationHooks: [
                        async () => {
                            sent += 1;
                            if (sent % 2 === 1) await new Promise((resolve) => setTimeout(resolve, holdMs));
                        },
                    ],
                    requestHandler: async () => undefined,
                },
                config,
            );
            throttler.attach(crawler);
            await crawler.run(Array.from({ length: PAGES }, (_, i) => web.url(HOST, `/page/${i}`)));

            const arrivals = web.log.filter((e) => e.site === HOST && e.path.startsWith('/page/'));
            const times = arrivals.map((e) => e.time).sort((a, b) => a - b);
            const gaps = times.slice(1).map((t, i) => t - times[i]);
            expect(arrivals.filter((e) => e.refused)).toHaveLength(0);
            // The bucket's own interval, less a few ms for timers.
            expect(Math.min(...gaps)).toBeGreaterThanOrEqual(1000 / RATE - 5);
            expect(new Set(arrivals.map((e) => e.path)).size).toBe(PAGES);
        },
    );
});
