import { startPoliteWeb } from '@crawlee-throttling/polite-web';
import type { PoliteWeb } from '@crawlee-throttling/polite-web';

import { REDIS_URL, deletePrefix, describeRedis, testRedis, uniquePrefix } from '../helpers/redis';
import type { FrontierWorker } from '../helpers/frontier-workers';
import { countUrls, startFrontierWorker, whenHandled } from '../helpers/frontier-workers';

const HOSTS = ['paced-a.example', 'paced-b.example', 'free-a.example', 'free-b.example'];
const PAGES = 14;
/** Every page of every site, as the crawler's request URLs spell them (each site's root links to the others). */
const allPages = (web: PoliteWeb) =>
    HOSTS.flatMap((host) => [
        web.url(host, '/'),
        ...Array.from({ length: PAGES }, (_, i) => web.url(host, `/page/${i}`)),
    ]);

/**
 * Real Crawlee crawler processes on one Redis: one frontier (RedisStorageClient), one clock
 * (RedisDomainClock). Each starts from the same root URLs and follows links; the link graph spans
 * four sites, two of them paced.
 */
describeRedis('crawler processes on a shared frontier (RedisStorageClient)', () => {
    let web: PoliteWeb;
    let prefix: string;
    let workers: FrontierWorker[];

    beforeEach(async () => {
        web = await startPoliteWeb({
            sites: HOSTS.map((host) => ({
                host,
                pages: PAGES,
                latencyMs: 250,
                crossLinks: HOSTS.filter((h) => h !== host),
                // Slow enough that a process started a few pages in (its Node and Crawlee take a second or
                // more to load on a busy machine) still finds work left.
                ...(host.startsWith('paced') ? { rate: 4, burst: 1 } : {}),
            })),
        });
        prefix = uniquePrefix('rs-processes').replace(/:+$/, '');
        workers = [];
    });
    afterEach(async () => {
        for (const w of workers) if (w.child.exitCode === null && w.child.signalCode === null) w.child.kill('SIGKILL');
        await web.close();
        const admin = testRedis();
        await deletePrefix(admin, prefix);
        await admin.quit();
    });

    const start = (label: string, urls: string[]) => {
        const worker = startFrontierWorker(label, {
            CRAWL_URLS: JSON.stringify(urls),
            CRAWL_PROXY_URL: web.proxyUrl,
            CRAWL_DELAY_SECS: '0.3',
            CRAWL_LOCK_SECS: '8',
            REDIS_URL,
            REDIS_KEY_PREFIX: prefix,
        });
        workers.push(worker);
        return worker;
    };
    const roots = () => HOSTS.map((h) => web.url(h, '/'));

    it('crawls each page once across processes, a late joiner included', async () => {
        const [one, two] = [start('1', roots()), start('2', roots())];
        await whenHandled(one, 2);
        // Joins with no start URLs: it finds the others' queues on the shared storage.
        const late = start('3', []);
        const ends = await Promise.all(workers.map((w) => w.exited));
        for (const end of ends) expect(end).toMatchObject({ code: 0 });
        const counts = countUrls(one.handled, two.handled, late.handled);
        expect([...counts.keys()].sort()).toEqual(allPages(web).sort());
        expect([...counts].filter(([, n]) => n > 1)).toEqual([]);
        for (const w of workers) expect(w.handled.length).toBeGreaterThan(0);
        // The sites saw each page from one process only.
        const pageHits = web.log.filter((e) => e.path !== '/robots.txt' && !e.refused);
        expect(new Set(pageHits.map((e) => e.client))).toEqual(new Set(['1', '2', '3']));
    }, 120_000);

    it('loses nothing when a process is SIGKILLed: its requests finish elsewhere, twice only where it held them', async () => {
        const [doomed, a, b] = [start('doomed', roots()), start('a', roots()), start('b', roots())];
        await whenHandled(doomed, 4);
        doomed.child.kill('SIGKILL');
        const [killed, ...ends] = await Promise.all(workers.map((w) => w.exited));
        expect(killed.signal).toBe('SIGKILL');
        for (const end of ends) expect(end).toMatchObject({ code: 0 });
        // Nothing lost: every page was handled somewhere (by the killed process before it died, or after).
        const counts = countUrls(doomed.handled, a.handled, b.handled);
        expect([...counts.keys()].sort()).toEqual(allPages(web).sort());
        // The survivors never handled a page twice between them.
        expect([...countUrls(a.handled, b.handled)].filter(([, n]) => n > 1)).toEqual([]);
        // A page was handled twice only where the killed process held it (its handler had started).
        const twice = [...counts].filter(([, n]) => n > 1).map(([url]) => url);
        const held = new Set(doomed.started);
        expect(twice.filter((url) => !held.has(url))).toEqual([]);
    }, 120_000);

    it('resumes on two processes a crawl stopped on four', async () => {
        const first = [1, 2, 3, 4].map((n) => start(`first-${n}`, roots()));
        await whenHandledTogether(first, 12);
        for (const w of first) w.child.kill('SIGKILL');
        await Promise.all(first.map((w) => w.exited));
        // The same code again, on fewer machines, with the same start URLs and prefix.
        const second = [start('second-1', roots()), start('second-2', roots())];
        for (const end of await Promise.all(second.map((w) => w.exited))) expect(end).toMatchObject({ code: 0 });
        const counts = countUrls(...first.map((w) => w.handled), ...second.map((w) => w.handled));
        expect([...counts.keys()].sort()).toEqual(allPages(web).sort());
        // Handled twice only where a stopped process held the page.
        const held = new Set(first.flatMap((w) => w.started));
        expect([...counts].filter(([url, n]) => n > 1 && !held.has(url))).toEqual([]);
        expect(second.every((w) => w.handled.length > 0)).toBe(true);
    }, 150_000);
});

/** Resolves once `workers` have handled `count` pages between them. */
function whenHandledTogether(workers: FrontierWorker[], count: number): Promise<void> {
    return new Promise((resolve) => {
        const timer = setInterval(() => {
            if (workers.reduce((t, w) => t + w.handled.length, 0) < count) return;
            clearInterval(timer);
            resolve();
        }, 20);
    });
}
