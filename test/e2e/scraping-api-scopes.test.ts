import { HttpCrawler } from '@crawlee/http';

import { ThrottlingRequestManager } from 'crawlee-throttling';
import { memoryConfig } from '../helpers/storage';
import type { TestServer } from '../helpers/servers';
import { startServer } from '../helpers/servers';

/**
 * A scraping-API style host: `/?url=<target>` fetches a target site. The API enforces each target's
 * own limit: at most one request per 400 ms per target, answering 429 otherwise.
 */
describe('per-request scopes against a scraping API', () => {
    const perTargetGapMs = 400;
    let api: TestServer;
    const lastByTarget = new Map<string, number>();
    const arrivals: { target: string; at: number; status: number }[] = [];

    beforeAll(async () => {
        api = await startServer({
            host: '127.0.0.1',
            handler: ({ req }) => {
                const target = new URL(new URL(req.url!, 'http://x').searchParams.get('url')!).hostname;
                const now = Date.now();
                const last = lastByTarget.get(target);
                const status = last !== undefined && now - last < perTargetGapMs ? 429 : 200;
                if (status === 200) lastByTarget.set(target, now);
                arrivals.push({ target, at: now, status });
                return status === 429 ? { status, headers: { 'retry-after': '1' }, body: 'slow down' } : { status };
            },
        });
    });
    afterAll(async () => api.close());

    test('scoping each request by its target site keeps every target within its limit', async () => {
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager(
            {
                domains: 'all',
                delaySecs: 0.45,
                // The API itself: many in flight, and a 429 about one target must not slow every target.
                scopes: { '@scraping-api': { concurrency: 8, delaySecs: 0, backoffStatusCodes: [503] } },
                getScopes: ({ url }) => {
                    const target = new URL(url).searchParams.get('url');
                    return target ? [new URL(target).hostname, '@scraping-api'] : undefined;
                },
            },
            config,
        );
        const handled: string[] = [];
        const crawler = new HttpCrawler(
            {
                requestQueue: throttler.asRequestQueue(),
                maxConcurrency: 8,
                requestHandler: async ({ request }) => {
                    handled.push(request.url);
                },
            },
            config,
        );
        throttler.attach(crawler);
        const targets = ['one.example', 'two.example', 'three.example'];
        const urls = targets.flatMap((t) =>
            [1, 2, 3, 4].map((i) => api.url(`/?url=${encodeURIComponent(`https://${t}/${i}`)}`)),
        );
        const started = Date.now();
        await crawler.run(urls);
        const elapsed = Date.now() - started;

        expect(handled).toHaveLength(12);
        expect(arrivals.filter((a) => a.status === 429)).toHaveLength(0);
        for (const target of targets) {
            const times = arrivals.filter((a) => a.target === target).map((a) => a.at);
            for (let i = 1; i < times.length; i++)
                expect(times[i] - times[i - 1]).toBeGreaterThanOrEqual(perTargetGapMs);
        }
        // Targets are paced apart from each other, not one after another: 4 requests per target at
        // 450 ms take about 1.4 s, not 12 × 450 ms.
        expect(elapsed).toBeLessThan(12 * 450);
        expect(throttler.snapshot().map((s) => s.domain)).toEqual(
            expect.arrayContaining([...targets, '@scraping-api']),
        );
    });
});
