// Per-request scopes: two sites that share one upstream budget of one request at a time,
// declared per request in userData.throttlingScopes.
import { ProxyConfiguration } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';
import { startPoliteWeb } from '@crawlee-throttling/polite-web';
import { ThrottlingRequestManager } from 'crawlee-throttling';

export async function main(config?: ConstructorParameters<typeof HttpCrawler>[1]) {
    const web = await startPoliteWeb({
        sites: [
            { host: 'eu.search.example', pages: 6, latencyMs: 50 },
            { host: 'us.search.example', pages: 6, latencyMs: 50 },
        ],
    });
    try {
        const throttler = new ThrottlingRequestManager(
            {
                domains: 'all',
                concurrency: 4,
                scopes: { '@search-backend': { concurrency: 1 } }, // the shared backend: one at a time
            },
            config,
        );
        let inFlight = 0;
        let maxInFlight = 0;
        const crawler = new HttpCrawler(
            {
                requestQueue: throttler.asRequestQueue(),
                proxyConfiguration: new ProxyConfiguration({ proxyUrls: [web.proxyUrl] }),
                maxConcurrency: 8,
                preNavigationHooks: [
                    () => {
                        inFlight += 1;
                        maxInFlight = Math.max(maxInFlight, inFlight);
                    },
                ],
                requestHandler: async () => {
                    inFlight -= 1;
                },
            },
            config,
        );
        throttler.attach(crawler);
        const hosts = ['eu.search.example', 'us.search.example'];
        await crawler.run(
            hosts.flatMap((host) =>
                Array.from({ length: 6 }, (_, i) => ({
                    url: web.url(host, `/page/${i}`),
                    userData: { throttlingScopes: '@search-backend' },
                })),
            ),
        );
        return { served: web.score().totals.served, maxInFlight };
    } finally {
        await web.close();
    }
}
