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
});
