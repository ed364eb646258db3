import {
    crawlBehindLimiters,
    describeLimiter,
    maxInFlightAfter,
    pagesServed,
    refusals,
} from '../helpers/real-limiters';

const PAGES = 30;

describeLimiter('nginx-limit-req', 'a real nginx limit_req with nodelay (5 r/s, burst 2, 429)', () => {
    test('every page is done, and refusals stay few', async () => {
        const host = 'nginx-nodelay.example';
        const limiter = {
            kind: 'nginx-limit-req',
            ratePerMin: 300,
            burst: 2,
            nodelay: true,
            status: 429,
            latencyMs: 0,
        } as const;
        const { entries, failed } = await crawlBehindLimiters([{ host, limiter }], PAGES);
        expect(failed).toEqual([]);
        expect(pagesServed(entries, host)).toBe(PAGES);
        // nginx sends no Retry-After: the throttler learns from bare 429s.
        expect(refusals(entries, host).length).toBeLessThanOrEqual(6);
    });
});

describeLimiter(
    'nginx-limit-req',
    'a real nginx limit_req without nodelay (10 r/s, burst 10: delays, never refuses)',
    () => {
        test('every page is done, none refused, and no more than the slot cap of 8 in flight', async () => {
            const host = 'nginx-delay.example';
            const limiter = {
                kind: 'nginx-limit-req',
                ratePerMin: 600,
                burst: 10,
                nodelay: false,
                status: 503,
                latencyMs: 0,
            } as const;
            const { entries, failed } = await crawlBehindLimiters([{ host, limiter }], PAGES);
            expect(failed).toEqual([]);
            expect(pagesServed(entries, host)).toBe(PAGES);
            // Within its burst nginx holds requests until their turn, so a crawler with no more in flight
            // than the burst is slowed, not refused.
            expect(refusals(entries, host)).toEqual([]);
            expect(maxInFlightAfter(entries, host, 0)).toBeLessThanOrEqual(8);
            // The answers are spaced at nginx's rate: the crawl cannot beat pages / rate.
            const span = Math.max(...entries.map((e) => e.respondedAt!)) - Math.min(...entries.map((e) => e.time));
            expect(span).toBeGreaterThanOrEqual(((PAGES - 1 - 1) / 10) * 1000);
        });
    },
);
