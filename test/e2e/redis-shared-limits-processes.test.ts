import { startPoliteWeb } from '@crawlee-throttling/polite-web';
import type { LogEntry, PoliteWeb } from '@crawlee-throttling/polite-web';

import { crawlerProcess } from '../helpers/crawler-process';
import type { ProcessResult } from '../helpers/crawler-process';
import { REDIS_URL, deletePrefix, describeRedis, testRedis, uniquePrefix } from '../helpers/redis';

const PROCESSES = 3;
const PAGES_EACH = 6;
/** Slow pages, and a server that refuses (503) a third request in flight. */
const BUSY = 'busy.example';
const BUSY_CONCURRENCY = 2;
/** Fast pages, spent from a quota of 3 per second. */
const METERED = 'metered.example';
const QUOTA = 3;
const WINDOW_MS = 1_000;
/** Processes load at different speeds on a busy machine: they all start crawling this long after spawn. */
const START_IN_MS = 4_000;

/** Every process runs the same options, as the docs ask: the scopes' limits are meant for the sites. */
const THROTTLER_OPTIONS = {
    scopes: {
        [BUSY]: { concurrency: BUSY_CONCURRENCY },
        [METERED]: { concurrency: QUOTA, quota: QUOTA, quotaWindowSecs: WINDOW_MS / 1000 },
    },
};

const pages = (web: PoliteWeb, host: string): LogEntry[] =>
    web.log.filter((e) => e.site === host && e.path !== '/robots.txt');

/**
 * When each request to the metered site left its crawler (the navigation hook). The site's own log is
 * not a measure of the pace: a request reached the site up to 3.6 s after it left (on an idle machine too),
 * so arrivals bunch however evenly requests leave (9 arrived within 0.9 s where at most 6 left).
 */
const departures = (results: readonly ProcessResult[]): { time: number }[] =>
    results.flatMap((r) => r.sent.filter((x) => x.url.includes(METERED)).map((x) => ({ time: x.at })));

/** Most events within any `spanMs` (shorter than a window, so it never spans more than two of them). */
function mostWithin(entries: readonly { time: number }[], spanMs: number): number {
    const times = entries.map((e) => e.time).sort((a, b) => a - b);
    let most = 0;
    for (let i = 0, j = 0; i < times.length; i++) {
        while (times[i] - times[j] >= spanMs) j++;
        most = Math.max(most, i - j + 1);
    }
    return most;
}

/** Requests that left per quota window (windows aligned to the epoch, as Redis aligns them). */
function perWindow(sent: readonly { at: number }[]): number[] {
    const counts = new Map<number, number>();
    for (const { at } of sent)
        counts.set(Math.floor(at / WINDOW_MS), (counts.get(Math.floor(at / WINDOW_MS)) ?? 0) + 1);
    return [...counts.values()];
}

/**
 * Quota spends Redis granted per window, all processes together, read from its answers: a request
 * leaves a little after its spend (more on a loaded machine), so one spent at a window's end can leave
 * in the next, and counting departures would charge it to the wrong window.
 */
function spentPerWindow(results: readonly ProcessResult[]): number[] {
    const counts = new Map<number, number>();
    for (const { key, windowEndsAt } of results.flatMap((r) => r.spends ?? [])) {
        if (!key.includes(METERED)) continue;
        const window = Math.round(windowEndsAt / WINDOW_MS);
        counts.set(window, (counts.get(window) ?? 0) + 1);
    }
    return [...counts.values()];
}

/**
 * Three crawler processes crawl two sites, each its own third of the pages, each process set to the
 * sites' limits: `concurrency: 2` for a site that refuses a third request in flight, a quota of 3 per
 * second for another. They keep those limits together only if the limits are shared in Redis.
 */
describeRedis('concurrency and quotas shared across crawler processes (RedisDomainClock)', () => {
    let web: PoliteWeb;
    let prefix: string;
    beforeEach(async () => {
        const count = PROCESSES * PAGES_EACH;
        web = await startPoliteWeb({
            sites: [
                { host: BUSY, pages: count, latencyMs: 300, maxConcurrent: BUSY_CONCURRENCY },
                { host: METERED, pages: count },
            ],
        });
        prefix = uniquePrefix('shared-limits');
    });
    afterEach(async () => {
        await web.close();
        const admin = testRedis();
        await deletePrefix(admin, prefix);
        await admin.quit();
    });

    const run = (shareLimits: boolean) => {
        // Just after a quota window opens, so the first requests leave in the window they spend.
        const startAt = String(Math.ceil((Date.now() + START_IN_MS) / WINDOW_MS) * WINDOW_MS + 100);
        return Promise.all(
            Array.from({ length: PROCESSES }, (_, p) => {
                const mine = (host: string) =>
                    Array.from({ length: PAGES_EACH }, (_, i) => web.url(host, `/page/${p * PAGES_EACH + i}`));
                return crawlerProcess({
                    CRAWL_URLS: JSON.stringify([...mine(BUSY), ...mine(METERED)]),
                    CRAWL_PROXY_URL: web.proxyUrl,
                    CRAWL_THROTTLER_OPTIONS: JSON.stringify(THROTTLER_OPTIONS),
                    CRAWL_MAX_CONCURRENCY: String(BUSY_CONCURRENCY + QUOTA),
                    CRAWL_START_AT: startAt,
                    CRAWLER_PROCESS: String(p + 1),
                    REDIS_URL,
                    REDIS_KEY_PREFIX: prefix,
                    ...(shareLimits ? {} : { SHARE_LIMITS: '0' }),
                });
            }),
        );
    };

    const figures = (label: string, results: ProcessResult[]) => {
        const score = web.score();
        const busy = score.sites.find((s) => s.host === BUSY)!;
        const metered = score.sites.find((s) => s.host === METERED)!;
        const byProcess = (host: string) => {
            const counts: Record<string, number> = {};
            for (const e of pages(web, host)) counts[e.client ?? '?'] = (counts[e.client ?? '?'] ?? 0) + 1;
            return counts;
        };
        const out = {
            handled: results.map((r) => r.handled),
            busy: {
                requests: busy.requests,
                refusals: busy.refusals,
                maxInFlight: web.maxInFlight(BUSY),
                byProcess: byProcess(BUSY),
            },
            metered: {
                requests: metered.requests,
                sentPerWindow: perWindow(results.flatMap((r) => r.sent).filter((x) => x.url.includes(METERED))),
                spentPerWindow: spentPerWindow(results),
                mostIn900ms: mostWithin(departures(results), 900),
                arrivedMostIn900ms: mostWithin(pages(web, METERED), 900),
                byProcess: byProcess(METERED),
            },
        };
        console.log(label, JSON.stringify(out));
        return out;
    };

    test('concurrency: 2 holds across processes (server-side in-flight at most 2), and a quota is spent once for all', async () => {
        const results = await run(true);
        const f = figures('SHARED LIMITS FIGURES', results);

        expect(results.map((r) => [r.handled, r.failed])).toEqual(Array(PROCESSES).fill([2 * PAGES_EACH, 0]));
        expect(Object.keys(f.busy.byProcess).sort()).toEqual(['1', '2', '3']);
        expect(f.busy.maxInFlight).toBeLessThanOrEqual(BUSY_CONCURRENCY);
        expect(f.busy.refusals).toBe(0);
        // 3 per fixed window across processes: Redis granted no window more, every request was spent
        // for, so 18 pages took 6 windows; and the crawlers never sent more than two windows' worth
        // within 0.9 s (see departures()).
        const spent = f.metered.spentPerWindow;
        expect(spent.reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(PROCESSES * PAGES_EACH);
        expect(Math.max(...spent)).toBeLessThanOrEqual(QUOTA);
        expect(spent.length).toBeGreaterThanOrEqual((PROCESSES * PAGES_EACH) / QUOTA);
        expect(f.metered.mostIn900ms).toBeLessThanOrEqual(2 * QUOTA);
    }, 120_000);

    test('the same processes sharing only the clocks each keep their own limits: the sites see them added up', async () => {
        const results = await run(false);
        const f = figures('CLOCKS ONLY FIGURES', results);

        expect(results.map((r) => r.handled)).toEqual(Array(PROCESSES).fill(2 * PAGES_EACH));
        expect(f.busy.maxInFlight).toBeGreaterThan(BUSY_CONCURRENCY);
        expect(Math.max(...f.metered.sentPerWindow)).toBeGreaterThan(QUOTA);
        expect(f.metered.mostIn900ms).toBeGreaterThan(2 * QUOTA);
    }, 120_000);
});
