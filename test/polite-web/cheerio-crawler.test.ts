import { CheerioCrawler } from '@crawlee/cheerio';
import { Configuration, log, ProxyConfiguration } from '@crawlee/core';
import { startPoliteWeb, type PoliteWeb } from '@crawlee-throttling/polite-web';

describe('a real CheerioCrawler through the polite-web proxy', () => {
    let web: PoliteWeb;

    beforeAll(async () => {
        log.setLevel(log.LEVELS.OFF);
        web = await startPoliteWeb({
            sites: [
                { host: 'alpha.example', pages: 6, crossLinks: ['beta.example'] },
                { host: 'beta.example', pages: 4 },
            ],
        });
    });
    afterAll(() => web.close());

    it('discovers the second site by a cross-link and gets every page served', async () => {
        const handled: string[] = [];
        const crawler = new CheerioCrawler(
            {
                proxyConfiguration: new ProxyConfiguration({ proxyUrls: [web.proxyUrl] }),
                maxConcurrency: 4,
                maxRequestRetries: 0,
                async requestHandler({ request, enqueueLinks }) {
                    handled.push(request.loadedUrl ?? request.url);
                    await enqueueLinks({ strategy: 'all' });
                },
            },
            // Private in-memory storage: parallel jest workers must not share a request queue.
            new Configuration({ persistStorage: false }),
        );

        const stats = await crawler.run([web.url('alpha.example')]);

        expect(stats.requestsFailed).toBe(0);
        const score = web.score();
        expect(score.sites.map((s) => [s.host, s.distinctPagesServed, s.refusals])).toEqual([
            ['alpha.example', 7, 0],
            ['beta.example', 5, 0],
        ]);
        expect(handled).toHaveLength(12);
        expect(handled).toContain('http://beta.example/page/3');
        // Every request reached the server through the proxy, by hostname.
        expect(new Set(web.log.map((e) => e.site))).toEqual(new Set(['alpha.example', 'beta.example']));
    });
});
