/**
 * A request redirected to another domain counts against the
 * domain that answered: its refusals back that domain off, its successes count there.
 */
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import { HttpCrawler } from '@crawlee/http';

import { ThrottlingRequestManager } from 'crawlee-throttling';
import { memoryConfig } from '../helpers/storage';

async function listen(server: Server): Promise<number> {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return (server.address() as AddressInfo).port;
}

describe('redirects across domains', () => {
    test("the answering domain's 429s back it off, and its successes count there", async () => {
        const refusedOnce = new Set<string>();
        const arrivals: { path: string; at: number; status: number }[] = [];
        // localhost:<port> answers: the first request of each page is refused (robots.txt is not).
        const target = createServer((req, res) => {
            const page = req.url!.startsWith('/page/');
            if (page && !refusedOnce.has(req.url!)) {
                refusedOnce.add(req.url!);
                arrivals.push({ path: req.url!, at: Date.now(), status: 429 });
                res.writeHead(429, { 'retry-after': '1', 'content-type': 'text/html' });
                res.end('slow down');
                return;
            }
            if (page) arrivals.push({ path: req.url!, at: Date.now(), status: 200 });
            res.writeHead(200, { 'content-type': 'text/html' });
            res.end('<html>ok</html>');
        });
        const targetPort = await listen(target);
        // 127.0.0.1:<port> only redirects to it.
        const origin = createServer((req, res) => {
            res.writeHead(302, { location: `http://localhost:${targetPort}${req.url}` });
            res.end();
        });
        const originPort = await listen(origin);
        try {
            const config = memoryConfig();
            const throttler = new ThrottlingRequestManager({ domains: 'all' }, config);
            const handled: string[] = [];
            const crawler = new HttpCrawler(
                {
                    requestQueue: throttler.asRequestQueue(),
                    requestHandler: async ({ request }) => {
                        handled.push(request.url);
                    },
                },
                config,
            );
            throttler.attach(crawler);
            const urls = Array.from({ length: 3 }, (_, i) => `http://127.0.0.1:${originPort}/page/${i}`);
            await crawler.run(urls);
            const snap = (d: string) => throttler.snapshot().find((s) => s.domain === d);
            expect(handled.sort()).toEqual(urls.sort());
            expect(snap('localhost')).toMatchObject({ refusals: 3, handled: 3 });
            expect(snap('localhost')!.backoffUntil).toBeGreaterThan(0);
            expect(snap('127.0.0.1')).toMatchObject({ refusals: 0, backoffUntil: 0 });
            // A retry queued under 127.0.0.1 still waits out localhost's backoff: each page's second
            // arrival comes a Retry-After (1 s) after its 429 at the earliest.
            for (const refusal of arrivals.filter((a) => a.status === 429)) {
                const retry = arrivals.find((a) => a.path === refusal.path && a.status === 200)!;
                expect(retry.at - refusal.at).toBeGreaterThanOrEqual(990);
            }
        } finally {
            await new Promise<void>((resolve) => origin.close(() => resolve()));
            await new Promise<void>((resolve) => target.close(() => resolve()));
        }
    });
});
