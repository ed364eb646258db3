import type { IRequestManager } from '@crawlee/core';
import { log, LogLevel, RequestList, RequestManagerTandem } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';

import { PersistentRateLimitError, ThrottlingRequestManager } from 'crawlee-throttling';
import type { TestServer } from '../helpers/servers';
import { maxInWindow, refuseEverySecond, retriesAfterRefusals, startServer } from '../helpers/servers';
import { memoryConfig } from '../helpers/storage';

// Refusals log "Reclaiming failed request", the stall is logged by the AutoscaledPool: all expected.
const previousLevel = log.getLevel();
beforeAll(() => log.setLevel(LogLevel.OFF));
afterAll(() => log.setLevel(previousLevel));

const servers: TestServer[] = [];
afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
});

async function serve(...args: Parameters<typeof startServer>): Promise<TestServer> {
    const server = await startServer(...args);
    servers.push(server);
    return server;
}

/** Crawlee keeps the request manager in a protected field. */
const requestManagerOf = (crawler: object) => (crawler as { requestManager?: IRequestManager }).requestManager;

interface Handled {
    path: string;
    retryCount: number;
}

function handlerInto(handled: Handled[]) {
    return async ({ request }: { request: { url: string; retryCount: number } }) => {
        handled.push({ path: new URL(request.url).pathname, retryCount: request.retryCount });
    };
}

describe('RequestList + the throttler as requestQueue (the crawler builds a RequestManagerTandem)', () => {
    test('429 + Retry-After: 1 on every second request: all pages handled, each refusal waited out, no retry spent', async () => {
        const server = await serve({ host: '127.0.0.20', handler: refuseEverySecond('1') });
        const paths = Array.from({ length: 6 }, (_, i) => `/list/${i + 1}`);
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager(
            { domains: 'all', maxDomainStallSecs: 30, baseDelaySecs: 0.3 },
            config,
        );
        const requestList = await RequestList.open(
            null,
            paths.map((p) => server.url(p)),
        );
        const handled: Handled[] = [];
        const crawler = new HttpCrawler(
            {
                requestList,
                requestQueue: throttler.asRequestQueue(),
                maxRequestRetries: 1,
                maxConcurrency: 4,
                requestHandler: handlerInto(handled),
            },
            config,
        );
        throttler.attach(crawler);
        const stats = await crawler.run();

        expect(requestManagerOf(crawler)).toBeInstanceOf(RequestManagerTandem);
        expect(stats.requestsFailed).toBe(0);
        expect(handled.map((h) => h.path).sort()).toEqual([...paths].sort());
        expect(handled.map((h) => h.retryCount)).toEqual(paths.map(() => 0));
        const refusals = server.pages().filter((e) => e.status === 429);
        expect(refusals.length).toBeGreaterThanOrEqual(paths.length - 1);
        const tooEarly = retriesAfterRefusals(server.pages()).filter(
            (r) => r.retriedAt === undefined || r.retriedAt - r.refusedAt < 1000,
        );
        expect(tooEarly).toEqual([]);
    });

    test('apify/crawlee#4039: a host refusing everything is not hammered through the tandem, and the crawl ends with PersistentRateLimitError', async () => {
        const server = await serve({ host: '127.0.0.21', handler: () => ({ status: 429, body: 'slow down' }) });
        const paths = Array.from({ length: 5 }, (_, i) => `/from-a-list/${i + 1}`);
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager(
            { domains: 'all', maxDomainStallSecs: 3, baseDelaySecs: 0.5, maxDelaySecs: 10 },
            config,
        );
        const requestList = await RequestList.open(
            null,
            paths.map((p) => server.url(p)),
        );
        const handled: Handled[] = [];
        const crawler = new HttpCrawler(
            {
                requestList,
                requestQueue: throttler.asRequestQueue(),
                maxRequestRetries: 0,
                requestHandler: handlerInto(handled),
            },
            config,
        );
        throttler.attach(crawler);

        const startedAt = Date.now();
        const error = await crawler.run().then(
            () => undefined,
            (e: unknown) => e,
        );
        const elapsedMs = Date.now() - startedAt;

        expect(error).toBeInstanceOf(PersistentRateLimitError);
        expect((error as PersistentRateLimitError).domains.map((d) => d.domain)).toEqual([server.host]);
        expect(elapsedMs).toBeLessThan(3000 + 5000);
        expect(handled).toEqual([]);
        const pages = server.pages();
        // The issue saw ~150 requests per second; a throttled crawl sends a handful.
        expect(maxInWindow(pages, 1000)).toBeLessThanOrEqual(3);
        expect(pages.length).toBeLessThanOrEqual(15);
        // Nothing was lost: what the list handed over is still queued.
        expect(throttler.getPendingCount()).toBeGreaterThan(0);
    });

    test('attach() accepts a crawler whose requestManager was set to a tandem over the throttler, and the crawl is throttled', async () => {
        const server = await serve({ host: '127.0.0.22', handler: refuseEverySecond('1') });
        const paths = ['/t/1', '/t/2', '/t/3'];
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager(
            { domains: 'all', maxDomainStallSecs: 30, baseDelaySecs: 0.3 },
            config,
        );
        const requestList = await RequestList.open(
            null,
            paths.map((p) => server.url(p)),
        );
        const handled: Handled[] = [];
        const crawler = new HttpCrawler(
            { requestQueue: throttler.asRequestQueue(), maxRequestRetries: 1, requestHandler: handlerInto(handled) },
            config,
        );
        const tandem = new RequestManagerTandem(
            requestList,
            throttler as unknown as ConstructorParameters<typeof RequestManagerTandem>[1],
        );
        (crawler as unknown as { requestManager: IRequestManager }).requestManager = tandem;

        expect(() => throttler.attach(crawler)).not.toThrow();
        await crawler.run();

        expect(requestManagerOf(crawler)).toBe(tandem);
        expect(handled.map((h) => h.path).sort()).toEqual(paths);
        expect(handled.map((h) => h.retryCount)).toEqual([0, 0, 0]);
        const tooEarly = retriesAfterRefusals(server.pages()).filter(
            (r) => r.retriedAt === undefined || r.retriedAt - r.refusedAt < 1000,
        );
        expect(tooEarly).toEqual([]);
        expect(server.pages().some((e) => e.status === 429)).toBe(true);
    });
});
