import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

import express from 'express';
import { rateLimit } from 'express-rate-limit';
import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';

/** A limiter running in this process. */
export interface InProcessLimiter {
    readonly port: number;
    close(): Promise<void>;
}

function page(url: string): string {
    return `<!doctype html><html><head><title>${url}</title></head><body>page</body></html>\n`;
}

async function listen(server: Server): Promise<InProcessLimiter> {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
        port: (server.address() as AddressInfo).port,
        close: () =>
            new Promise<void>((resolve) => {
                server.closeAllConnections();
                server.close(() => resolve());
            }),
    };
}

/**
 * express-rate-limit v8 (memory store, fixed windows from each client's first request) in front of
 * pages answered after `latencyMs`: `draft-8` sends `RateLimit` / `RateLimit-Policy`, `legacy` the
 * `X-RateLimit-*` headers (reset in epoch seconds). Refusals are 429 with `Retry-After`.
 */
export function startExpressRateLimit(options: {
    limit: number;
    windowSecs: number;
    headers: 'draft-8' | 'legacy';
    latencyMs: number;
}): Promise<InProcessLimiter> {
    const app = express();
    app.use(
        rateLimit({
            windowMs: options.windowSecs * 1000,
            limit: options.limit,
            standardHeaders: options.headers === 'draft-8' ? 'draft-8' : false,
            legacyHeaders: options.headers === 'legacy',
            // Its start-up checks look for proxies and misconfigurations of a public deployment.
            validate: false,
        }),
    );
    app.use((req, res) => {
        setTimeout(() => res.type('html').send(page(req.url)), options.latencyMs);
    });
    return listen(createServer(app));
}

/**
 * rate-limiter-flexible's `RateLimiterMemory`: `points` requests per `durationSecs` from the first one,
 * every request consuming a point (refused ones too); a refusal is 429 with `Retry-After` in whole
 * seconds until points come back, as its documentation shows.
 */
export function startRateLimiterFlexible(options: {
    points: number;
    durationSecs: number;
    latencyMs: number;
}): Promise<InProcessLimiter> {
    const limiter = new RateLimiterMemory({ points: options.points, duration: options.durationSecs });
    const server = createServer((req, res) => {
        limiter.consume(req.socket.remoteAddress ?? 'client').then(
            () =>
                setTimeout(() => {
                    if (res.destroyed) return;
                    res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' });
                    res.end(page(req.url ?? '/'));
                }, options.latencyMs),
            (rejection: unknown) => {
                const waitMs = rejection instanceof RateLimiterRes ? rejection.msBeforeNext : 1000;
                res.writeHead(429, { 'Retry-After': String(Math.max(1, Math.ceil(waitMs / 1000))) });
                res.end('too many requests\n');
            },
        );
    });
    return listen(server);
}
