import { log, LogLevel } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';

import { ThrottlingOptionsError, ThrottlingRequestManager } from 'crawlee-throttling';
import type { TestServer } from '../helpers/servers';
import { refuseFirstPerPath, startServer } from '../helpers/servers';
import { memoryConfig } from '../helpers/storage';

// Spent retries log "Reclaiming failed request": expected here.
const previousLevel = log.getLevel();
beforeAll(() => log.setLevel(LogLevel.ERROR));
afterAll(() => log.setLevel(previousLevel));

type LogMethod = 'warning' | 'warningOnce';
const logPrototype = Object.getPrototypeOf(log) as Record<LogMethod, (message: string) => void>;

/**
 * Runs `fn` while recording (and silencing) every `warning`/`warningOnce` call of any Crawlee logger
 * (the manager logs through `log.child(...)`, which shares the prototype). `printed` holds the
 * warnings that would have been printed: `warning()` calls (warningOnce prints through warning()).
 */
async function recordingWarnings<T>(fn: () => Promise<T>): Promise<{ result: T; printed: string[]; once: string[] }> {
    const printed: string[] = [];
    const once: string[] = [];
    const originalOnce = logPrototype.warningOnce;
    const warning = jest.spyOn(logPrototype, 'warning').mockImplementation((message: string) => {
        printed.push(String(message));
    });
    const warningOnce = jest.spyOn(logPrototype, 'warningOnce').mockImplementation(function (
        this: unknown,
        message: string,
    ) {
        once.push(String(message));
        // Keep the real once-per-logger bookkeeping; it prints through the mocked warning().
        originalOnce.call(this, message);
    });
    try {
        return { result: await fn(), printed, once };
    } finally {
        warning.mockRestore();
        warningOnce.mockRestore();
    }
}

/** Crawlee keeps the crawler's own delay in a protected field. */
const sameDomainDelayMillisOf = (crawler: object) =>
    (crawler as { sameDomainDelayMillis?: number }).sameDomainDelayMillis;

const servers: TestServer[] = [];
afterAll(async () => {
    await Promise.all(servers.map((s) => s.close()));
});

describe("the crawler's own sameDomainDelaySecs", () => {
    test("default fold: attach() raises the floor to it and switches Crawlee's delay off", () => {
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager({ domains: 'all' }, config);
        const crawler = new HttpCrawler(
            { requestQueue: throttler.asRequestQueue(), sameDomainDelaySecs: 1, requestHandler: async () => undefined },
            config,
        );
        expect(sameDomainDelayMillisOf(crawler)).toBe(1000);
        expect(throttler.floorIntervalMs).toBe(0);

        throttler.attach(crawler);

        expect(throttler.floorIntervalMs).toBe(1000);
        expect(sameDomainDelayMillisOf(crawler)).toBe(0);
    });

    test("sameDomainDelay: 'refuse': attach() throws and leaves both settings alone", () => {
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager({ domains: 'all', sameDomainDelay: 'refuse' }, config);
        const crawler = new HttpCrawler(
            { requestQueue: throttler.asRequestQueue(), sameDomainDelaySecs: 1, requestHandler: async () => undefined },
            config,
        );

        const hooks = (crawler as unknown as { postNavigationHooks: unknown[] }).postNavigationHooks;
        const hookCount = hooks.length;

        expect(() => throttler.attach(crawler)).toThrow(ThrottlingOptionsError);
        expect(() => throttler.attach(crawler)).toThrow(/sameDomainDelaySecs/);
        // A refused attach installs nothing.
        expect(sameDomainDelayMillisOf(crawler)).toBe(1000);
        expect(throttler.floorIntervalMs).toBe(0);
        expect(hooks).toHaveLength(hookCount);
    });
});

describe('a 429 from a host the throttler does not throttle', () => {
    test('is warned about once and handled by the crawler as usual (the retry is spent)', async () => {
        const server = await startServer({
            host: '127.0.0.1',
            handler: refuseFirstPerPath(() => ({ 'retry-after': '1' })),
        });
        servers.push(server);
        const paths = ['/u/1', '/u/2', '/u/3'];
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager({ domains: ['127.0.0.9'], maxDomainStallSecs: 30 }, config);
        const handled: { path: string; retryCount: number }[] = [];
        const failed: string[] = [];
        const crawler = new HttpCrawler(
            {
                requestQueue: throttler.asRequestQueue(),
                maxRequestRetries: 1,
                // 429 is a blocked status: Crawlee retires the session; a pool of several keeps the crawl going.
                requestHandler: async ({ request }) => {
                    handled.push({ path: new URL(request.url).pathname, retryCount: request.retryCount });
                },
                failedRequestHandler: async ({ request }) => {
                    failed.push(request.url);
                },
            },
            config,
        );
        throttler.attach(crawler);

        const { printed } = await recordingWarnings(() => crawler.run(paths.map((p) => server.url(p))));

        const notThrottled = printed.filter((m) => m.includes('127.0.0.1') && m.includes('does not throttle'));
        expect(notThrottled).toHaveLength(1);
        expect(notThrottled[0]).toContain('429');
        // Crawlee handled it as usual: every page retried once, the retry spent.
        expect(failed).toEqual([]);
        expect(handled.map((h) => h.path).sort()).toEqual(paths);
        expect(handled.map((h) => h.retryCount)).toEqual([1, 1, 1]);
        expect(server.pages().filter((e) => e.status === 429)).toHaveLength(3);
        // The throttler did not back the host off: no refusal recorded anywhere, nothing backing off.
        expect(throttler.isThrottled('127.0.0.1')).toBe(false);
        expect(throttler.snapshot().filter((d) => d.refusals > 0 || d.backingOff || d.backoffUntil > 0)).toEqual([]);
    });
});

describe('a manager serving a crawler without attach()', () => {
    test('warns once that it was never attached', async () => {
        const server = await startServer({ host: '127.0.0.31' });
        servers.push(server);
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager({ domains: 'all', maxDomainStallSecs: 30 }, config);
        let handled = 0;
        const crawler = new HttpCrawler(
            {
                requestQueue: throttler.asRequestQueue(),
                requestHandler: async () => {
                    handled += 1;
                },
            },
            config,
        );

        const { printed, once } = await recordingWarnings(() =>
            crawler.run(['/n/1', '/n/2', '/n/3'].map((p) => server.url(p))),
        );

        expect(handled).toBe(3);
        const neverAttached = printed.filter((m) => m.includes('never attached'));
        expect(neverAttached).toHaveLength(1);
        // It was asked for on every fetch, printed once.
        expect(once.filter((m) => m.includes('never attached')).length).toBeGreaterThanOrEqual(1);
    });

    test('an attached manager does not warn', async () => {
        const server = await startServer({ host: '127.0.0.32' });
        servers.push(server);
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager({ domains: 'all', maxDomainStallSecs: 30 }, config);
        const crawler = new HttpCrawler(
            { requestQueue: throttler.asRequestQueue(), requestHandler: async () => undefined },
            config,
        );
        throttler.attach(crawler);

        const { printed } = await recordingWarnings(() => crawler.run([server.url('/a/1')]));

        expect(printed.filter((m) => m.includes('never attached'))).toEqual([]);
    });
});
