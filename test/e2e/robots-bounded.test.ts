import http from 'node:http';
import type { AddressInfo } from 'node:net';
import zlib from 'node:zlib';

import { GotScrapingHttpClient } from '@crawlee/core';
import { HttpCrawler } from '@crawlee/http';

import { ThrottlingRequestManager } from 'crawlee-throttling';

import { robotsFetcherOf } from '../../packages/throttling/src/integration/crawler-integration';
import type { RobotsFetcher } from 'crawlee-throttling/types';
import {
    fetchRobotsTxtWithGotScraping,
    ROBOTS_TXT_MAX_BYTES,
    RobotsCrawlDelayCache,
    robotsVerdictFromResponse,
} from '../../packages/throttling/src/robots/robots-crawl-delay';
import { memoryConfig } from '../helpers/storage';

const HEAD = 'User-agent: *\nCrawl-delay: 2\n';
const BOMB_INFLATED_BYTES = 100 * 1024 * 1024;
/**
 * Measured: a streamed read grows RSS and Buffer memory by 1-2 MB; the old whole-body read grew them by
 * 30-330 MB (which of the two shows it depends on what the allocator and GC did just before).
 */
const MAX_GROWTH_BYTES = 20 * 1024 * 1024;
/** A whole crawl (crawler, storage, sessions) adds 16-34 MB of RSS by itself; with the old read, 335 MB. */
const MAX_CRAWL_RSS_GROWTH_BYTES = 64 * 1024 * 1024;

/** `head`, then 100 MiB of `#` comment lines, gzipped (about 210 KB) without holding 100 MiB in memory. */
async function gzipBomb(head: string): Promise<Buffer> {
    const gzip = zlib.createGzip({ level: 9 });
    const parts: Buffer[] = [];
    gzip.on('data', (part: Buffer) => parts.push(part));
    const done = new Promise((resolve) => gzip.on('end', resolve));
    const line = `${'#'.repeat(1023)}\n`;
    const chunk = Buffer.from(line.repeat(1024));
    gzip.write(head);
    for (let written = 0; written < BOMB_INFLATED_BYTES; written += chunk.length) {
        if (!gzip.write(chunk)) await new Promise((resolve) => gzip.once('drain', resolve));
    }
    gzip.end();
    await done;
    return Buffer.concat(parts);
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

const servers: http.Server[] = [];
async function serve(handler: Handler): Promise<string> {
    const server = http.createServer(handler);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Writes HEAD, then `filler` every `everyMs` (0: as fast as the socket takes it), until the client goes away. */
function endless(filler: string, everyMs: number): Handler {
    return (_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.write(HEAD);
        const buffer = Buffer.from(filler);
        const timer = setInterval(() => {
            if (everyMs > 0) res.write(buffer);
            // Fill up to the socket's high-water mark, then wait for the next tick.
            else while (!res.destroyed && res.write(buffer));
        }, everyMs);
        res.on('close', () => clearInterval(timer));
    };
}

/**
 * Runs `work`, sampling memory every 5 ms; returns its result, the time taken and the peak growth of RSS
 * and of Buffer memory. RSS alone can miss a bomb when an earlier one left the pages mapped (the
 * allocator reuses them); Buffer memory counts live bytes whatever the process held before.
 */
async function measured<T>(work: () => Promise<T>): Promise<{ result: T; ms: number; rss: number; buffers: number }> {
    const before = process.memoryUsage();
    const peak = { rss: before.rss, arrayBuffers: before.arrayBuffers };
    const sample = () => {
        const now = process.memoryUsage();
        peak.rss = Math.max(peak.rss, now.rss);
        peak.arrayBuffers = Math.max(peak.arrayBuffers, now.arrayBuffers);
    };
    const sampler = setInterval(sample, 5);
    const started = Date.now();
    try {
        const result = await work();
        sample();
        const ms = Date.now() - started;
        return { result, ms, rss: peak.rss - before.rss, buffers: peak.arrayBuffers - before.arrayBuffers };
    } finally {
        clearInterval(sampler);
    }
}

let bombOrigin: string;
let plainEndlessOrigin: string;
let trickleOrigin: string;
let smallOrigin: string;

beforeAll(async () => {
    const bomb = await gzipBomb(HEAD);
    bombOrigin = await serve((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
        res.end(bomb);
    });
    plainEndlessOrigin = await serve(endless(`${'#'.repeat(1023)}\n`.repeat(64), 0));
    trickleOrigin = await serve(endless('#', 20));
    smallOrigin = await serve((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/plain' });
        res.end(HEAD);
    });
});

afterAll(async () => {
    await Promise.all(
        servers.map(
            (server) =>
                new Promise((resolve) => {
                    server.closeAllConnections();
                    server.close(resolve);
                }),
        ),
    );
});

const fetchers: Array<[string, () => RobotsFetcher]> = [
    ['the default got-scraping fetcher', () => fetchRobotsTxtWithGotScraping],
    ["the crawler's HTTP client (stream())", () => robotsFetcherOf({ httpClient: new GotScrapingHttpClient() })!],
];

describe.each(fetchers)('robots.txt body limits with %s', (_name, fetcherOf) => {
    const fetcher = fetcherOf();

    beforeAll(async () => {
        // Loads got-scraping and its header generator outside the measured fetches.
        await fetcher(`${smallOrigin}/robots.txt`, { timeoutMs: 10_000 });
    });

    test('a gzip bomb (100 MiB inflated) is inflated only up to 500 KiB: small memory growth, quick', async () => {
        const { result, rss, buffers, ms } = await measured(() =>
            fetcher(`${bombOrigin}/robots.txt`, { timeoutMs: 10_000 }),
        );

        expect(result.status).toBe(200);
        expect(Buffer.byteLength(result.body)).toBe(ROBOTS_TXT_MAX_BYTES);
        expect(rss).toBeLessThan(MAX_GROWTH_BYTES);
        expect(buffers).toBeLessThan(MAX_GROWTH_BYTES);
        expect(ms).toBeLessThan(5000);
        // The Crawl-delay at the start of the huge file still counts.
        expect(robotsVerdictFromResponse(result, `${bombOrigin}/robots.txt`)).toMatchObject({ delayMs: 2000 });
    });

    test('a fast body that never ends is cut at 500 KiB, long before the time limit', async () => {
        const { result, rss, buffers, ms } = await measured(() =>
            fetcher(`${plainEndlessOrigin}/robots.txt`, { timeoutMs: 10_000 }),
        );

        expect(Buffer.byteLength(result.body)).toBe(ROBOTS_TXT_MAX_BYTES);
        expect(result.body.startsWith(HEAD)).toBe(true);
        expect(rss).toBeLessThan(MAX_GROWTH_BYTES);
        expect(buffers).toBeLessThan(MAX_GROWTH_BYTES);
        expect(ms).toBeLessThan(5000);
    });

    test('a body that trickles forever stops at the time limit and keeps the lines that arrived', async () => {
        const timeoutMs = 600;
        const started = Date.now();

        const result = await fetcher(`${trickleOrigin}/robots.txt`, { timeoutMs });
        const ms = Date.now() - started;

        expect(ms).toBeGreaterThanOrEqual(timeoutMs - 10);
        expect(ms).toBeLessThan(timeoutMs + 1500);
        expect(result.status).toBe(200);
        expect(result.body.startsWith(HEAD)).toBe(true);
        expect(Buffer.byteLength(result.body)).toBeLessThan(ROBOTS_TXT_MAX_BYTES);
        expect(robotsVerdictFromResponse(result, `${trickleOrigin}/robots.txt`)).toMatchObject({ delayMs: 2000 });
    });

    test('through the cache: the Crawl-delay at the start of a gzip bomb is honoured', async () => {
        const cache = new RobotsCrawlDelayCache({ fetcher });

        const { result, rss, buffers } = await measured(() => cache.get(`${bombOrigin}/page`));

        expect(result).toEqual({ kind: 'crawlDelay', delayMs: 2000, capped: false, declaredSecs: 2 });
        expect(rss).toBeLessThan(MAX_GROWTH_BYTES);
        expect(buffers).toBeLessThan(MAX_GROWTH_BYTES);
    });
});

test('a crawler client with only sendRequest (which buffers whole bodies) is bypassed for the default streaming fetcher', async () => {
    const client = new GotScrapingHttpClient();
    let sent = 0;
    const sendOnly = {
        sendRequest: (async (request) => {
            sent++;
            return client.sendRequest(request);
        }) as GotScrapingHttpClient['sendRequest'],
    };
    const fetcher = robotsFetcherOf({ httpClient: sendOnly });
    const cache = new RobotsCrawlDelayCache({ fetcher });
    await cache.get(`${smallOrigin}/warm-up`);

    const { result, rss, buffers } = await measured(() => cache.get(`${bombOrigin}/page`));

    expect(fetcher).toBeUndefined();
    expect(sent).toBe(0);
    expect(result).toMatchObject({ kind: 'crawlDelay', delayMs: 2000 });
    expect(rss).toBeLessThan(MAX_GROWTH_BYTES);
    expect(buffers).toBeLessThan(MAX_GROWTH_BYTES);
});

test('an HttpCrawler crawl of 5 pages behind a gzip-bomb robots.txt: small memory growth, Crawl-delay kept', async () => {
    const bomb = await gzipBomb('User-agent: *\nCrawl-delay: 0.3\n');
    const pageTimes: number[] = [];
    const origin = await serve((req, res) => {
        if (req.url === '/robots.txt') {
            res.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
            res.end(bomb);
            return;
        }
        pageTimes.push(Date.now());
        res.writeHead(200, { 'content-type': 'text/html' });
        res.end(`<html><body>${req.url}</body></html>`);
    });
    const config = memoryConfig();
    const throttler = new ThrottlingRequestManager({ domains: 'all', maxDomainStallSecs: 30 }, config);
    const handled: string[] = [];
    const crawler = new HttpCrawler(
        {
            requestQueue: throttler.asRequestQueue(),
            maxConcurrency: 4,
            requestHandler: async ({ request }) => {
                handled.push(request.url);
            },
        },
        config,
    );
    throttler.attach(crawler);

    const { rss, buffers } = await measured(() =>
        crawler.run(Array.from({ length: 5 }, (_, i) => `${origin}/p${i + 1}`)),
    );

    expect(handled).toHaveLength(5);
    const gaps = pageTimes.slice(1).map((t, i) => t - pageTimes[i]);
    expect(gaps.filter((gap) => gap < 300)).toEqual([]);
    expect(rss).toBeLessThan(MAX_CRAWL_RSS_GROWTH_BYTES);
    expect(buffers).toBeLessThan(MAX_GROWTH_BYTES);
});
