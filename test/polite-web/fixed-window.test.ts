import { FixedWindow, startPoliteWeb, type PoliteWeb, type SiteOptions } from '@crawlee-throttling/polite-web';
import { get, manualClock } from './http-helpers';

describe('FixedWindow', () => {
    it('opens a window at the first request and counts refused requests too', () => {
        const window = new FixedWindow(2, 10_000, 'first-request');
        expect(window.msUntilReset(500)).toBe(10_000);
        expect([window.tryTake(1_000), window.tryTake(2_000), window.tryTake(3_000)]).toEqual([true, true, false]);
        expect(window.remaining(3_000)).toBe(0);
        expect(window.msUntilReset(3_000)).toBe(8_000);
        // Knocking at 10.9 s is still in the window that opened at 1 s.
        expect(window.tryTake(10_900)).toBe(false);
        // The next request after it ended opens a new one.
        expect(window.tryTake(11_000)).toBe(true);
        expect(window.msUntilReset(11_000)).toBe(10_000);
    });

    it('epoch windows are aligned on multiples of the window', () => {
        const window = new FixedWindow(1, 60_000, 'epoch');
        expect(window.tryTake(125_000)).toBe(true);
        expect(window.msUntilReset(125_000)).toBe(55_000);
        expect(window.tryTake(179_999)).toBe(false);
        expect(window.tryTake(180_000)).toBe(true);
    });
});

describe('polite-web window sites and their headers', () => {
    const clock = manualClock(Date.UTC(2025, 5, 1, 8, 0, 0, 0));
    let web: PoliteWeb | undefined;
    afterEach(async () => {
        await web?.close();
        web = undefined;
    });
    const site = (rateLimitHeaders: NonNullable<SiteOptions['refusal']>['rateLimitHeaders']): SiteOptions => ({
        host: 'api.example',
        window: { limit: 3, windowSecs: 10 },
        refusal: { status: 429, rateLimitHeaders },
    });

    it('draft-8 (express-rate-limit): quota of the window, what is left and seconds to its end', async () => {
        web = await startPoliteWeb({ sites: [site('draft-8')], clock: clock.now });
        const first = await get(web, 'api.example', '/page/0');
        expect(first.headers['ratelimit-policy']).toBe('"3-in-10sec"; q=3; w=10; pk=:MTI3LjAuMC4x:');
        expect(first.headers.ratelimit).toBe('"3-in-10sec"; r=2; t=10');
        clock.advance(2_500);
        await get(web, 'api.example', '/page/1');
        const third = await get(web, 'api.example', '/page/2');
        // Not "0 left, back in 1 s": the window has 7.5 s to run, and says so.
        expect(third.headers.ratelimit).toBe('"3-in-10sec"; r=0; t=8');
        const refused = await get(web, 'api.example', '/page/3');
        expect(refused.status).toBe(429);
        expect(refused.headers['retry-after']).toBe('8');
        clock.advance(7_500);
        expect((await get(web, 'api.example', '/page/3')).status).toBe(200);
    });

    it('github: X-RateLimit-* with Used and the reset in epoch seconds', async () => {
        web = await startPoliteWeb({
            sites: [{ ...site('github'), window: { limit: 5, windowSecs: 3600, start: 'epoch' } }],
            clock: clock.now,
        });
        clock.set(Date.UTC(2025, 5, 1, 8, 20, 0, 0));
        const ok = await get(web, 'api.example', '/');
        expect(ok.headers).toMatchObject({
            'x-ratelimit-limit': '5',
            'x-ratelimit-remaining': '4',
            'x-ratelimit-used': '1',
            'x-ratelimit-reset': String(Date.UTC(2025, 5, 1, 9, 0, 0, 0) / 1000),
            'x-ratelimit-resource': 'core',
        });
    });

    it('rejects a window together with a rate', async () => {
        await expect(startPoliteWeb({ sites: [{ ...site('none'), rate: 2 }] })).rejects.toThrow(
            'site api.example: window and rate are two limiters; give one of them',
        );
    });
});
