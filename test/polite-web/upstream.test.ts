import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startPoliteWeb, type PoliteWeb } from '@crawlee-throttling/polite-web';
import { eventually, get } from './http-helpers';

describe('polite-web upstream sites (a transparent proxy in front of a real server)', () => {
    let origin: Server;
    let port: number;
    let web: PoliteWeb;
    const seenHosts: string[] = [];
    let inOrigin = 0;

    beforeAll(async () => {
        // Refuses /busy with 503 + Retry-After, holds /slow for 80 ms, answers the rest at once.
        origin = createServer((req, res) => {
            seenHosts.push(req.headers.host ?? '');
            inOrigin += 1;
            res.once('close', () => (inOrigin -= 1));
            if (req.url === '/busy') {
                res.writeHead(503, { 'Retry-After': '3', 'X-Limiter': 'test' });
                res.end('busy\n');
            } else if (req.url === '/slow') {
                setTimeout(() => res.end('slow\n'), 80);
            } else {
                res.end(`page ${req.url}\n`);
            }
        });
        await new Promise<void>((resolve) => origin.listen(0, '127.0.0.1', resolve));
        port = (origin.address() as AddressInfo).port;
        web = await startPoliteWeb({ sites: [{ host: 'real.example', upstream: { port } }] });
    });
    afterAll(async () => {
        await web.close();
        await new Promise<void>((resolve) => origin.close(() => resolve()));
    });

    it('passes status, headers and body through, with the site as Host', async () => {
        const res = await get(web, 'real.example', '/page/4');
        expect(res.status).toBe(200);
        expect(res.body).toBe('page /page/4\n');
        expect(seenHosts.at(-1)).toBe('real.example');
        const busy = await get(web, 'real.example', '/busy');
        expect(busy.status).toBe(503);
        expect(busy.headers['retry-after']).toBe('3');
        expect(busy.headers['x-limiter']).toBe('test');
    });

    it('logs refusals and response times as for its own sites', async () => {
        web.resetLog();
        await Promise.all([get(web, 'real.example', '/slow'), get(web, 'real.example', '/busy')]);
        const slow = web.log.find((e) => e.path === '/slow')!;
        const busy = web.log.find((e) => e.path === '/busy')!;
        expect(busy).toMatchObject({ status: 503, refused: true, retryAfter: '3' });
        expect(slow.refused).toBeUndefined();
        expect(slow.respondedAt! - slow.time).toBeGreaterThanOrEqual(78);
        expect(web.score().sites[0]).toMatchObject({ requests: 2, served: 1, refusals: 1 });
    });

    it('answers 502 when the upstream is gone', async () => {
        const dead = await startPoliteWeb({ sites: [{ host: 'gone.example', upstream: { port: 1 } }] });
        try {
            expect((await get(dead, 'gone.example', '/')).status).toBe(502);
        } finally {
            await dead.close();
        }
        await eventually(() => inOrigin === 0);
    });
});
