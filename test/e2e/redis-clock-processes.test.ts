import { startPoliteWeb } from '@crawlee-throttling/polite-web';
import type { LogEntry, PoliteWeb } from '@crawlee-throttling/polite-web';

import { crawlerProcess } from '../helpers/crawler-process';
import type { ProcessResult } from '../helpers/crawler-process';
import { CutProxy } from '../helpers/cut-proxy';
import { REDIS_URL, deletePrefix, describeRedis, testRedis, uniquePrefix } from '../helpers/redis';

const HOST = 'shop.example';
const PROCESSES = 3;
const PAGES_EACH = 8;
/** The site takes 5 requests/s with no burst; every process keeps the same 200 ms interval. */
const DELAY_SECS = 0.2;
const INTERVAL_MS = DELAY_SECS * 1000;
/** Processes load at different speeds on a busy machine: they all start crawling this long after spawn. */
const START_IN_MS = 4_000;

/** Page requests the site saw (robots.txt left out). */
const pageEntries = (web: PoliteWeb): LogEntry[] => web.log.filter((e) => e.site === HOST && e.path !== '/robots.txt');

/**
 * Three crawler processes crawl one site, each its own third of the pages, each at the site's own
 * rate. Together they stay under it only if they keep the interval together, in Redis.
 */
describeRedis('pacing across crawler processes (RedisDomainClock)', () => {
    let web: PoliteWeb;
    let prefix: string;
    beforeEach(async () => {
        web = await startPoliteWeb({ sites: [{ host: HOST, pages: PROCESSES * PAGES_EACH, rate: 5, burst: 1 }] });
        prefix = uniquePrefix('processes');
    });
    afterEach(async () => {
        await web.close();
        const admin = testRedis();
        await deletePrefix(admin, prefix);
        await admin.quit();
    });

    const run = (redis: { url: string; onSharedClockError?: 'pause' | 'local' } | undefined) => {
        const startAt = String(Date.now() + START_IN_MS);
        return Promise.all(
            Array.from({ length: PROCESSES }, (_, p) =>
                crawlerProcess({
                    CRAWL_URLS: JSON.stringify(
                        Array.from({ length: PAGES_EACH }, (_, i) => web.url(HOST, `/page/${p * PAGES_EACH + i}`)),
                    ),
                    CRAWL_PROXY_URL: web.proxyUrl,
                    CRAWL_DELAY_SECS: String(DELAY_SECS),
                    CRAWL_START_AT: startAt,
                    CRAWLER_PROCESS: String(p + 1),
                    ...(redis
                        ? {
                              REDIS_URL: redis.url,
                              REDIS_KEY_PREFIX: prefix,
                              ...(redis.onSharedClockError ? { ON_SHARED_CLOCK_ERROR: redis.onSharedClockError } : {}),
                          }
                        : {}),
                }),
            ),
        );
    };
    const figures = (label: string, results: ProcessResult[], extra: object = {}) => {
        const site = web.score().sites.find((s) => s.host === HOST)!;
        const byProcess: Record<string, number> = {};
        for (const e of pageEntries(web)) byProcess[e.client ?? '?'] = (byProcess[e.client ?? '?'] ?? 0) + 1;
        const handled = results.map((r) => r.handled);
        const { requests, refusals, minGapMs, firstAt, lastAt } = site;
        const crawlMs = lastAt! - firstAt!;
        console.log(label, JSON.stringify({ handled, requests, refusals, minGapMs, crawlMs, byProcess, ...extra }));
        return { site, byProcess };
    };

    test('three processes sharing one Redis keep the interval together: no refusals, no gap under 95 % of it', async () => {
        const results = await run({ url: REDIS_URL });
        const { site, byProcess } = figures('REDIS CLOCK FIGURES', results);

        expect(results.map((r) => r.handled)).toEqual([PAGES_EACH, PAGES_EACH, PAGES_EACH]);
        expect(site.distinctPagesServed).toBe(PROCESSES * PAGES_EACH);
        // Every process did its own share of the site, interleaved with the others'.
        expect(Object.keys(byProcess).sort()).toEqual(['1', '2', '3']);
        expect(site.refusals).toBeLessThanOrEqual(Math.floor(site.requests * 0.01));
        expect(site.minGapMs!).toBeGreaterThanOrEqual(INTERVAL_MS * 0.95);
    }, 90_000);

    test('the same processes without sharing each keep only their own interval: the site sees them closer and refuses some', async () => {
        const results = await run(undefined);
        const { site } = figures('UNSHARED FIGURES', results);

        expect(site.distinctPagesServed).toBe(PROCESSES * PAGES_EACH);
        expect(site.refusals > 0 || site.minGapMs! < INTERVAL_MS * 0.95).toBe(true);
    }, 90_000);

    /** Cuts the line to Redis for `forMs` once `afterPages` page requests have arrived; resolves the cut's times. */
    const cutMidCrawl = async (proxy: CutProxy, afterPages: number, forMs: number) => {
        while (pageEntries(web).length < afterPages) await new Promise((resolve) => setTimeout(resolve, 10));
        proxy.cut();
        const cutAt = Date.now();
        await new Promise((resolve) => setTimeout(resolve, forMs));
        proxy.restore();
        return { cutAt, restoredAt: Date.now() };
    };

    test("with onSharedClockError 'pause', a Redis outage mid-crawl holds the dispatches, logs why, and loses no request", async () => {
        const proxy = await CutProxy.start(REDIS_URL);
        try {
            const [results, cut] = await Promise.all([
                run({ url: proxy.urlFor(REDIS_URL) }),
                cutMidCrawl(proxy, 6, 2_000),
            ]);
            // A request already on its way when the line went down may land just after the cut.
            const duringCut = pageEntries(web).filter((e) => e.time > cut.cutAt + 100 && e.time < cut.restoredAt);
            const resumedAfterMs = pageEntries(web).find((e) => e.time >= cut.restoredAt)!.time - cut.restoredAt;
            const extra = { duringCut: duringCut.length, cutForMs: cut.restoredAt - cut.cutAt, resumedAfterMs };
            const { site } = figures('REDIS OUTAGE PAUSE FIGURES', results, extra);

            expect(results.map((r) => [r.handled, r.failed])).toEqual(Array(PROCESSES).fill([PAGES_EACH, 0]));
            expect(site.distinctPagesServed).toBe(PROCESSES * PAGES_EACH);
            expect(duringCut).toEqual([]);
            expect(results.some((r) => /holding it and asking again/.test(r.stderr))).toBe(true);
            expect(site.refusals).toBe(0);
        } finally {
            await proxy.close();
        }
    }, 120_000);

    test("with onSharedClockError 'local', the crawl goes on through a Redis outage, paced by each process alone", async () => {
        const proxy = await CutProxy.start(REDIS_URL);
        try {
            const [results, cut] = await Promise.all([
                run({ url: proxy.urlFor(REDIS_URL), onSharedClockError: 'local' }),
                cutMidCrawl(proxy, 6, 2_000),
            ]);
            const duringCut = pageEntries(web).filter((e) => e.time > cut.cutAt + 100 && e.time < cut.restoredAt);
            const extra = { duringCut: duringCut.length, cutForMs: cut.restoredAt - cut.cutAt };
            const { site } = figures('REDIS OUTAGE LOCAL FIGURES', results, extra);

            expect(results.map((r) => [r.handled, r.failed])).toEqual(Array(PROCESSES).fill([PAGES_EACH, 0]));
            expect(site.distinctPagesServed).toBe(PROCESSES * PAGES_EACH);
            expect(duringCut.length).toBeGreaterThan(0);
            expect(results.some((r) => /pacing by this process alone/.test(r.stderr))).toBe(true);
        } finally {
            await proxy.close();
        }
    }, 120_000);
});
