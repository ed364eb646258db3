import { existsSync } from 'node:fs';

import { log, LogLevel } from '@crawlee/core';
import { PlaywrightCrawler } from '@crawlee/playwright';
import { PuppeteerCrawler } from '@crawlee/puppeteer';

import type { PageHandler, TestServer } from '../helpers/servers';
import { retriesAfterRefusals, startServer } from '../helpers/servers';
import type { CrawlerFactory } from '../helpers/throttled-crawl';
import { crawlThroughThrottler } from '../helpers/throttled-crawl';

const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
    '--no-sandbox',
    '--disable-gpu',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
];

// Chosen at load time: these tests need Debian's chromium.
const describeWithChromium = existsSync(CHROMIUM) ? describe : describe.skip;

const previousLevel = log.getLevel();
beforeAll(() => log.setLevel(LogLevel.ERROR));
afterAll(() => log.setLevel(previousLevel));

/** 429 + Retry-After: 1 to every second request for a /page/ path; anything else (favicon) is a 404 and not counted. */
function refuseEverySecondPage(): PageHandler {
    let n = 0;
    return ({ path }) => {
        if (!path.startsWith('/page/')) return { status: 404 };
        n += 1;
        return n % 2 === 0 ? { status: 429, headers: { 'retry-after': '1' }, body: 'slow down' } : {};
    };
}

const browsers: [string, CrawlerFactory, string][] = [
    [
        'PlaywrightCrawler',
        (options, config) =>
            new PlaywrightCrawler(
                {
                    ...options,
                    headless: true,
                    browserPoolOptions: { useFingerprints: false },
                    launchContext: {
                        // eslint-disable-next-line @typescript-eslint/no-require-imports
                        launcher: require('playwright-core').chromium,
                        launchOptions: { executablePath: CHROMIUM, args: CHROMIUM_ARGS },
                    },
                },
                config,
            ),
        '127.0.0.40',
    ],
    [
        'PuppeteerCrawler',
        (options, config) =>
            new PuppeteerCrawler(
                {
                    ...options,
                    headless: true,
                    browserPoolOptions: { useFingerprints: false },
                    launchContext: {
                        // eslint-disable-next-line @typescript-eslint/no-require-imports
                        launcher: require('puppeteer-core'),
                        launchOptions: { executablePath: CHROMIUM, args: CHROMIUM_ARGS },
                    },
                },
                config,
            ),
        '127.0.0.41',
    ],
];

const PAGES = 6;

describeWithChromium.each(browsers)(
    '%s against a host answering 429 + Retry-After: 1 to every second page request',
    (name, makeCrawler, host) => {
        let server: TestServer;
        beforeAll(async () => {
            server = await startServer({ host, handler: refuseEverySecondPage() });
        });
        afterAll(async () => server?.close());

        // A site refusing every second request looks like a one-token bucket to the learner, which slows
        // its pace after each refusal: the six pages take 60-90 s on a 2-core machine.
        test('handles every page, waits out each Retry-After and spends no retry', async () => {
            const paths = Array.from({ length: PAGES }, (_, i) => `/page/${i + 1}`);
            const { handled, failed } = await crawlThroughThrottler(
                makeCrawler,
                paths.map((p) => server.url(p)),
                { maxConcurrency: 2 },
            );

            const pages = server.pages().filter((e) => e.path.startsWith('/page/'));
            const refusals = pages.filter((e) => e.status === 429);
            console.log(
                `FIGURES ${JSON.stringify({ crawler: name, pages: PAGES, requestsSent: pages.length, received429: refusals.length, handled: handled.length, failed: failed.length, sessionsRetired: new Set(handled.map((h) => h.sessionId)).size - 1 })}`,
            );

            expect(failed).toEqual([]);
            expect(handled.map((h) => h.path).sort()).toEqual([...paths].sort());
            expect(refusals.length).toBeGreaterThanOrEqual(PAGES - 1);
            const tooEarly = retriesAfterRefusals(pages).filter(
                (r) => r.retriedAt === undefined || r.retriedAt - r.refusedAt < 1000,
            );
            expect(tooEarly).toEqual([]);
            expect(handled.map((h) => h.retryCount)).toEqual(handled.map(() => 0));
            expect(new Set(handled.map((h) => h.sessionId)).size).toBe(1);
            expect(handled.map((h) => h.errorScore)).toEqual(handled.map(() => 0));
        }, 180_000);
    },
);
