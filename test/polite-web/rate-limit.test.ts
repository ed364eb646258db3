import { startPoliteWeb, type PoliteWeb, type SiteOptions } from '@crawlee-throttling/polite-web';
import { get, manualClock } from './http-helpers';

describe('polite-web rate limiting (token bucket on an injected clock)', () => {
    const clock = manualClock();
    let web: PoliteWeb;

    async function withSites(sites: SiteOptions[]): Promise<PoliteWeb> {
        await web?.close();
        web = await startPoliteWeb({ sites, clock: clock.now });
        return web;
    }
    afterAll(() => web?.close());

    it('accepts a burst, refuses beyond it and refills at the rate', async () => {
        await withSites([{ host: 'a.example', rate: 2, burst: 2 }]);
        expect((await get(web, 'a.example', '/page/0')).status).toBe(200);
        expect((await get(web, 'a.example', '/page/1')).status).toBe(200);
        const refused = await get(web, 'a.example', '/page/2');
        expect(refused.status).toBe(429);
        expect(refused.headers['retry-after']).toBe('1');
        clock.advance(499);
        expect((await get(web, 'a.example', '/page/2')).status).toBe(429);
        clock.advance(1);
        expect((await get(web, 'a.example', '/page/2')).status).toBe(200);
        // A long pause refills only up to the burst.
        clock.advance(60_000);
        const statuses = [];
        for (let i = 0; i < 3; i += 1) statuses.push((await get(web, 'a.example', `/page/${i}`)).status);
        expect(statuses).toEqual([200, 200, 429]);
        expect(web.log.map((e) => e.status)).toEqual([200, 200, 429, 429, 200, 200, 200, 429]);
    });

    it('does not spend a token on a refused request', async () => {
        await withSites([{ host: 'a.example', rate: 1, burst: 1 }]);
        expect((await get(web, 'a.example', '/')).status).toBe(200);
        clock.advance(500);
        expect((await get(web, 'a.example', '/')).status).toBe(429);
        clock.advance(500);
        // Had the refusal cost a token, the bucket would still be half empty here.
        expect((await get(web, 'a.example', '/')).status).toBe(200);
    });

    it('does not count robots.txt against the rate limit', async () => {
        await withSites([{ host: 'a.example', rate: 1, burst: 1 }]);
        for (let i = 0; i < 3; i += 1) expect((await get(web, 'a.example', '/robots.txt')).status).toBe(200);
        expect((await get(web, 'a.example', '/')).status).toBe(200);
        expect((await get(web, 'a.example', '/robots.txt')).status).toBe(200);
    });

    it('leaves sites without a rate unlimited', async () => {
        await withSites([{ host: 'a.example', refusal: { status: 429, rateLimitHeaders: 'ietf' } }]);
        for (let i = 0; i < 20; i += 1) {
            const res = await get(web, 'a.example', '/');
            expect(res.status).toBe(200);
            // Nothing to advertise without a quota.
            expect(res.headers.ratelimit).toBeUndefined();
        }
    });

    describe('Retry-After styles', () => {
        it('seconds: rounded up, at least 1', async () => {
            await withSites([
                { host: 'a.example', rate: 0.25, burst: 1, refusal: { status: 429, retryAfter: 'seconds' } },
            ]);
            await get(web, 'a.example', '/');
            expect((await get(web, 'a.example', '/')).headers['retry-after']).toBe('4');
            // The log keeps what the refusal said, for scoring the wait it imposed.
            expect(web.log.at(-1)).toMatchObject({ refused: true, retryAfter: '4' });
            clock.advance(2_500);
            expect((await get(web, 'a.example', '/')).headers['retry-after']).toBe('2'); // 1.5 s → 2
            clock.advance(1_400);
            expect((await get(web, 'a.example', '/')).headers['retry-after']).toBe('1'); // 0.1 s → 1
        });

        it('http-date: the moment a token is available, rounded up to the second', async () => {
            clock.set(Date.UTC(2025, 5, 1, 8, 0, 0, 300));
            await withSites([
                { host: 'a.example', rate: 0.25, burst: 1, refusal: { status: 429, retryAfter: 'http-date' } },
            ]);
            await get(web, 'a.example', '/');
            const res = await get(web, 'a.example', '/');
            expect(res.status).toBe(429);
            expect(res.headers['retry-after']).toBe('Sun, 01 Jun 2025 08:00:05 GMT');
            expect(Date.parse(res.headers['retry-after']!)).toBeGreaterThanOrEqual(clock.now() + 4_000);
        });

        it('none: no Retry-After header', async () => {
            await withSites([{ host: 'a.example', rate: 1, burst: 1, refusal: { status: 429, retryAfter: 'none' } }]);
            await get(web, 'a.example', '/');
            const res = await get(web, 'a.example', '/');
            expect(res.status).toBe(429);
            expect(res.headers['retry-after']).toBeUndefined();
            expect(web.log.at(-1)?.retryAfter).toBeUndefined();
        });

        it('503 refusals carry Retry-After too', async () => {
            await withSites([{ host: 'a.example', rate: 1, burst: 1, refusal: { status: 503 } }]);
            await get(web, 'a.example', '/');
            const res = await get(web, 'a.example', '/');
            expect(res.status).toBe(503);
            expect(res.headers['retry-after']).toBe('1');
            expect(web.log.at(-1)?.status).toBe(503);
        });
    });

    describe('refusals other than 429 and 503', () => {
        it("a 430 (Shopify's rate limit) with a body of its own, logged and scored as a refusal", async () => {
            await withSites([
                {
                    host: 'a.example',
                    rate: 1,
                    burst: 1,
                    refusal: { status: 430, retryAfter: 'none', body: 'Temporarily blocked\n' },
                },
            ]);
            await get(web, 'a.example', '/');
            const res = await get(web, 'a.example', '/');
            expect(res.status).toBe(430);
            expect(res.body).toBe('Temporarily blocked\n');
            expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
            expect(web.log.map((e) => [e.status, e.refused])).toEqual([
                [200, undefined],
                [430, true],
            ]);
            expect(web.score().totals).toMatchObject({ refusals: 1, served: 1 });
        });

        it('a 200 "slow down" page counts as refused, not served', async () => {
            const body = '<html><body>Rate limit exceeded</body></html>';
            await withSites([
                {
                    host: 'a.example',
                    rate: 1,
                    burst: 1,
                    refusal: { status: 200, retryAfter: 'none', body, contentType: 'text/html; charset=utf-8' },
                },
            ]);
            await get(web, 'a.example', '/page/0');
            const res = await get(web, 'a.example', '/page/0');
            expect(res.status).toBe(200);
            expect(res.body).toBe(body);
            expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
            expect(web.score().sites[0]).toMatchObject({ requests: 2, served: 1, refusals: 1 });
        });

        it('rejects a refusal status that is not an HTTP status', async () => {
            await expect(startPoliteWeb({ sites: [{ host: 'a.example', refusal: { status: 42 } }] })).rejects.toThrow(
                'site a.example: refusal.status must be an HTTP status code (100-599), got 42',
            );
        });
    });

    describe('rate-limit header styles (burst 4 at 2/s)', () => {
        const site = (rateLimitHeaders: 'ietf' | 'legacy' | 'x-ratelimit' | 'none'): SiteOptions => ({
            host: 'a.example',
            rate: 2,
            burst: 4,
            refusal: { status: 429, rateLimitHeaders },
        });

        it('ietf: RateLimit-Policy and RateLimit structured fields, on successes and refusals', async () => {
            await withSites([site('ietf')]);
            const ok = await get(web, 'a.example', '/');
            expect(ok.status).toBe(200);
            expect(ok.headers['ratelimit-policy']).toBe('"default";q=4;w=2');
            expect(ok.headers.ratelimit).toBe('"default";r=3;t=1');
            for (let i = 0; i < 3; i += 1) await get(web, 'a.example', '/');
            const refused = await get(web, 'a.example', '/');
            expect(refused.status).toBe(429);
            expect(refused.headers.ratelimit).toBe('"default";r=0;t=2');
            expect(refused.headers['retry-after']).toBe('1');
        });

        it('legacy: RateLimit-Limit/-Remaining/-Reset in delta seconds', async () => {
            await withSites([site('legacy')]);
            const ok = await get(web, 'a.example', '/');
            expect(ok.headers['ratelimit-limit']).toBe('4');
            expect(ok.headers['ratelimit-remaining']).toBe('3');
            expect(ok.headers['ratelimit-reset']).toBe('1');
            expect(ok.headers['ratelimit-policy']).toBeUndefined();
        });

        it('x-ratelimit: X-RateLimit-Limit/-Remaining/-Reset in epoch seconds', async () => {
            clock.set(Date.UTC(2025, 5, 1, 8, 0, 0, 0));
            await withSites([site('x-ratelimit')]);
            await get(web, 'a.example', '/');
            const ok = await get(web, 'a.example', '/');
            expect(ok.headers['x-ratelimit-limit']).toBe('4');
            expect(ok.headers['x-ratelimit-remaining']).toBe('2');
            // Two tokens short at 2/s: full again in 1 s.
            expect(ok.headers['x-ratelimit-reset']).toBe(String(clock.now() / 1000 + 1));
        });

        it('none: no rate-limit headers', async () => {
            await withSites([site('none')]);
            const ok = await get(web, 'a.example', '/');
            expect(Object.keys(ok.headers).filter((h) => h.includes('ratelimit'))).toEqual([]);
        });
    });

    it('reset() refills the buckets and starts a new log', async () => {
        await withSites([{ host: 'a.example', rate: 1, burst: 1 }]);
        await get(web, 'a.example', '/');
        expect((await get(web, 'a.example', '/')).status).toBe(429);
        const before = web.log;
        web.reset();
        expect(web.log).toEqual([]);
        expect(before).toHaveLength(2);
        expect((await get(web, 'a.example', '/')).status).toBe(200);
    });

    it('timestamps log entries with the injected clock', async () => {
        clock.set(1_700_000_000_000);
        await withSites([{ host: 'a.example' }]);
        await get(web, 'a.example', '/');
        clock.advance(250);
        await get(web, 'a.example', '/robots.txt');
        expect(web.log.map((e) => e.time)).toEqual([1_700_000_000_000, 1_700_000_000_250]);
    });
});
