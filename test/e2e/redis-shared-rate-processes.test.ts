import { startPoliteWeb } from '@crawlee-throttling/polite-web';
import type { LogEntry, PoliteWeb } from '@crawlee-throttling/polite-web';

import { crawlerProcess } from '../helpers/crawler-process';
import { REDIS_URL, deletePrefix, describeRedis, testRedis, uniquePrefix } from '../helpers/redis';

const HOST = 'shop.example';
const PROCESSES = 3;
const PAGES_EACH = 50;
/** The site's limit, which no process is told: adaptive pacing (the default) must learn it. */
const SITE_RATE = 5;
/** Processes load at different speeds on a busy machine: they all start crawling this long after spawn. */
const START_IN_MS = 4_000;

/** Page requests the site saw (robots.txt left out). */
const pageEntries = (web: PoliteWeb): LogEntry[] => web.log.filter((e) => e.site === HOST && e.path !== '/robots.txt');

/**
 * Accepted arrivals per second over the second half of the crawl (the pace learned, past the search),
 * and the share of all arrivals refused.
 */
function figures(web: PoliteWeb) {
    const entries = pageEntries(web).sort((a, b) => a.time - b.time);
    const refused = entries.filter((e) => e.status === 429).length;
    const late = entries.slice(Math.floor(entries.length / 2));
    const accepted = late.filter((e) => e.status === 200).length;
    const steadyPace = (accepted * 1000) / (late[late.length - 1].time - late[0].time);
    const crawlMs = entries[entries.length - 1].time - entries[0].time;
    return { requests: entries.length, refused, refusedShare: refused / entries.length, steadyPace, crawlMs };
}

/**
 * Three crawler processes share one Redis and crawl one site whose limit they are not told, with the
 * throttler's defaults (adaptive pacing). With the learned rate shared (`tally`), they learn the site's
 * rate together; without it each learns from its own answers, about a third of the site's.
 */
describeRedis('a learned rate shared by crawler processes (RedisDomainClock, adaptive pacing)', () => {
    let web: PoliteWeb;
    let prefix: string;
    beforeEach(async () => {
        web = await startPoliteWeb({
            sites: [{ host: HOST, pages: PROCESSES * PAGES_EACH, rate: SITE_RATE, burst: 1, latencyMs: 20 }],
        });
        prefix = uniquePrefix('shared-rate');
    });
    afterEach(async () => {
        await web.close();
        const admin = testRedis();
        await deletePrefix(admin, prefix);
        await admin.quit();
    });

    const run = (shareRate: boolean) => {
        const startAt = String(Date.now() + START_IN_MS);
        return Promise.all(
            Array.from({ length: PROCESSES }, (_, p) =>
                crawlerProcess({
                    CRAWL_URLS: JSON.stringify(
                        Array.from({ length: PAGES_EACH }, (_, i) => web.url(HOST, `/page/${p * PAGES_EACH + i}`)),
                    ),
                    CRAWL_PROXY_URL: web.proxyUrl,
                    CRAWL_START_AT: startAt,
                    CRAWLER_PROCESS: String(p + 1),
                    REDIS_URL,
                    REDIS_KEY_PREFIX: prefix,
                    ...(shareRate ? {} : { SHARE_RATE: '0' }),
                }),
            ),
        );
    };

    test('sharing the learned rate: at most 5 % refused, and a steady pace of at least 80 % of the site rate', async () => {
        const results = await run(true);
        const seen = figures(web);
        console.log('SHARED RATE FIGURES', JSON.stringify({ handled: results.map((r) => r.handled), ...seen }));

        expect(results.map((r) => [r.handled, r.failed])).toEqual(Array(PROCESSES).fill([PAGES_EACH, 0]));
        expect(seen.refusedShare).toBeLessThanOrEqual(0.05);
        expect(seen.steadyPace).toBeGreaterThanOrEqual(SITE_RATE * 0.8);
    }, 240_000);

    test('without the learned rate shared (no tally), for comparison: each process learns from its own answers', async () => {
        const results = await run(false);
        const seen = figures(web);
        console.log('UNSHARED RATE FIGURES', JSON.stringify({ handled: results.map((r) => r.handled), ...seen }));

        expect(results.map((r) => [r.handled, r.failed])).toEqual(Array(PROCESSES).fill([PAGES_EACH, 0]));
    }, 240_000);
});
