import { BasicCrawler } from '@crawlee/basic';

import { ThrottlingRequestManager } from 'crawlee-throttling';
import { memoryConfig } from '../helpers/storage';

describe('a real BasicCrawler over the manager (no HTTP)', () => {
    test('paces each domain, serves domains fairly and finishes', async () => {
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager({ domains: 'all', minCrawlDelaySecs: 0.3 }, config);
        const seen: { host: string; at: number }[] = [];
        // When the manager hands each request out: the pacing it promises is between these.
        const handedOut: { host: string; at: number }[] = [];
        const fetchNext = throttler.fetchNextRequest.bind(throttler);
        jest.spyOn(throttler, 'fetchNextRequest').mockImplementation(async (...args) => {
            const request = await fetchNext(...args);
            if (request) handedOut.push({ host: new URL(request.url).hostname, at: Date.now() });
            return request;
        });
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
        // Pacing: per domain, consecutive handouts at least the crawl delay apart (a millisecond of
        // clock rounding tolerated), and every request handled. Handler starts are not timed: the
        // crawler's own scheduling between handout and handler adds tens of milliseconds on a busy
        // machine, which would make any bound on them a bet on timing.
        for (const host of ['a.test', 'b.test', 'c.test']) {
            const times = handedOut.filter((s) => s.host === host).map((s) => s.at);
            expect(times).toHaveLength(4);
            for (let i = 1; i < times.length; i++) expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(299);
            expect(seen.filter((s) => s.host === host)).toHaveLength(4);
        }
        // Fairness: the first three requests handled are one from each domain.
        expect(new Set(seen.slice(0, 3).map((s) => s.host)).size).toBe(3);
    });
});
