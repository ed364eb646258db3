import { CheerioCrawler } from '@crawlee/cheerio';
import { log, LogLevel } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';
import { JSDOMCrawler } from '@crawlee/jsdom';

import type { TestServer } from '../helpers/servers';
import { refuseEverySecond, retriesAfterRefusals, startServer } from '../helpers/servers';
import type { CrawlerFactory } from '../helpers/throttled-crawl';
import { crawlThroughThrottler } from '../helpers/throttled-crawl';

// Every 429 makes Crawlee log "Reclaiming failed request": expected here, so keep it out of the output.
const previousLevel = log.getLevel();
beforeAll(() => log.setLevel(LogLevel.ERROR));
afterAll(() => log.setLevel(previousLevel));

const crawlers: [string, CrawlerFactory, string][] = [
    ['HttpCrawler', (options, config) => new HttpCrawler(options, config), '127.0.0.2'],
    ['CheerioCrawler', (options, config) => new CheerioCrawler(options, config), '127.0.0.3'],
    ['JSDOMCrawler', (options, config) => new JSDOMCrawler(options, config), '127.0.0.4'],
];

const PAGES = 6;

describe.each(crawlers)(
    '%s against a host answering 429 + Retry-After: 1 to every second request',
    (name, makeCrawler, host) => {
        let server: TestServer;
        beforeAll(async () => {
            server = await startServer({ host, handler: refuseEverySecond('1') });
        });
        afterAll(async () => server?.close());

        test('handles every page, waits out each Retry-After, spends no retry and retires no session', async () => {
            const paths = Array.from({ length: PAGES }, (_, i) => `/page/${i + 1}`);
            const { throttler, handled, failed, stats } = await crawlThroughThrottler(
                makeCrawler,
                paths.map((p) => server.url(p)),
                { maxConcurrency: 4 },
            );

            const pages = server.pages();
            const refusals = pages.filter((e) => e.status === 429);
            const sessionIds = new Set(handled.map((h) => h.sessionId));
            console.log(
                `FIGURES ${JSON.stringify({
                    crawler: name,
                    pages: PAGES,
                    requestsSent: pages.length,
                    robotsFetches: server.robots().length,
                    received429: refusals.length,
                    handled: handled.length,
                    failed: failed.length,
                    sessionsRetired: sessionIds.size - 1,
                    maxRetryCount: Math.max(...handled.map((h) => h.retryCount)),
                    durationMs: stats.crawlerRuntimeMillis,
                })}`,
            );

            // All pages handled, none failed.
            expect(failed).toEqual([]);
            expect(handled.map((h) => h.path).sort()).toEqual([...paths].sort());
            expect(stats.requestsFinished).toBe(PAGES);
            expect(stats.requestsFailed).toBe(0);
            // The scenario really happened: refusals were sent (every second request).
            expect(refusals.length).toBeGreaterThanOrEqual(PAGES - 1);
            expect(pages.length).toBe(PAGES + refusals.length);

            // Every refused path was asked again no sooner than Retry-After (1 s) after the refusal.
            const retries = retriesAfterRefusals(pages);
            expect(retries).toHaveLength(refusals.length);
            const tooEarly = retries.filter((r) => r.retriedAt === undefined || r.retriedAt - r.refusedAt < 1000);
            expect(tooEarly).toEqual([]);

            // A throttled retry costs nothing: retryCount is 0 everywhere.
            expect(handled.map((h) => h.retryCount)).toEqual(handled.map(() => 0));
            // The one session of the pool served every page and was never penalised.
            expect(sessionIds.size).toBe(1);
            expect([...sessionIds][0]).toEqual(expect.any(String));
            expect(handled.map((h) => h.errorScore)).toEqual(handled.map(() => 0));

            expect(await throttler.isFinished()).toBe(true);
            // Room for the pace: a share of one half refused reads as a one-token bucket paced too
            // fast, so the learner cuts after each refusal (about 30 s for these 6 pages; see
            // docs/rampup.md). What is checked here is that nothing is lost or spent, not the time.
        }, 150_000);
    },
);
