/**
 * A default crawl that meets a dead host (a port refusing connections) ends
 * promptly with that host's requests failed, while the live host is crawled as usual.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { HttpCrawler } from '@crawlee/http';

import { DomainUnreachableError, ThrottlingRequestManager } from 'crawlee-throttling';
import { memoryConfig } from '../helpers/storage';

/** A port that refuses connections: bound once to learn a free one, then closed. */
async function refusedPort(): Promise<number> {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return port;
}

describe('error budget (maxConsecutiveErrors)', () => {
    test('default settings: the dead host fails with DomainUnreachableError after 5 errors, the live one is done', async () => {
        const live = createServer((_req, res) => {
            res.setHeader('content-type', 'text/html');
            res.end('<html>ok</html>');
        });
        await new Promise<void>((resolve) => live.listen(0, '127.0.0.1', resolve));
        const livePort = (live.address() as AddressInfo).port;
        const deadPort = await refusedPort();
        try {
            const config = memoryConfig();
            const throttler = new ThrottlingRequestManager({ domains: 'all' }, config);
            const handled: string[] = [];
            const failed: { url: string; error: string }[] = [];
            const crawler = new HttpCrawler(
                {
                    requestQueue: throttler.asRequestQueue(),
                    maxRequestRetries: 2,
                    requestHandler: async ({ request }) => {
                        handled.push(request.url);
                    },
                    failedRequestHandler: async ({ request }, error) => {
                        failed.push({ url: request.url, error: `${error.name}: ${error.message}` });
                    },
                },
                config,
            );
            throttler.attach(crawler);
            // Two hostnames, so the dead one is a domain of its own: localhost and 127.0.0.1.
            const dead = Array.from({ length: 8 }, (_, i) => `http://localhost:${deadPort}/page/${i}`);
            const alive = Array.from({ length: 4 }, (_, i) => `http://127.0.0.1:${livePort}/page/${i}`);
            const started = Date.now();
            await crawler.run([...dead, ...alive]);
            const tookMs = Date.now() - started;
            console.log(
                `ERROR BUDGET FIGURES ${JSON.stringify({ tookMs, handled: handled.length, failed: failed.length })}`,
            );

            expect(handled.sort()).toEqual([...alive].sort());
            expect(failed.map((f) => f.url).sort()).toEqual([...dead].sort());
            // After the budget, the rest fail without being sent, with an error that says why.
            const unreachable = failed.filter((f) => f.error.startsWith('DomainUnreachableError'));
            expect(unreachable.length).toBeGreaterThanOrEqual(3);
            expect(unreachable[0].error).toMatch(/localhost is unreachable \(5 network errors/);
            const state = throttler.snapshot().find((s) => s.domain === 'localhost')!;
            expect(state.consecutiveErrors).toBeGreaterThanOrEqual(5);
            // Backoffs of 2, 4, 8 and 16 s come before the budget is spent; without it the crawl ran
            // for minutes (6 dispatches in 120 s, nothing failed).
            expect(tookMs).toBeLessThan(60_000);
        } finally {
            await new Promise<void>((resolve) => live.close(() => resolve()));
        }
    }, 90_000);

    test('maxConsecutiveErrors is validated, and 0 turns the budget off', () => {
        expect(() => new ThrottlingRequestManager({ domains: 'all', maxConsecutiveErrors: -1 })).toThrow(
            /maxConsecutiveErrors must be a whole number >= 0/,
        );
        expect(() => new ThrottlingRequestManager({ domains: 'all', maxConsecutiveErrors: 1.5 })).toThrow(
            /maxConsecutiveErrors must be a whole number >= 0/,
        );
        expect(
            new ThrottlingRequestManager({ domains: 'all', maxConsecutiveErrors: 0 }).options.maxConsecutiveErrors,
        ).toBe(0);
        expect(new DomainUnreachableError('u', 'd', 5).code).toBe('ERR_THROTTLING_DOMAIN_UNREACHABLE');
    });
});
