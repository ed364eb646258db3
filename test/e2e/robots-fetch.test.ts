import http from 'node:http';
import type { AddressInfo } from 'node:net';

import {
    ROBOTS_TXT_MAX_BYTES,
    RobotsCrawlDelayCache,
    fetchRobotsTxtWithGotScraping,
    robotsVerdictFromResponse,
} from '../../packages/throttling/src/robots/robots-crawl-delay';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

interface TestServer {
    origin: string;
    /** Every request path and user agent the server saw, in order. */
    hits: Array<{ path: string; userAgent?: string }>;
    close(): Promise<void>;
}

async function startServer(handler: Handler): Promise<TestServer> {
    const hits: TestServer['hits'] = [];
    const server = http.createServer((req, res) => {
        hits.push({ path: req.url ?? '', userAgent: req.headers['user-agent'] });
        handler(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    return {
        origin: `http://127.0.0.1:${port}`,
        hits,
        close: () =>
            new Promise<void>((resolve, reject) => {
                // Keep-alive sockets from got's agent would otherwise hold close() open.
                server.closeAllConnections();
                server.close((error) => (error ? reject(error) : resolve()));
            }),
    };
}

function text(res: http.ServerResponse, statusCode: number, body: string, headers: http.OutgoingHttpHeaders = {}) {
    res.writeHead(statusCode, { 'content-type': 'text/plain', ...headers });
    res.end(body);
}

const servers: TestServer[] = [];
async function serve(handler: Handler): Promise<TestServer> {
    const server = await startServer(handler);
    servers.push(server);
    return server;
}

afterEach(async () => {
    await Promise.all(servers.splice(0).map((s) => s.close()));
});

describe('robots.txt over real HTTP with the default got-scraping fetcher', () => {
    it('reads a fractional Crawl-delay and sends the configured user agent', async () => {
        const server = await serve((req, res) =>
            req.url === '/robots.txt'
                ? text(res, 200, 'User-agent: *\nCrawl-delay: 0.25\nDisallow: /private\n')
                : text(res, 404, 'nope'),
        );
        const cache = new RobotsCrawlDelayCache();

        const verdict = await cache.get(`${server.origin}/some/page`, { userAgent: 'PoliteBot/1.0' });
        await cache.get(`${server.origin}/another/page`, { userAgent: 'PoliteBot/1.0' });

        expect(verdict).toEqual({ kind: 'crawlDelay', delayMs: 250, capped: false, declaredSecs: 0.25 });
        expect(server.hits).toEqual([{ path: '/robots.txt', userAgent: 'PoliteBot/1.0' }]);
    });

    it('reports 429 as rateLimited with Retry-After, without got retrying it', async () => {
        const server = await serve((_req, res) => text(res, 429, 'slow down', { 'retry-after': '30' }));
        const cache = new RobotsCrawlDelayCache();

        await expect(cache.get(`${server.origin}/`)).resolves.toEqual({
            kind: 'rateLimited',
            retryAfterHeader: '30',
        });
        expect(server.hits).toHaveLength(1);
    });

    it('follows a redirect of robots.txt', async () => {
        const server = await serve((req, res) => {
            if (req.url === '/robots.txt') {
                res.writeHead(301, { location: '/moved/robots.txt' });
                res.end();
            } else if (req.url === '/moved/robots.txt') {
                text(res, 200, 'User-agent: *\nCrawl-delay: 3\n');
            } else {
                text(res, 404, 'nope');
            }
        });

        await expect(new RobotsCrawlDelayCache().get(`${server.origin}/x`)).resolves.toMatchObject({
            kind: 'crawlDelay',
            delayMs: 3000,
        });
        expect(server.hits.map((h) => h.path)).toEqual(['/robots.txt', '/moved/robots.txt']);
    });

    it('gives up after 5 redirects and reports unreachable', async () => {
        let n = 0;
        const server = await serve((_req, res) => {
            res.writeHead(302, { location: `/loop-${++n}` });
            res.end();
        });

        await expect(new RobotsCrawlDelayCache().get(`${server.origin}/`)).resolves.toEqual({
            kind: 'none',
            reason: 'unreachable',
        });
        // The original request plus 5 followed redirects.
        expect(server.hits).toHaveLength(6);
    });

    it('maps 404 and 503 without throwing', async () => {
        const missing = await serve((_req, res) => text(res, 404, 'Crawl-delay: 9'));
        const broken = await serve((_req, res) => text(res, 503, 'Crawl-delay: 9'));
        const cache = new RobotsCrawlDelayCache();

        await expect(cache.get(`${missing.origin}/`)).resolves.toEqual({ kind: 'none', reason: 'missing' });
        await expect(cache.get(`${broken.origin}/`)).resolves.toEqual({
            kind: 'none',
            reason: 'server-error',
            status: 503,
        });
        expect(broken.hits).toHaveLength(1);
    });

    it('reports a closed port as unreachable', async () => {
        const server = await startServer((_req, res) => text(res, 200, ''));
        await server.close();

        await expect(new RobotsCrawlDelayCache().get(`${server.origin}/`)).resolves.toEqual({
            kind: 'none',
            reason: 'unreachable',
        });
    });

    it('reports a server that never answers as unreachable after the timeout', async () => {
        const server = await serve(() => {
            /* never respond */
        });
        const started = Date.now();

        await expect(new RobotsCrawlDelayCache({ timeoutMs: 300 }).get(`${server.origin}/`)).resolves.toEqual({
            kind: 'none',
            reason: 'unreachable',
        });
        expect(Date.now() - started).toBeLessThan(5000);
    });

    it('parses only the first 500 KiB of the file', async () => {
        const padding = `# ${'x'.repeat(1022)}\n`.repeat(Math.ceil((ROBOTS_TXT_MAX_BYTES + 10_000) / 1024));
        const server = await serve((req, res) =>
            req.url === '/robots.txt'
                ? text(res, 200, `User-agent: *\n${padding}Crawl-delay: 5\n`)
                : text(res, 200, `User-agent: *\nCrawl-delay: 5\n${padding}`),
        );

        const truncated = await fetchRobotsTxtWithGotScraping(`${server.origin}/robots.txt`, { timeoutMs: 10_000 });
        expect(Buffer.byteLength(truncated.body)).toBe(ROBOTS_TXT_MAX_BYTES);
        await expect(new RobotsCrawlDelayCache().get(`${server.origin}/`)).resolves.toEqual({
            kind: 'none',
            reason: 'no-crawl-delay',
        });

        // Same padding, delay before it: proves the padding itself does not break parsing.
        const head = await fetchRobotsTxtWithGotScraping(`${server.origin}/head.txt`, { timeoutMs: 10_000 });
        expect(robotsVerdictFromResponse(head, `${server.origin}/robots.txt`)).toMatchObject({ delayMs: 5000 });
    });
});
