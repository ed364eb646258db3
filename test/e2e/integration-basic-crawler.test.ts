import { BasicCrawler } from '@crawlee/basic';
import { log, LogLevel } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';

import { ThrottlingOptionsError, ThrottlingRequestManager } from 'crawlee-throttling';
import type { TestServer } from '../helpers/servers';
import { refuseEverySecond, retriesAfterRefusals, startServer } from '../helpers/servers';
import { memoryConfig } from '../helpers/storage';

const previousLevel = log.getLevel();
beforeAll(() => log.setLevel(LogLevel.ERROR));
afterAll(() => log.setLevel(previousLevel));

let server: TestServer;
beforeAll(async () => {
    server = await startServer({ host: '127.0.0.30', handler: refuseEverySecond('1') });
});
afterAll(async () => server?.close());

describe('BasicCrawler reporting responses itself', () => {
    test('handleResponse() in the request handler: every page done, each 429 waited out, retryCount 0', async () => {
        const paths = Array.from({ length: 6 }, (_, i) => `/basic/${i + 1}`);
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager(
            { domains: 'all', maxDomainStallSecs: 30, baseDelaySecs: 0.3 },
            config,
        );
        const done: { path: string; retryCount: number; status: number }[] = [];
        // Errors other than a refusal (a connection reset on a loaded machine, say) cost a retry, as
        // they should: the rule under test is that the 429s alone cost none.
        const otherErrors: { path: string; error: string }[] = [];
        const crawler = new BasicCrawler(
            {
                requestQueue: throttler.asRequestQueue(),
                maxRequestRetries: 1,
                maxConcurrency: 4,
                errorHandler: async ({ request }, error) => {
                    if (error.name !== 'RequestThrottledError')
                        otherErrors.push({ path: new URL(request.url).pathname, error: String(error) });
                },
                requestHandler: async (context) => {
                    const res = await context.sendRequest();
                    await throttler.handleResponse(context, res);
                    done.push({
                        path: new URL(context.request.url).pathname,
                        retryCount: context.request.retryCount,
                        status: res.statusCode,
                    });
                },
            },
            config,
        );
        throttler.attach(crawler);
        const stats = await crawler.run(paths.map((p) => server.url(p)));

        expect(stats.requestsFailed).toBe(0);
        expect(done.map((d) => d.path).sort()).toEqual([...paths].sort());
        expect(done.map((d) => d.status)).toEqual(paths.map(() => 200));
        const retriesSpent = (path: string) => otherErrors.filter((e) => e.path === path).length;
        expect({ retryCounts: done.map((d) => d.retryCount), otherErrors }).toEqual({
            retryCounts: done.map((d) => retriesSpent(d.path)),
            otherErrors,
        });
        expect(otherErrors.length).toBeLessThanOrEqual(1);
        const pages = server.pages().filter((e) => e.path.startsWith('/basic/'));
        expect(pages.filter((e) => e.status === 429).length).toBeGreaterThanOrEqual(paths.length - 1);
        const tooEarly = retriesAfterRefusals(pages).filter(
            (r) => r.retriedAt === undefined || r.retriedAt - r.refusedAt < 1000,
        );
        expect(tooEarly).toEqual([]);
    });
});

describe('attach() on a crawler that does not use the throttler', () => {
    test('throws, naming requestQueue', () => {
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager({ domains: 'all' }, config);
        const crawler = new HttpCrawler({ requestHandler: async () => undefined }, config);

        expect(() => throttler.attach(crawler)).toThrow(ThrottlingOptionsError);
        expect(() => throttler.attach(crawler)).toThrow(/requestQueue/);
    });

    test('throws for a crawler fed by another manager', () => {
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager({ domains: 'all' }, config);
        const other = new ThrottlingRequestManager({ domains: 'all' }, config);
        const crawler = new BasicCrawler(
            { requestQueue: other.asRequestQueue(), requestHandler: async () => undefined },
            config,
        );

        expect(() => throttler.attach(crawler)).toThrow(/requestQueue/);
        expect(() => other.attach(crawler)).not.toThrow();
    });
});
