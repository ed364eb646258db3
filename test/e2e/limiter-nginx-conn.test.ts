import {
    crawlBehindLimiters,
    describeLimiter,
    maxInFlightAfter,
    pagesServed,
    refusals,
} from '../helpers/real-limiters';

const PAGES = 24;

describeLimiter('nginx-limit-conn', 'a real nginx limit_conn 2 in front of 300 ms pages (503 beyond)', () => {
    test('every page is done, refusals stay few, and in flight stays bounded once it has learned', async () => {
        const host = 'nginx-conn.example';
        const limiter = { kind: 'nginx-limit-conn', conns: 2, status: 503, latencyMs: 300 } as const;
        const { entries, failed } = await crawlBehindLimiters([{ host, limiter }], PAGES);
        expect(failed).toEqual([]);
        expect(pagesServed(entries, host)).toBe(PAGES);
        expect(refusals(entries, host).length).toBeLessThanOrEqual(10);
        expect(maxInFlightAfter(entries, host, Math.floor(entries.length / 2))).toBeLessThanOrEqual(8);
    });
});
