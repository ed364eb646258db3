import {
    crawlBehindLimiters,
    describeLimiter,
    pagesServed,
    refusals,
    retryAfterViolations,
} from '../helpers/real-limiters';

const PAGES = 16;

describeLimiter('express-rate-limit', 'express-rate-limit v8, a fixed window of 8 per 6 s', () => {
    test.each(['draft-8', 'legacy'] as const)(
        '%s headers: every page is done and every Retry-After is obeyed at the server',
        async (headers) => {
            const host = `express-${headers}.example`;
            const limiter = { kind: 'express-rate-limit', limit: 8, windowSecs: 6, headers, latencyMs: 0 } as const;
            const { entries, failed } = await crawlBehindLimiters([{ host, limiter }], PAGES);
            expect(failed).toEqual([]);
            expect(pagesServed(entries, host)).toBe(PAGES);
            // Its Retry-After runs to the window's end (up to 6 s): longer than the throttler's own first
            // backoff (2 s), so a crawler that ignored it would come back early and be seen here.
            expect(retryAfterViolations(entries, host)).toEqual([]);
            expect(refusals(entries, host).length).toBeLessThanOrEqual(10);
        },
    );
});

describeLimiter('rate-limiter-flexible', 'rate-limiter-flexible, RateLimiterMemory of 6 points per 4 s', () => {
    test('every page is done and every Retry-After is obeyed at the server', async () => {
        const host = 'flexible.example';
        const limiter = { kind: 'rate-limiter-flexible', points: 6, durationSecs: 4, latencyMs: 20 } as const;
        const { entries, failed } = await crawlBehindLimiters([{ host, limiter }], PAGES);
        expect(failed).toEqual([]);
        expect(pagesServed(entries, host)).toBe(PAGES);
        expect(refusals(entries, host).length).toBeGreaterThan(0);
        expect(retryAfterViolations(entries, host)).toEqual([]);
        expect(refusals(entries, host).length).toBeLessThanOrEqual(8);
    });
});
