import { BasicCrawler } from '@crawlee/basic';

import { ThrottlingRequestManager } from 'crawlee-throttling';
import { memoryConfig } from '../helpers/storage';

describe('a real BasicCrawler over the manager (no HTTP)', () => {
    test('paces each domain, serves domains fairly and finishes', async () => {
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager({ domains: 'all', minCrawlDelaySecs: 0.3 }, config);
        const seen: { host: string; at: number }[] = [];
        const crawler = new BasicCrawler(
            {
                requestQueue: throttler.asRequestQueue(),
                maxConcurrency: 6,
                requestHandler: async ({ request }) => {
                    seen.push({ host: new URL(request.url).hostname, at: Date.now() });
                },
            },
            config,
        );
        const urls = ['a.test', 'b.test', 'c.test'].flatMap((h) => [1, 2, 3, 4].map((i) => `https://${h}/${i}`));
        const stats = await crawler.run(urls);

        expect(stats.requestsFinished).toBe(12);
        expect(await throttler.isFinished()).toBe(true);
        // Pacing: per domain, consecutive handler starts at least the crawl delay apart (20 ms of
        // scheduling jitter between fetch and handler tolerated).
        for (const host of ['a.test', 'b.test', 'c.test']) {
            const times = seen.filter((s) => s.host === host).map((s) => s.at);
            expect(times).toHaveLength(4);
            for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(280);
        }
        // Fairness: the first three requests handled are one from each domain.
        expect(new Set(seen.slice(0, 3).map((s) => s.host)).size).toBe(3);
    });
});
