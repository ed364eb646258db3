import { log, LogLevel } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';

import { PersistentRateLimitError, ThrottlingRequestManager } from 'crawlee-throttling';
import type { TestServer } from '../helpers/servers';
import { startServer, watchSettlement } from '../helpers/servers';
import { memoryConfig } from '../helpers/storage';

const previousLevel = log.getLevel();
// The expected PersistentRateLimitError is also logged by the AutoscaledPool (at ERROR): keep it quiet.
beforeAll(() => log.setLevel(LogLevel.OFF));
afterAll(() => log.setLevel(previousLevel));

const STALL_SECS = 2;
const PATHS = ['/1', '/2', '/3', '/4'];

/** A host that refuses everything, without Retry-After. */
let server: TestServer;
beforeAll(async () => {
    server = await startServer({ host: '127.0.0.10', handler: () => ({ status: 429, body: 'slow down' }) });
});
afterAll(async () => server?.close());

function setup(keepAlive: boolean) {
    const config = memoryConfig();
    const throttler = new ThrottlingRequestManager(
        { domains: 'all', maxDomainStallSecs: STALL_SECS, baseDelaySecs: 0.25, maxDelaySecs: 10 },
        config,
    );
    let handled = 0;
    const crawler = new HttpCrawler(
        {
            requestQueue: throttler.asRequestQueue(),
            keepAlive,
            maxRequestRetries: 1,
            requestHandler: async () => {
                handled += 1;
            },
        },
        config,
    );
    throttler.attach(crawler);
    return { throttler, crawler, handled: () => handled };
}

describe('a host that answers 429 to everything', () => {
    test('run() rejects with PersistentRateLimitError once the stall window passes, leaving the requests queued', async () => {
        const { throttler, crawler, handled } = setup(false);
        const before = server.pages().length;
        const startedAt = Date.now();
        const error = await crawler.run(PATHS.map((p) => server.url(p))).then(
            () => undefined,
            (e: unknown) => e,
        );
        const elapsedMs = Date.now() - startedAt;

        expect(error).toBeInstanceOf(PersistentRateLimitError);
        const stall = error as PersistentRateLimitError;
        expect(stall.domains.map((d) => d.domain)).toEqual([server.host]);
        expect(stall.domains[0].stalledForMs).toBeGreaterThan(STALL_SECS * 1000);
        expect(stall.domains[0].queued).toBeGreaterThan(0);
        expect(stall.message).toContain(server.host);
        // Not before the stall window, and not long after it.
        expect(elapsedMs).toBeGreaterThanOrEqual(STALL_SECS * 1000);
        expect(elapsedMs).toBeLessThan(STALL_SECS * 1000 + 4000);

        // Nothing was handled, nothing lost: the requests stay queued for a later resume.
        expect(handled()).toBe(0);
        expect(throttler.getPendingCount()).toBeGreaterThan(0);
        expect(throttler.getPendingCount()).toBe(PATHS.length);
        const snap = throttler.snapshot().find((d) => d.domain === server.host);
        expect(snap).toMatchObject({ handled: 0, queued: PATHS.length });
        // The host was asked again after the backoffs, not just once.
        expect(server.pages().length - before).toBeGreaterThanOrEqual(2);
    });

    test('with keepAlive the crawler does not end on a stall, and stops cleanly when aborted', async () => {
        const { throttler, crawler, handled } = setup(true);
        const run = watchSettlement(crawler.run(PATHS.map((p) => server.url(p))));
        try {
            // Beyond the stall window: a crawler that is kept alive must not be ended by the throttler.
            await new Promise((resolve) => setTimeout(resolve, STALL_SECS * 1000 + 2000));
            expect(run.settled).toBe(false);
            const snap = throttler.snapshot().find((d) => d.domain === server.host);
            expect(snap?.stalledForMs).toBeGreaterThan(STALL_SECS * 1000);
            expect(handled()).toBe(0);
        } finally {
            await crawler.autoscaledPool?.abort();
        }
        const outcome = await run.outcome;
        expect(outcome.error).toBeUndefined();
        expect(run.settled).toBe(true);
    });
});
