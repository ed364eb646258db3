import { log, LogLevel } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';

import type { ThrottlingRequestManagerOptions } from 'crawlee-throttling';
import { ThrottlingRequestManager } from 'crawlee-throttling';
import type { Reply, TestServer } from '../helpers/servers';
import { startServer } from '../helpers/servers';
import { memoryConfig } from '../helpers/storage';

const previousLevel = log.getLevel();
beforeAll(() => log.setLevel(LogLevel.ERROR));
afterAll(() => log.setLevel(previousLevel));

const servers: TestServer[] = [];
afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
});

/** Crawls `pages` paths of a fresh host whose robots.txt answers `robots`; returns what the server saw. */
async function crawl(
    host: string,
    robots: Reply | ((n: number) => Reply),
    pages: number,
    options: Partial<ThrottlingRequestManagerOptions> = {},
    expectHandled = true,
) {
    const server = await startServer({ host, robots });
    servers.push(server);
    const config = memoryConfig();
    const throttler = new ThrottlingRequestManager({ domains: 'all', maxDomainStallSecs: 30, ...options }, config);
    const handled: string[] = [];
    const failed: Error[] = [];
    const crawler = new HttpCrawler(
        {
            requestQueue: throttler.asRequestQueue(),
            maxConcurrency: 4,
            requestHandler: async ({ request }) => {
                handled.push(new URL(request.url).pathname);
            },
            failedRequestHandler: async (_context, error) => {
                failed.push(error);
            },
        },
        config,
    );
    throttler.attach(crawler);
    const paths = Array.from({ length: pages }, (_, i) => `/p${i + 1}`);
    const startedAt = Date.now();
    await crawler.run(paths.map((p) => server.url(p)));
    const durationMs = Date.now() - startedAt;
    if (expectHandled) expect(handled.sort()).toEqual([...paths].sort());
    const times = server.pages().map((e) => e.at);
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    return {
        server,
        throttler,
        failed,
        durationMs,
        times,
        gaps,
        snapshot: throttler.snapshot().find((d) => d.domain === host),
    };
}

const crawlDelay = (secs: number): Reply => ({
    status: 200,
    headers: { 'content-type': 'text/plain' },
    body: `User-agent: *\nCrawl-delay: ${secs}\n`,
});

describe('robots.txt Crawl-delay in a real crawl (HttpCrawler)', () => {
    // Tolerance 0, measured where it matters (arrival at the server). Counted from the hand-out alone,
    // the request reaching the server a varying few ms after its dispatch made gaps of 444-499 ms; the
    // crawl-delay clock is re-armed when the response arrives.
    test('Crawl-delay: 0.5: consecutive page requests reach the server at least 500 ms apart; robots.txt is fetched once, first', async () => {
        const { server, gaps, snapshot } = await crawl('127.0.0.11', crawlDelay(0.5), 8, {
            robotsUserAgent: 'PoliteBot/1.0',
        });

        expect(server.robots()).toHaveLength(1);
        expect(server.robots()[0].userAgent).toBe('PoliteBot/1.0');
        expect(server.log[0].path).toBe('/robots.txt');
        expect(server.pages()).toHaveLength(8);
        expect(gaps.filter((g) => g < 500)).toEqual([]);
        expect(snapshot).toMatchObject({ crawlDelayMs: 500, intervalMs: 500 });
    });

    test('robots.txt answering 429 with Retry-After: 1 holds the pages back and is read again after the backoff; past maxRobotsRetries the pages fail unsent', async () => {
        const { server, failed } = await crawl(
            '127.0.0.12',
            { status: 429, headers: { 'retry-after': '1' }, body: 'slow down' },
            3,
            { maxRobotsRetries: 1 },
            false,
        );

        // Read twice (the second read waits out the first 429), then disallowed (RFC 9309 §2.3.1.4).
        const robots = server.robots();
        expect(robots).toHaveLength(2);
        expect(robots[1].at - robots[0].at).toBeGreaterThanOrEqual(1000);
        expect(server.pages()).toHaveLength(0);
        expect(failed.map((e) => e.name)).toEqual([
            'RobotsUnreachableError',
            'RobotsUnreachableError',
            'RobotsUnreachableError',
        ]);
    });

    test('a robots.txt that answered 429 and then its file: the Crawl-delay of the second read applies', async () => {
        const robots = (n: number): Reply =>
            n === 1 ? { status: 429, headers: { 'retry-after': '1' }, body: 'slow down' } : crawlDelay(0.3);
        const { server, gaps, snapshot } = await crawl('127.0.0.15', robots, 4);

        expect(server.robots()).toHaveLength(2);
        expect(server.pages()[0].at).toBeGreaterThan(server.robots()[1].at);
        expect(snapshot).toMatchObject({ crawlDelayMs: 300 });
        expect(gaps.filter((g) => g < 300)).toEqual([]);
    });

    test('robots.txt 404: no crawl delay, pages may come close together', async () => {
        const { server, gaps, durationMs, snapshot } = await crawl('127.0.0.13', { status: 404 }, 6);

        expect(server.robots()).toHaveLength(1);
        expect(snapshot).toMatchObject({ crawlDelayMs: 0, intervalMs: 0 });
        // Nothing spaces the pages: all six within a second, some of them close together.
        const pages = server.pages();
        expect(pages[pages.length - 1].at - pages[0].at).toBeLessThan(1000);
        expect(Math.min(...gaps)).toBeLessThan(200);
        expect(durationMs).toBeLessThan(5000);
    });

    test('maxCrawlDelaySecs: 0.3 caps Crawl-delay: 5 (gaps at least 300 ms, the crawl finishes quickly)', async () => {
        // The cap is announced with a warning (recorded here, kept out of the output).
        const warning = jest
            .spyOn(Object.getPrototypeOf(log) as { warning(message: string): void }, 'warning')
            .mockImplementation(() => undefined);
        let result: Awaited<ReturnType<typeof crawl>>;
        let warnings: string[];
        try {
            result = await crawl('127.0.0.14', crawlDelay(5), 4, { maxCrawlDelaySecs: 0.3 });
        } finally {
            warnings = warning.mock.calls.map(([m]) => String(m));
            warning.mockRestore();
        }
        const { gaps, durationMs, times, snapshot } = result;
        const capWarnings = warnings.filter((m) => m.includes('Crawl-delay: 5') && m.includes('maxCrawlDelaySecs'));
        expect(capWarnings).toHaveLength(1);

        expect(gaps.filter((g) => g < 300)).toEqual([]);
        expect(snapshot).toMatchObject({ crawlDelayMs: 300, intervalMs: 300 });
        // Uncapped, four pages would take 15 s.
        expect(times[times.length - 1] - times[0]).toBeLessThan(2000);
        expect(durationMs).toBeLessThan(5000);
    });
});
