import { crawlBehindLimiters, describeLimiter, pagesServed, refusals } from '../helpers/real-limiters';

const PAGES = 24;

describeLimiter('haproxy', 'a real haproxy stick table denying above 20 requests per 10 s (429)', () => {
    test('every page is done and refusals stay few, though haproxy counts refused requests too', async () => {
        const host = 'haproxy.example';
        const limiter = { kind: 'haproxy', limitPer10s: 20, latencyMs: 0 } as const;
        const { entries, failed } = await crawlBehindLimiters([{ host, limiter }], PAGES);
        expect(failed).toEqual([]);
        expect(pagesServed(entries, host)).toBe(PAGES);
        expect(refusals(entries, host).length).toBeLessThanOrEqual(15);
    });
});
