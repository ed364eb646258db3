// Adaptive pacing (the default): find the rate a site tolerates, with no knowledge of its limit.
// Run by test/e2e/docs-examples.test.ts; the figures in docs/rampup.md come from such a run.
import { ProxyConfiguration } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';
import { startPoliteWeb } from '@crawlee-throttling/polite-web';
import { ThrottlingRequestManager } from 'crawlee-throttling';

export async function main(config?: ConstructorParameters<typeof HttpCrawler>[1]) {
    // A site that allows 5 requests per second (burst 2) and answers 429 + Retry-After beyond.
    const web = await startPoliteWeb({ sites: [{ host: 'shop.example', rate: 5, burst: 2, pages: 40 }] });
    try {
        const throttler = new ThrottlingRequestManager({ domains: 'all' }, config);
        const rates: { at: number; rate: number }[] = [];
        const crawler = new HttpCrawler(
            {
                requestQueue: throttler.asRequestQueue(),
                proxyConfiguration: new ProxyConfiguration({ proxyUrls: [web.proxyUrl] }),
                requestHandler: async () => {
                    const ramp = throttler.snapshot().find((s) => s.domain === 'shop.example')?.rampup;
                    if (ramp) rates.push({ at: Date.now(), rate: ramp.rate });
                },
            },
            config,
        );
        throttler.attach(crawler);
        await crawler.run(Array.from({ length: 40 }, (_, i) => web.url('shop.example', `/page/${i}`)));
        const site = web.score().sites[0];
        const arrivals = web.log.filter((e) => e.path !== '/robots.txt').map((e) => ({ at: e.time, status: e.status }));
        return {
            served: site.distinctPagesServed,
            refusals: site.refusals,
            requests: site.requests,
            finalRate: rates.at(-1)?.rate,
            rates,
            arrivals,
        };
    } finally {
        await web.close();
    }
}
