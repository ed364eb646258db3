// Quotas: a paid API budget of 6 credits per 2-second window, shared by every request that
// declares a cost in it; one request is corrected after the fact with reportCost().
import { ProxyConfiguration } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';
import { startPoliteWeb } from '@crawlee-throttling/polite-web';
import { ThrottlingRequestManager } from 'crawlee-throttling';

export async function main(config?: ConstructorParameters<typeof HttpCrawler>[1]) {
    const web = await startPoliteWeb({ sites: [{ host: 'api.paid.example', pages: 12 }] });
    try {
        const throttler = new ThrottlingRequestManager(
            {
                domains: 'all',
                concurrency: 8,
                scopes: { '@credits': { quota: 6, quotaWindowSecs: 2, concurrency: 8 } },
            },
            config,
        );
        const crawler = new HttpCrawler(
            {
                requestQueue: throttler.asRequestQueue(),
                proxyConfiguration: new ProxyConfiguration({ proxyUrls: [web.proxyUrl] }),
                maxConcurrency: 8,
                requestHandler: async ({ request }) => {
                    // The API said what the call really cost (e.g. from a response header).
                    if (request.url.endsWith('/page/0')) throttler.reportCost(request, 1, '@credits');
                },
            },
            config,
        );
        throttler.attach(crawler);
        await crawler.run(
            Array.from({ length: 12 }, (_, i) => ({
                url: web.url('api.paid.example', `/page/${i}`),
                userData: { throttlingScopes: { '@credits': 2 } },
            })),
        );
        // Requests per quota window (windows are fixed, aligned on the epoch), as the server logged
        // them. A request handed out in the last moments of a window arrives in the next one.
        const perWindow = new Map<number, number>();
        for (const entry of web.log) {
            if (entry.path === '/robots.txt') continue;
            const window = Math.floor(entry.time / 2000);
            perWindow.set(window, (perWindow.get(window) ?? 0) + 1);
        }
        return { served: web.score().totals.served, perWindow: [...perWindow.values()] };
    } finally {
        await web.close();
    }
}
