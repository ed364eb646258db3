import { request } from 'node:http';
import { CLIENT_HEADER, startPoliteWeb, type PoliteWeb } from '@crawlee-throttling/polite-web';
import { get, hrefs } from './http-helpers';

describe('polite-web routing', () => {
    let web: PoliteWeb;

    beforeAll(async () => {
        web = await startPoliteWeb({
            sites: [
                { host: 'shop-a.example', pages: 5, crossLinks: ['shop-b.example', 'shop-c.example'] },
                { host: 'Shop-B.Example', pages: 0 },
                { host: 'shop-c.example' },
            ],
        });
    });
    afterAll(() => web.close());
    beforeEach(() => web.resetLog());

    it('listens on 127.0.0.1 and exposes proxy and page URLs', () => {
        expect(web.proxyUrl).toBe(`http://127.0.0.1:${web.port}`);
        expect(web.port).toBeGreaterThan(0);
        expect(web.url('SHOP-A.example')).toBe('http://shop-a.example/');
        expect(web.url('shop-a.example', '/page/3')).toBe('http://shop-a.example/page/3');
        expect(web.url('shop-a.example', 'page/3')).toBe('http://shop-a.example/page/3');
        expect(web.sites.map((s) => s.host)).toEqual(['shop-a.example', 'shop-b.example', 'shop-c.example']);
    });

    it('routes absolute-form proxy requests by hostname, case-insensitively and ignoring the port', async () => {
        const a = await get(web, 'shop-a.example', '/page/1', { via: 'proxy' });
        expect(a.status).toBe(200);
        expect(a.body).toContain('shop-a.example page 1');
        const c = await get(web, 'SHOP-C.example', '/', { via: 'proxy', hostPort: 8080 });
        expect(c.status).toBe(200);
        expect(c.body).toContain('<title>shop-c.example</title>');
        expect(web.log.map((e) => [e.site, e.path, e.status])).toEqual([
            ['shop-a.example', '/page/1', 200],
            ['shop-c.example', '/', 200],
        ]);
    });

    it('logs which crawler process sent a request, from its x-crawler-process header', async () => {
        await get(web, 'shop-a.example', '/page/1', { headers: { [CLIENT_HEADER]: '2' } });
        await get(web, 'shop-a.example', '/page/2');
        expect(web.log.map((e) => [e.path, e.client])).toEqual([
            ['/page/1', '2'],
            ['/page/2', undefined],
        ]);
    });

    it('routes origin-form requests by the Host header', async () => {
        const res = await get(web, 'Shop-A.Example', '/page/2', { via: 'host', hostPort: 80 });
        expect(res.status).toBe(200);
        expect(res.body).toContain('shop-a.example page 2');
        expect(web.log[0]).toMatchObject({ site: 'shop-a.example', path: '/page/2', status: 200 });
    });

    it('lets the absolute-form request line win over a conflicting Host header', async () => {
        const res = await new Promise<number>((resolve, reject) => {
            const req = request(
                {
                    host: '127.0.0.1',
                    port: web.port,
                    path: 'http://shop-c.example/',
                    headers: { host: 'shop-a.example' },
                    agent: false,
                },
                (r) => {
                    r.resume();
                    resolve(r.statusCode ?? 0);
                },
            );
            req.on('error', reject);
            req.end();
        });
        expect(res).toBe(200);
        expect(web.log[0].site).toBe('shop-c.example');
    });

    it('answers 502 for unknown hosts, either way, and logs them', async () => {
        for (const via of ['proxy', 'host'] as const) {
            const res = await get(web, 'elsewhere.example', '/', { via });
            expect(res.status).toBe(502);
            expect(res.body).toContain('unknown site');
        }
        expect(web.log.map((e) => [e.site, e.status])).toEqual([
            ['elsewhere.example', 502],
            ['elsewhere.example', 502],
        ]);
    });

    it('refuses CONNECT with 405 since sites are http only', async () => {
        const status = await new Promise<number>((resolve, reject) => {
            const req = request({
                host: '127.0.0.1',
                port: web.port,
                method: 'CONNECT',
                path: 'shop-a.example:443',
                agent: false,
            });
            req.on('connect', (res, socket) => {
                socket.destroy();
                resolve(res.statusCode ?? 0);
            });
            req.on('error', reject);
            req.end();
        });
        expect(status).toBe(405);
    });

    it('links / to /page/0 and /page/N to N+1, 2N+1 and the cross-linked sites', async () => {
        const root = await get(web, 'shop-a.example', '/');
        expect(root.headers['content-type']).toMatch(/^text\/html/);
        expect(hrefs(root.body)).toEqual(['/page/0', 'http://shop-b.example/', 'http://shop-c.example/']);
        expect(hrefs((await get(web, 'shop-a.example', '/page/0')).body)).toEqual([
            '/page/1',
            'http://shop-b.example/',
            'http://shop-c.example/',
        ]);
        expect(hrefs((await get(web, 'shop-a.example', '/page/1')).body)).toEqual([
            '/page/2',
            '/page/3',
            'http://shop-b.example/',
            'http://shop-c.example/',
        ]);
        expect(hrefs((await get(web, 'shop-a.example', '/page/2')).body)).toEqual([
            '/page/3',
            'http://shop-b.example/',
            'http://shop-c.example/',
        ]);
        // Last page: N+1 and 2N+1 are both beyond the site.
        expect(hrefs((await get(web, 'shop-a.example', '/page/4')).body)).toEqual([
            'http://shop-b.example/',
            'http://shop-c.example/',
        ]);
    });

    it('makes every page reachable from / by following links', async () => {
        const seen = new Set<string>();
        const queue = ['/'];
        while (queue.length) {
            const path = queue.shift()!;
            if (seen.has(path)) continue;
            seen.add(path);
            const res = await get(web, 'shop-c.example', path);
            expect(res.status).toBe(200);
            queue.push(...hrefs(res.body).filter((h) => h.startsWith('/')));
        }
        expect(seen.size).toBe(11); // default 10 pages plus /
    });

    it('answers 404 beyond the page count and for other paths', async () => {
        expect((await get(web, 'shop-a.example', '/page/5')).status).toBe(404);
        expect((await get(web, 'shop-a.example', '/page/05')).status).toBe(404);
        expect((await get(web, 'shop-a.example', '/page/x')).status).toBe(404);
        expect((await get(web, 'shop-a.example', '/elsewhere')).status).toBe(404);
        expect((await get(web, 'shop-a.example', '/page/4?ref=x')).status).toBe(200);
        expect(web.log.at(-1)?.path).toBe('/page/4?ref=x');
        // A site without pages still serves / but links nowhere.
        const empty = await get(web, 'shop-b.example', '/');
        expect(empty.status).toBe(200);
        expect(hrefs(empty.body)).toEqual([]);
        expect((await get(web, 'shop-b.example', '/page/0')).status).toBe(404);
    });

    it('serves HEAD without a body', async () => {
        const res = await get(web, 'shop-a.example', '/', { method: 'HEAD' });
        expect(res.status).toBe(200);
        expect(res.body).toBe('');
    });

    it('rejects invalid and duplicate site configurations', async () => {
        await expect(startPoliteWeb({ sites: [{ host: 'a.example' }, { host: 'A.example' }] })).rejects.toThrow(
            /duplicate/,
        );
        await expect(startPoliteWeb({ sites: [{ host: 'a.example', rate: 0 }] })).rejects.toThrow(/rate/);
        await expect(startPoliteWeb({ sites: [{ host: 'http://a.example' }] })).rejects.toThrow(/hostname/);
        expect(() => web.inFlight('nope.example')).toThrow(/unknown site/);
    });
});
