import {
    crawlBehindLimiters,
    describeLimiter,
    maxInFlightAfter,
    pagesServed,
    refusals,
} from '../helpers/real-limiters';

describeLimiter('polite-web', 'a server that slows down under load (1 worker, 100 ms a page, FIFO queue)', () => {
    test('every page is done, none refused, and no more than the slot cap of 8 in flight', async () => {
        const host = 'slow.example';
        const pages = 40;
        const { entries, failed } = await crawlBehindLimiters(
            [{ host, site: { service: { workers: 1, msPerPage: 100 } } }],
            pages,
        );
        expect(failed).toEqual([]);
        expect(pagesServed(entries, host)).toBe(pages);
        expect(refusals(entries, host)).toEqual([]);
        // A slow server never says "too many": only the throttler's slot cap keeps the queue short.
        expect(maxInFlightAfter(entries, host, 0)).toBeLessThanOrEqual(8);
    });
});

describeLimiter(
    'polite-web',
    'a slow server with a short queue (2 workers, 150 ms, 2 waiting at most, 503 beyond)',
    () => {
        test('every page is done and refusals stay few', async () => {
            const host = 'queue.example';
            const pages = 30;
            const { entries, failed } = await crawlBehindLimiters(
                [
                    {
                        host,
                        site: {
                            service: { workers: 2, msPerPage: 150, queueLimit: 2 },
                            refusal: { status: 503, retryAfter: 'none' },
                        },
                    },
                ],
                pages,
            );
            expect(failed).toEqual([]);
            expect(pagesServed(entries, host)).toBe(pages);
            expect(refusals(entries, host).length).toBeLessThanOrEqual(5);
        });
    },
);
