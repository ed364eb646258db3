/**
 * `throttler.updateScope()` changes a scope's pace while the crawl runs,
 * validated like the options, and the change survives a restart.
 */
import { ProxyConfiguration } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';
import { startPoliteWeb } from '@crawlee-throttling/polite-web';
import type { PoliteWeb } from '@crawlee-throttling/polite-web';

import { ManualClock, ThrottlingOptionsError, ThrottlingRequestManager } from 'crawlee-throttling';
import { memoryConfig } from '../helpers/storage';

describe('updateScope()', () => {
    let web: PoliteWeb;
    beforeAll(async () => {
        web = await startPoliteWeb({ sites: [{ host: 'shop.example', pages: 10 }] });
    });
    afterAll(async () => web.close());

    test('a delay lowered mid-crawl: the server sees 600 ms gaps, then 100 ms ones', async () => {
        const config = memoryConfig();
        const throttler = new ThrottlingRequestManager(
            { domains: 'all', scopes: { 'shop.example': { delaySecs: 0.6 } } },
            config,
        );
        let handled = 0;
        const crawler = new HttpCrawler(
            {
                requestQueue: throttler.asRequestQueue(),
                proxyConfiguration: new ProxyConfiguration({ proxyUrls: [web.proxyUrl] }),
                maxConcurrency: 4,
                requestHandler: async () => {
                    handled += 1;
                    if (handled === 4) throttler.updateScope('shop.example', { delaySecs: 0.1 });
                },
            },
            config,
        );
        throttler.attach(crawler);
        await crawler.run(Array.from({ length: 10 }, (_, i) => web.url('shop.example', `/page/${i}`)));
        const times = web.log
            .filter((e) => e.site === 'shop.example' && e.path.startsWith('/page/'))
            .map((e) => e.time);
        const gaps = times.slice(1).map((t, i) => t - times[i]);
        expect(handled).toBe(10);
        expect(Math.min(...gaps.slice(0, 3))).toBeGreaterThanOrEqual(590);
        // After the change (one request may already have been armed at the old pace). Each of these
        // gaps also holds a response (one request at a time), so the bound leaves room for a slow one;
        // at the old pace every gap would be 600 ms or more.
        const late = gaps.slice(5);
        expect(Math.max(...late)).toBeLessThan(550);
        expect(Math.min(...late)).toBeGreaterThanOrEqual(95);
        expect(throttler.snapshot().find((s) => s.domain === 'shop.example')).toMatchObject({
            intervalMs: 100,
            scope: 'shop.example',
        });
    });

    test('validated like the options; the change is saved and applied again on resume', async () => {
        const config = memoryConfig();
        const clock = new ManualClock(1_700_000_000_000);
        const first = new ThrottlingRequestManager({ domains: 'all', clock }, config);
        await first.addRequest({ url: 'https://a.example/1' });
        expect(() => first.updateScope('a.example', { delaySecs: -1 })).toThrow(ThrottlingOptionsError);
        expect(() => first.updateScope('a.example', { delaySecs: -1 })).toThrow(/updateScope\(a\.example\).*delaySecs/);
        expect(() => first.updateScope('a.example', { speed: 2 } as never)).toThrow(/unknown option\(s\) `speed`/);
        expect(() => first.updateScope('*.example', { delaySecs: 1 })).toThrow(/updateScope/);
        first.updateScope('a.example', { delaySecs: 2, concurrency: 3 });
        expect(first.policyOf('a.example')).toMatchObject({ delayMs: 2_000, concurrency: 3 });
        await first.persistState();

        const second = new ThrottlingRequestManager({ domains: 'all', clock }, config);
        await second.isEmpty();
        expect(second.policyOf('a.example')).toMatchObject({ delayMs: 2_000, concurrency: 3, scopeKey: 'a.example' });
    });
});
