/**
 * A robots.txt read that fails is not a refusal of the site's pages: it adds no refusal, no time
 * backed off and nothing to the learned rate. One the server answered with a 5xx still pauses the
 * origin and is read again before any page goes (RFC 9309 §2.3.1.4); one that got no answer is read
 * again at once, and the error budget ends a run of those. Also: Crawlee's shutdown line is not
 * logged while pages are still being crawled. Real BasicCrawler, real servers on 127.0.0.1.
 */
import { BasicCrawler } from '@crawlee/basic';
import { log } from '@crawlee/core';

import { ThrottlingRequestManager } from 'crawlee-throttling';
import type { RawServer } from '../helpers/faults';
import { answerPage, startRawServer } from '../helpers/faults';
import { memoryConfig } from '../helpers/storage';

const SHUTDOWN_LINE = 'All requests from the queue have been processed, the crawler will shut down.';

/** Runs a BasicCrawler over `urls`; records when each page was handled and when Crawlee logged its shutdown line. */
async function crawl(urls: string[]) {
    const config = memoryConfig();
    const throttler = new ThrottlingRequestManager({ domains: 'all' }, config);
    const handledAt: number[] = [];
    const shutdownLoggedAt: number[] = [];
    const info = jest.spyOn(Object.getPrototypeOf(log), 'info').mockImplementation(function (message: unknown) {
        if (message === SHUTDOWN_LINE) shutdownLoggedAt.push(Date.now());
    });
    try {
        const crawler = new BasicCrawler(
            {
                requestQueue: throttler.asRequestQueue(),
                requestHandler: async () => {
                    handledAt.push(Date.now());
                },
            },
            config,
        );
        throttler.attach(crawler);
        const started = Date.now();
        const stats = await crawler.run(urls);
        return { throttler, stats, started, handledAt, shutdownLoggedAt };
    } finally {
        info.mockRestore();
    }
}

describe('robots.txt failures are not page refusals (BasicCrawler)', () => {
    const servers: RawServer[] = [];
    afterEach(async () => {
        for (const server of servers.splice(0)) await server.close();
    });

    test('two hosts whose robots.txt never answers: 0 refused, nothing learned, the first page goes promptly', async () => {
        const cutRobots = (req: Parameters<typeof answerPage>[0], res: Parameters<typeof answerPage>[1]) => {
            if (req.url === '/robots.txt') req.socket.destroy();
            else answerPage(req, res);
        };
        const a = await startRawServer('127.0.0.1', cutRobots);
        const b = await startRawServer('localhost', cutRobots);
        servers.push(a, b);
        const { throttler, stats, started, handledAt, shutdownLoggedAt } = await crawl([
            a.url('/1'),
            a.url('/2'),
            b.url('/1'),
        ]);

        expect(stats.requestsFinished).toBe(3);
        for (const row of throttler.stats()) {
            expect(row).toMatchObject({ refused: 0, backedOffMs: 0 });
            expect(row.learnedRate).toBeUndefined();
        }
        // Each robots.txt was read again (no pause: nothing reached a server) until the error budget ended it.
        expect(a.paths.filter((p) => p === '/robots.txt').length).toBeGreaterThan(1);
        // Before, the reads' backoffs held the first page for about 27 s (1 + 2 + 8 + 16 s); now no
        // backoff runs at all (backedOffMs 0 above), so only the reads themselves take time. The bound
        // is loose for a loaded machine (about 3 s when idle).
        expect(Math.min(...handledAt) - started).toBeLessThan(20_000);
        // Crawlee's shutdown line never came while pages were still being crawled.
        expect(shutdownLoggedAt.length).toBeGreaterThan(0);
        expect(Math.min(...shutdownLoggedAt)).toBeGreaterThanOrEqual(Math.max(...handledAt));
        expect(throttler.snapshot().every((s) => s.stalledForMs === 0)).toBe(true);
    });

    test('robots.txt answering 503 twice: the origin is paused and read again (RFC 9309), yet no refusal is counted', async () => {
        let robotsReads = 0;
        const robotsAt: number[] = [];
        const pageAt: number[] = [];
        const flaky = await startRawServer('127.0.0.1', (req, res) => {
            if (req.url === '/robots.txt') {
                robotsReads += 1;
                robotsAt.push(Date.now());
                if (robotsReads <= 2) {
                    res.writeHead(503, { 'content-type': 'text/plain' });
                    res.end('busy');
                    return;
                }
                res.writeHead(200, { 'content-type': 'text/plain' });
                res.end('User-agent: *\nAllow: /\n');
                return;
            }
            pageAt.push(Date.now());
            answerPage(req, res);
        });
        servers.push(flaky);
        // BasicCrawler fetches nothing itself: the handler records the page as sent when it runs.
        const { throttler, stats, handledAt } = await crawl([flaky.url('/1'), flaky.url('/2')]);

        expect(stats.requestsFinished).toBe(2);
        expect(robotsAt).toHaveLength(3);
        // Paused between reads (the backoff steps, 2 s then 4 s by default)...
        expect(robotsAt[1] - robotsAt[0]).toBeGreaterThanOrEqual(1_900);
        expect(robotsAt[2] - robotsAt[1]).toBeGreaterThanOrEqual(3_900);
        // ...and no page before the file was read.
        expect(Math.min(...handledAt)).toBeGreaterThanOrEqual(robotsAt[2]);
        const [row] = throttler.stats();
        expect(row).toMatchObject({ refused: 0, backedOffMs: 0 });
        expect(row.learnedRate).toBeUndefined();
        expect(pageAt).toEqual([]);
    });
});
