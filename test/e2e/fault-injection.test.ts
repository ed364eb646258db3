import type http from 'node:http';

import { log, LogLevel } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';

import type { SharedDomainClock, ThrottlingRequestManagerOptions } from 'crawlee-throttling';
import { ThrottlingRequestManager } from 'crawlee-throttling';
import type { QueueFault, RawServer } from '../helpers/faults';
import { answerPage, faultyOpener, startRawServer, within } from '../helpers/faults';
import { memoryConfig } from '../helpers/storage';

const previousLevel = log.getLevel();
beforeAll(() => log.setLevel(LogLevel.OFF));
afterAll(() => log.setLevel(previousLevel));

const servers: RawServer[] = [];
afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
});

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

interface CrawlResult {
    handled: string[];
    /** When each handled URL was handled, in ms from the start of the crawl. */
    handledAtMs: Map<string, number>;
    failed: { url: string; error: string }[];
    durationMs: number;
    throttler: ThrottlingRequestManager;
    /** What `crawler.run()` rejected with, if it did (Crawlee ends a crawl whose error handling failed). */
    runError?: Error;
}

interface CrawlSetup {
    /** Per host: how it answers. */
    hosts: { host: string; handler: Handler }[];
    pages: number;
    throttler?: Partial<ThrottlingRequestManagerOptions>;
    /** Seed only the first URL; its handler adds the rest (so adding runs inside a handler). */
    addFromHandler?: boolean;
    /** Paths whose handler throws on the first attempt (so the crawler reclaims them). */
    failOnce?: string[];
    boundMs: number;
    /** Crawler settings a fault needs. */
    crawler?: { requestHandlerTimeoutSecs?: number; maxRequestRetries?: number };
}

/**
 * Crawls `pages` paths of each host through an attached throttler (defaults except what the fault
 * needs) and fails the test, instead of hanging, when the crawl does not end within `boundMs`.
 */
async function crawl(setup: CrawlSetup): Promise<CrawlResult> {
    const started = await Promise.all(setup.hosts.map(({ host, handler }) => startRawServer(host, handler)));
    servers.push(...started);
    const urls = started.flatMap((s) => Array.from({ length: setup.pages }, (_, i) => s.url(`/p${i + 1}`)));
    const config = memoryConfig();
    const throttler = new ThrottlingRequestManager(
        { domains: 'all', queueLayout: 'perDomain', ...setup.throttler },
        config,
    );
    const handled: string[] = [];
    const handledAtMs = new Map<string, number>();
    let startedAt = Date.now();
    const failed: { url: string; error: string }[] = [];
    const thrownOnce = new Set<string>();
    const crawler = new HttpCrawler(
        {
            requestQueue: throttler.asRequestQueue(),
            ...setup.crawler,
            requestHandler: async ({ request, addRequests }) => {
                const path = new URL(request.url).pathname;
                if (setup.failOnce?.includes(path) && !thrownOnce.has(request.url)) {
                    thrownOnce.add(request.url);
                    throw new Error(`handler fails once for ${path}`);
                }
                if (setup.addFromHandler && request.url === urls[0]) await addRequests(urls.slice(1));
                handled.push(request.url);
                handledAtMs.set(request.url, Date.now() - startedAt);
            },
            failedRequestHandler: async ({ request }, error) => {
                failed.push({ url: request.url, error: error.message });
            },
        },
        config,
    );
    throttler.attach(crawler);
    startedAt = Date.now();
    const run = crawler.run(setup.addFromHandler ? urls.slice(0, 1) : urls).then(
        () => undefined,
        (error: Error) => error,
    );
    let runError: Error | undefined;
    try {
        runError = await within(run, setup.boundMs, 'the crawl');
    } catch (error) {
        await crawler.autoscaledPool?.abort();
        throw error;
    }
    const durationMs = Date.now() - startedAt;
    if (!runError) {
        const seen = new Set([...handled, ...failed.map((f) => f.url)]);
        expect([...seen].sort()).toEqual([...urls].sort());
        expect(handled.length + failed.length).toBe(urls.length);
    }
    return { handled, handledAtMs, failed, durationMs, throttler, runError };
}

/** No domain holds a slot or has work the throttler lost track of. */
function expectNothingHeld(throttler: ThrottlingRequestManager): void {
    for (const domain of throttler.snapshot())
        expect({ domain: domain.domain, inFlight: domain.inFlight }).toEqual({
            domain: domain.domain,
            inFlight: 0,
        });
}

const report = (label: string, r: CrawlResult) =>
    console.log(
        `${label}: ${r.durationMs} ms, handled ${r.handled.length}, failed ${r.failed.length}`,
        r.failed,
        r.runError?.message,
    );

/**
 * Crawls two hosts through domain queues whose `method` throws or hangs once. Adding is faulted on
 * its second call (the first is the seed, and a failing seed only rejects `run()`), from a handler.
 */
async function queueFaultCase(method: QueueFault['method'], kind: QueueFault['kind'], hosts: [string, string]) {
    const { opener, state } = faultyOpener({ method, kind, nth: method === 'addRequest' ? 2 : 1 });
    const result = await crawl({
        hosts: hosts.map((host) => ({ host, handler: answerPage })),
        pages: 4,
        throttler: { requestManagerOpener: opener },
        addFromHandler: method === 'addRequest',
        failOnce: method === 'reclaimRequest' ? ['/p2'] : undefined,
        boundMs: 40_000,
        // A hung add inside the handler ends with the handler's timeout (60 s by default).
        crawler: method === 'addRequest' && kind === 'hang' ? { requestHandlerTimeoutSecs: 5 } : undefined,
    });
    report(`${kind} ${method}`, result);
    expect(state.fired).toBe(1);
    // A crawl Crawlee ended abandons what its pool had fetched; only a finished crawl must hold nothing.
    if (!result.runError) expectNothingHeld(result.throttler);
    return result;
}

describe('fault injection: a domain queue whose storage call throws once', () => {
    test.each<QueueFault['method']>(['fetchNextRequest', 'markRequestHandled', 'addRequest'])(
        '%s throws once: every page is handled, the crawl ends',
        async (method) => {
            const result = await queueFaultCase(method, 'throw', ['127.0.0.41', '127.0.0.42']);
            expect(result.runError).toBeUndefined();
            expect(result.failed).toEqual([]);
        },
    );

    // Crawlee calls reclaimRequest from its error handler without a retry, and a failing error handler
    // ends the crawl ("crawling will be terminated"), whatever the storage: the crawl ends with that error.
    test('reclaimRequest throws once: the crawl ends with the storage error', async () => {
        const result = await queueFaultCase('reclaimRequest', 'throw', ['127.0.0.41', '127.0.0.42']);
        expect(result.runError?.message).toBe('injected storage fault in reclaimRequest');
    });
});

describe('fault injection: a domain queue whose storage call hangs once', () => {
    // Crawlee's own timeout on storage calls (internalTimeoutMillis, at least 300 s by default); shortened
    // so a hang costs 3 s here.
    const previous = process.env.CRAWLEE_INTERNAL_TIMEOUT;
    beforeAll(() => {
        process.env.CRAWLEE_INTERNAL_TIMEOUT = '3000';
    });
    afterAll(() => {
        if (previous === undefined) delete process.env.CRAWLEE_INTERNAL_TIMEOUT;
        else process.env.CRAWLEE_INTERNAL_TIMEOUT = previous;
    });

    test.each<QueueFault['method']>(['fetchNextRequest', 'markRequestHandled', 'addRequest'])(
        '%s hangs once: every page is handled, the crawl ends',
        async (method) => {
            const result = await queueFaultCase(method, 'hang', ['127.0.0.43', '127.0.0.44']);
            expect(result.runError).toBeUndefined();
            expect(result.failed).toEqual([]);
        },
    );

    test("reclaimRequest hangs once: the crawl ends with Crawlee's timeout error", async () => {
        const result = await queueFaultCase('reclaimRequest', 'hang', ['127.0.0.43', '127.0.0.44']);
        expect(result.runError?.message).toMatch(/timed out after 3 seconds/);
    });
});

/** A shared clock that grants everything, except that one method throws on its first call. */
function throwingClock(method: keyof SharedDomainClock): SharedDomainClock & { fired: number } {
    const clock = {
        fired: 0,
        reserve: () => {
            if (method === 'reserve' && clock.fired++ === 0) throw new Error('injected shared clock fault');
            return { granted: true as const };
        },
        extend: () => {
            if (method === 'extend' && clock.fired++ === 0) throw new Error('injected shared clock fault');
        },
        settle: () => {
            if (method === 'settle' && clock.fired++ === 0) throw new Error('injected shared clock fault');
        },
    };
    return clock;
}

describe('fault injection: a shared clock that throws', () => {
    test.each<keyof SharedDomainClock>(['reserve', 'extend', 'settle'])(
        '%s throws once: every page is handled, the crawl ends',
        async (method) => {
            const sharedClock = throwingClock(method);
            // extend is called on a clock change (a refusal): one 429 makes it run.
            let refused = false;
            const refuseOnce: Handler = (req, res) => {
                if (method === 'extend' && req.url === '/p2' && !refused) {
                    refused = true;
                    res.writeHead(429, { 'retry-after': '1' });
                    res.end('slow down');
                    return;
                }
                answerPage(req, res);
            };
            const result = await crawl({
                hosts: [
                    { host: '127.0.0.45', handler: refuseOnce },
                    { host: '127.0.0.46', handler: answerPage },
                ],
                pages: 4,
                throttler: { sharedClock },
                boundMs: 30_000,
            });
            report(`shared clock ${method}`, result);
            expect(sharedClock.fired).toBeGreaterThanOrEqual(1);
        },
    );
});

describe('fault injection: robots.txt and connections', () => {
    test('a robots.txt that never answers holds only its host for the robots timeout; then (maxRobotsRetries: 0) its pages fail unsent', async () => {
        const pagesSent: string[] = [];
        const hangRobots: Handler = (req, res) => {
            if (req.url === '/robots.txt') return;
            pagesSent.push(req.url ?? '');
            answerPage(req, res);
        };
        const result = await crawl({
            hosts: [
                { host: '127.0.0.47', handler: hangRobots },
                { host: '127.0.0.48', handler: answerPage },
            ],
            pages: 4,
            boundMs: 30_000,
            throttler: { maxRobotsRetries: 0 },
        });
        report('robots hang', result);
        // RFC 9309: an unreachable robots.txt means complete disallow, not "no rules".
        expect(pagesSent).toEqual([]);
        expect(result.failed).toHaveLength(4);
        for (const f of result.failed)
            expect(f.error).toMatch(/robots\.txt of http:\/\/127\.0\.0\.47:\d+ did not answer/);
        // Held for the robots.txt time limit (10 s), and only that host.
        expect(result.durationMs).toBeGreaterThanOrEqual(9_500);
        const at = (host: string) => [...result.handledAtMs].filter(([url]) => url.includes(host)).map(([, ms]) => ms);
        expect(Math.max(...at('127.0.0.48'))).toBeLessThan(5_000);
    });

    test('a robots.txt that never answers, with robotsUnreachableDisallowSecs: 0: the pages go after the robots timeout', async () => {
        const hangRobots: Handler = (req, res) => {
            if (req.url === '/robots.txt') return;
            answerPage(req, res);
        };
        const result = await crawl({
            hosts: [
                { host: '127.0.0.53', handler: hangRobots },
                { host: '127.0.0.54', handler: answerPage },
            ],
            pages: 4,
            boundMs: 30_000,
            throttler: { maxRobotsRetries: 0, robotsUnreachableDisallowSecs: 0 },
        });
        report('robots hang, no disallow', result);
        expect(result.failed).toEqual([]);
        const at = (host: string) => [...result.handledAtMs].filter(([url]) => url.includes(host)).map(([, ms]) => ms);
        expect(Math.min(...at('127.0.0.53'))).toBeGreaterThanOrEqual(9_500);
        expect(Math.max(...at('127.0.0.54'))).toBeLessThan(5_000);
    });

    test('a server that resets the connection of some requests: every page ends handled', async () => {
        const resetSome: Handler = (req, res) => {
            if (req.url === '/p2' || req.url === '/p3') {
                const seen = (resetSome as unknown as { seen?: Set<string> }).seen ?? new Set<string>();
                (resetSome as unknown as { seen?: Set<string> }).seen = seen;
                if (!seen.has(req.url)) {
                    seen.add(req.url);
                    req.socket.destroy();
                    return;
                }
            }
            answerPage(req, res);
        };
        const result = await crawl({
            hosts: [
                { host: '127.0.0.49', handler: resetSome },
                { host: '127.0.0.50', handler: answerPage },
            ],
            pages: 4,
            boundMs: 40_000,
        });
        report('reset some', result);
        expect(result.failed).toEqual([]);
    });

    // Network errors back the host off (2 s, doubling, capped at 60 s) and spend normal retries. With
    // Crawlee's default 3 retries, 4 pages take 16 attempts, the last 11 at the 60 s cap: measured 663 s
    // to end. Without retries it is 4 attempts, 2 + 4 + 8 s apart; the point is that the
    // crawl ends, the failures name the network error and the other host is not held back.
    test('a host that resets every connection: its pages fail, the other host is crawled, the crawl ends', async () => {
        const resetAll: Handler = (req, res) => {
            if (req.url === '/robots.txt') return answerPage(req, res);
            req.socket.destroy();
        };
        const result = await crawl({
            hosts: [
                { host: '127.0.0.51', handler: resetAll },
                { host: '127.0.0.52', handler: answerPage },
            ],
            pages: 4,
            crawler: { maxRequestRetries: 0 },
            boundMs: 40_000,
        });
        report('reset all', result);
        expect(result.failed.map((f) => new URL(f.url).host.split(':')[0])).toEqual(Array(4).fill('127.0.0.51'));
        for (const { error } of result.failed) expect(error).toMatch(/ECONNRESET|socket hang up/);
        expect(Math.max(...result.handledAtMs.values())).toBeLessThan(5_000);
    }, 60_000);
});
