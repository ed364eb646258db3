/**
 * With `throttleBy: 'ip'`, hosts that resolve
 * to one address share a scope beside their own, so a per-address pace holds across them.
 *
 * polite-web serves two sites on one port, told apart by the Host header: `localhost` and
 * `127.0.0.1`. The crawler connects to each directly, and the throttler resolves them with the
 * system resolver it ships (`localhost` through the system lookup, the other as a literal): both are
 * 127.0.0.1.
 */
import { HttpCrawler } from '@crawlee/http';
import { startPoliteWeb } from '@crawlee-throttling/polite-web';
import type { PoliteWeb } from '@crawlee-throttling/polite-web';

import { ThrottlingRequestManager } from 'crawlee-throttling';
import type { ThrottlingRequestManagerOptions } from 'crawlee-throttling';
import { memoryConfig } from '../helpers/storage';

const HOSTS = ['localhost', '127.0.0.1'];
const PAGES = 8;

describe("throttleBy: 'ip' against polite-web", () => {
    let web: PoliteWeb;
    beforeAll(async () => {
        web = await startPoliteWeb({ sites: HOSTS.map((host) => ({ host, pages: PAGES })) });
    });
    afterAll(async () => web.close());

    async function crawl(options: Partial<ThrottlingRequestManagerOptions>) {
        web.reset();
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager({ domains: 'all', ...options }, config);
        let handled = 0;
        const crawler = new HttpCrawler(
            {
                requestQueue: throttler.asRequestQueue(),
                maxConcurrency: 4,
                requestHandler: async () => {
                    handled += 1;
                },
            },
            config,
        );
        throttler.attach(crawler);
        const urls = HOSTS.flatMap((host) =>
            Array.from({ length: PAGES }, (_, i) => `http://${host}:${web.port}/page/${i}`),
        );
        await crawler.run(urls);
        const pages = web.log.filter((e) => e.path.startsWith('/page/') && e.status === 200);
        const times = pages.map((e) => e.time).sort((a, b) => a - b);
        const gaps = times.slice(1).map((t, i) => t - times[i]);
        return { throttler, handled, pages, gaps };
    }

    test('a per-address pace holds across the hosts on that address; without it each host is paced alone', async () => {
        // Each host may go every 100 ms; their address every 400 ms.
        const byIp = await crawl({ delaySecs: 0.1, throttleBy: 'ip', ipScope: { delaySecs: 0.4 } });
        expect(byIp.handled).toBe(2 * PAGES);
        for (const host of HOSTS) expect(byIp.pages.filter((e) => e.site === host)).toHaveLength(PAGES);
        // Gaps are measured where requests arrive: one that left late on a loaded machine (event-loop
        // lag) arrives closer to the next. So a single gap may come short by that lag, but no two in a
        // row (a real breach of the pace shortens every gap; without the IP scope they are ~30 ms).
        expect(Math.min(...byIp.gaps)).toBeGreaterThanOrEqual(300);
        const pairs = byIp.gaps.slice(1).map((gap, i) => gap + byIp.gaps[i]);
        expect(Math.min(...pairs)).toBeGreaterThanOrEqual(2 * 390);
        const address = byIp.throttler.stats().find((s) => s.domain === 'ip:127.0.0.1');
        expect(address).toMatchObject({ requests: 2 * PAGES, handled: 2 * PAGES });

        const byHost = await crawl({ delaySecs: 0.1 });
        expect(byHost.handled).toBe(2 * PAGES);
        // The two hosts run side by side, 100 ms apart each: their requests interleave closer than that.
        expect(Math.min(...byHost.gaps)).toBeLessThan(100);
        expect(byHost.throttler.stats().some((s) => s.domain.startsWith('ip:'))).toBe(false);
        const span = (gaps: number[]) => gaps.reduce((a, b) => a + b, 0);
        expect(span(byHost.gaps)).toBeLessThan(span(byIp.gaps) / 2);
        console.log(
            'PACE BY IP',
            JSON.stringify({
                byIp: { minGapMs: Math.min(...byIp.gaps), spanMs: span(byIp.gaps) },
                byHost: { minGapMs: Math.min(...byHost.gaps), spanMs: span(byHost.gaps) },
                order: byIp.pages.map((e) => (e.site === 'localhost' ? 'L' : 'N')).join(''),
            }),
        );
    });
});
