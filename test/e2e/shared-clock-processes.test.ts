import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { startPoliteWeb } from '@crawlee-throttling/polite-web';
import type { PoliteWeb } from '@crawlee-throttling/polite-web';

import { crawlerProcess as runFixture } from '../helpers/crawler-process';

const FIXTURE = join(__dirname, '..', 'fixtures', 'shared-clock-crawler.js');
const HOST = 'shop.example';
const DELAY_SECS = 0.3;

const crawlerProcess = (env: Record<string, string>) => runFixture(env, FIXTURE);

/**
 * Two crawler processes crawl one site, each its own half of the pages, each with delaySecs 0.3.
 * The site takes 5 requests/s with no burst (one request per 200 ms): together the two processes
 * stay under it only if they keep the interval together (3.3/s), not each on its own (6.7/s).
 */
describe('pacing across crawler processes (FileDomainClock)', () => {
    let web: PoliteWeb;
    let dir: string;
    beforeEach(async () => {
        web = await startPoliteWeb({ sites: [{ host: HOST, pages: 16, rate: 5, burst: 1 }] });
        dir = mkdtempSync(join(tmpdir(), 'shared-clock-e2e-'));
    });
    afterEach(async () => {
        await web.close();
        rmSync(dir, { recursive: true, force: true });
    });

    const halves = () =>
        [0, 1].map((half) => Array.from({ length: 8 }, (_, i) => web.url(HOST, `/page/${half * 8 + i}`)));
    const run = (shared: boolean) => {
        // Both start crawling at one moment, however long each process takes to load.
        const startAt = String(Date.now() + 3_000);
        return Promise.all(
            halves().map((urls) =>
                crawlerProcess({
                    CRAWL_URLS: JSON.stringify(urls),
                    CRAWL_PROXY_URL: web.proxyUrl,
                    CRAWL_DELAY_SECS: String(DELAY_SECS),
                    CRAWL_START_AT: startAt,
                    ...(shared ? { SHARED_CLOCK_DIR: dir } : {}),
                }),
            ),
        );
    };

    test('two processes sharing a clock directory keep the interval together: no refusals, no gap under the interval', async () => {
        const results = await run(true);
        const site = web.score().sites.find((s) => s.host === HOST)!;
        console.log(
            'SHARED CLOCK FIGURES',
            JSON.stringify({ results, requests: site.requests, refusals: site.refusals, minGapMs: site.minGapMs }),
        );

        expect(results.map((r) => r.handled)).toEqual([8, 8]);
        expect(site.distinctPagesServed).toBe(16);
        expect(site.refusals).toBe(0);
        // One request at a time per domain: a dispatch leases the shared clock until its response, and
        // the next request of either process leaves an interval after that response, so even arrivals
        // are spaced by the full interval (5 ms for clock rounding between processes).
        expect(site.minGapMs!).toBeGreaterThanOrEqual(DELAY_SECS * 1000 - 5);
    });

    test('the same two processes without a shared clock each keep only their own interval, and the site refuses some', async () => {
        const results = await run(false);
        const site = web.score().sites.find((s) => s.host === HOST)!;
        console.log(
            'UNSHARED FIGURES',
            JSON.stringify({ results, requests: site.requests, refusals: site.refusals, minGapMs: site.minGapMs }),
        );

        expect(site.distinctPagesServed).toBe(16);
        expect(site.refusals).toBeGreaterThan(0);
    });
});
