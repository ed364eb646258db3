import { startPoliteWeb, type PoliteWeb } from '@crawlee-throttling/polite-web';
import { get } from './http-helpers';

describe('polite-web robots.txt', () => {
    let web: PoliteWeb;

    beforeAll(async () => {
        web = await startPoliteWeb({
            sites: [
                { host: 'plain.example' },
                { host: 'slow.example', crawlDelay: 0.25 },
                { host: 'whole.example', crawlDelay: 2 },
                { host: 'missing.example', robots: { status: 404 } },
                { host: 'limited.example', robots: { status: 429 } },
                { host: 'broken.example', robots: { status: 500 } },
                { host: 'custom.example', crawlDelay: 9, robots: { body: 'User-agent: *\nDisallow: /page/\n' } },
                { host: 'flaky.example', crawlDelay: 1, robots: { failFirst: { times: 2, retryAfterSecs: 3 } } },
                { host: 'limiting.example', robots: { failFirst: { times: 1, status: 429 } } },
                { host: 'cut.example', robots: { failFirst: { times: 1, reset: true } } },
            ],
        });
    });
    afterAll(() => web.close());

    it('allows everything and has no Crawl-delay by default', async () => {
        const res = await get(web, 'plain.example', '/robots.txt');
        expect(res.status).toBe(200);
        expect(res.headers['content-type']).toMatch(/^text\/plain/);
        expect(res.body).toBe('User-agent: *\nAllow: /\n');
    });

    it('emits fractional and whole Crawl-delay values', async () => {
        expect((await get(web, 'slow.example', '/robots.txt')).body).toContain('\nCrawl-delay: 0.25\n');
        expect((await get(web, 'whole.example', '/robots.txt', { via: 'host' })).body).toContain('\nCrawl-delay: 2\n');
    });

    it('can be overridden by a status', async () => {
        expect((await get(web, 'missing.example', '/robots.txt')).status).toBe(404);
        expect((await get(web, 'limited.example', '/robots.txt')).status).toBe(429);
        const broken = await get(web, 'broken.example', '/robots.txt');
        expect(broken.status).toBe(500);
        expect(broken.body).not.toContain('User-agent');
        // The override only concerns robots.txt.
        expect((await get(web, 'limited.example', '/')).status).toBe(200);
    });

    it('can be overridden by a body', async () => {
        const res = await get(web, 'custom.example', '/robots.txt');
        expect(res.status).toBe(200);
        expect(res.body).toBe('User-agent: *\nDisallow: /page/\n');
    });

    it('failFirst: the first requests fail (503 by default, with Retry-After when set), then the file is served', async () => {
        web.reset();
        for (let i = 0; i < 2; i++) {
            const failed = await get(web, 'flaky.example', '/robots.txt');
            expect(failed.status).toBe(503);
            expect(failed.headers['retry-after']).toBe('3');
            expect(failed.body).toBe('Service Unavailable\n');
        }
        const served = await get(web, 'flaky.example', '/robots.txt');
        expect(served.status).toBe(200);
        expect(served.body).toContain('Crawl-delay: 1');
        expect(served.headers['retry-after']).toBeUndefined();

        const limited = await get(web, 'limiting.example', '/robots.txt');
        expect(limited.status).toBe(429);
        expect(limited.headers['retry-after']).toBeUndefined();
        expect((await get(web, 'limiting.example', '/robots.txt')).status).toBe(200);
        expect(web.log.filter((e) => e.site === 'flaky.example').map((e) => e.status)).toEqual([503, 503, 200]);
    });

    it('failFirst with reset: the response is cut off mid-body, then the file is served; reset() counts again', async () => {
        web.reset();
        await expect(get(web, 'cut.example', '/robots.txt')).rejects.toThrow(/ECONNRESET|aborted|socket hang up/);
        expect(web.log.at(-1)).toMatchObject({ site: 'cut.example', status: 200, reset: true });
        expect((await get(web, 'cut.example', '/robots.txt')).status).toBe(200);
        web.reset();
        await expect(get(web, 'cut.example', '/robots.txt')).rejects.toThrow();
    });

    it('rejects a failFirst that is not a count', async () => {
        await expect(
            startPoliteWeb({ sites: [{ host: 'a.example', robots: { failFirst: { times: -1 } } }] }),
        ).rejects.toThrow('site a.example: robots.failFirst.times must be an integer >= 0, got -1');
    });
});
