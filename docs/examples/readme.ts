// The README's usage block, run against a local site that allows 5 requests per second and answers
// anything faster with 429 and a Retry-After. Each page links to the next ones.
import { CheerioCrawler } from '@crawlee/cheerio';
import { ProxyConfiguration } from '@crawlee/core';
import { startPoliteWeb } from '@crawlee-throttling/polite-web';
import { ThrottlingRequestManager } from 'crawlee-throttling';

export async function main(config?: ConstructorParameters<typeof CheerioCrawler>[1]) {
    const web = await startPoliteWeb({
        sites: [{ host: 'shop.example', pages: 60, rate: 5, burst: 5, latencyMs: 30 }],
    });
    try {
        const throttler = new ThrottlingRequestManager({ domains: 'all' }, config);
        const crawler = new CheerioCrawler(
            {
                requestQueue: throttler.asRequestQueue(),
                proxyConfiguration: new ProxyConfiguration({ proxyUrls: [web.proxyUrl] }),
                async requestHandler({ enqueueLinks }) {
                    await enqueueLinks();
                },
            },
            config,
        );
        throttler.attach(crawler);
        const started = Date.now();
        await crawler.run([web.url('shop.example', '/page/0')]);
        return { stats: throttler.stats(), seconds: (Date.now() - started) / 1000 };
    } finally {
        await web.close();
    }
}

if (require.main === module) void main().then((r) => console.log(JSON.stringify(r, null, 1)));
