import type { OutgoingHttpHeaders } from 'node:http';

import { log, LogLevel } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';

import { ThrottlingRequestManager } from 'crawlee-throttling';
import type { TestServer } from '../helpers/servers';
import { refuseFirstPerPath, retriesAfterRefusals, startServer } from '../helpers/servers';
import { memoryConfig } from '../helpers/storage';

// Each refusal makes Crawlee log "Reclaiming failed request": expected here.
const previousLevel = log.getLevel();
beforeAll(() => log.setLevel(LogLevel.ERROR));
afterAll(() => log.setLevel(previousLevel));

const BASE_DELAY_MS = 400;
// One path per host: its retry is the host's next request, so nothing else can stand in for the wait.
const PATHS = ['/only'];

const servers: TestServer[] = [];
afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
});

interface Handled {
    path: string;
    retryCount: number;
}

/** Crawls PATHS on a host refusing the first request of each path with `headers(path)`. */
async function crawlRefusedOnce(
    host: string,
    headers: (path: string) => OutgoingHttpHeaders,
): Promise<{ server: TestServer; handled: Handled[] }> {
    const server = await startServer({ host, handler: refuseFirstPerPath(headers) });
    servers.push(server);
    const config = memoryConfig();
    const throttler = new ThrottlingRequestManager(
        { domains: 'all', baseDelaySecs: BASE_DELAY_MS / 1000, maxDelaySecs: 10, maxDomainStallSecs: 30 },
        config,
    );
    const handled: Handled[] = [];
    const crawler = new HttpCrawler(
        {
            requestQueue: throttler.asRequestQueue(),
            maxRequestRetries: 1,
            maxConcurrency: 3,
            requestHandler: async ({ request }) => {
                handled.push({ path: new URL(request.url).pathname, retryCount: request.retryCount });
            },
        },
        config,
    );
    throttler.attach(crawler);
    await crawler.run(PATHS.map((p) => server.url(p)));
    return { server, handled };
}

/** Every path handled once, no retry spent, every path refused exactly once and retried. */
function expectRefusedOnceAndHandledForFree(server: TestServer, handled: Handled[]) {
    expect(handled.map((h) => h.path).sort()).toEqual(PATHS);
    expect(handled.map((h) => h.retryCount)).toEqual(PATHS.map(() => 0));
    const retries = retriesAfterRefusals(server.pages());
    expect(retries.map((r) => r.path).sort()).toEqual(PATHS);
    expect(retries.filter((r) => r.retriedAt === undefined)).toEqual([]);
    return retries.map((r) => ({
        path: r.path,
        refusedAt: r.refusedAt,
        retriedAt: r.retriedAt!,
        waitedMs: r.retriedAt! - r.refusedAt,
    }));
}

describe('Retry-After forms over real HTTP (HttpCrawler)', () => {
    test('an HTTP-date about 2 s ahead: each retry waits until that date', async () => {
        const sentDates = new Map<string, number>();
        const { server, handled } = await crawlRefusedOnce('127.0.0.5', (path) => {
            // A whole second at least 2 s ahead: HTTP-dates have 1 s resolution, so this date is exact.
            const dateMs = Math.ceil((Date.now() + 2000) / 1000) * 1000;
            sentDates.set(path, dateMs);
            return { 'retry-after': new Date(dateMs).toUTCString() };
        });
        const retries = expectRefusedOnceAndHandledForFree(server, handled);

        // Not before the date (an exponential fallback would have retried after 0.4 s).
        const early = retries.filter((r) => r.retriedAt < sentDates.get(r.path)! || r.waitedMs < 2000);
        expect(early).toEqual([]);
        expect(retries).toHaveLength(1);
    });

    test.each([
        ['absent', '127.0.0.6', undefined],
        ['0', '127.0.0.7', '0'],
        ['garbage (soon)', '127.0.0.8', 'soon'],
    ])(
        'Retry-After %s: exponential backoff from baseDelaySecs, never an immediate retry',
        async (_label, host, value) => {
            const { server, handled } = await crawlRefusedOnce(host, () =>
                value === undefined ? {} : { 'retry-after': value },
            );
            const retries = expectRefusedOnceAndHandledForFree(server, handled);

            const early = retries.filter((r) => r.waitedMs < BASE_DELAY_MS);
            expect(early).toEqual([]);
        },
    );
});
