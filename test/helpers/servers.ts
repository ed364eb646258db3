import http from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the server saw it. */
export interface LoggedRequest {
    /** Request path including the query string (`/robots.txt`, `/page/3`). */
    path: string;
    /** Arrival time, epoch ms (taken when the request headers arrived). */
    at: number;
    /** Status sent back; undefined until the reply was written. */
    status?: number;
    userAgent?: string;
}

/** What the server answers. */
export interface Reply {
    /** @default 200 */
    status?: number;
    headers?: http.OutgoingHttpHeaders;
    /** @default a small HTML page naming the path */
    body?: string;
}

/** Passed to a page handler for each request. */
export interface PageRequest {
    path: string;
    /** 1-based number of this request among the server's non-robots.txt requests. */
    n: number;
    req: http.IncomingMessage;
}

export type PageHandler = (request: PageRequest) => Reply | Promise<Reply>;

export interface StartServerOptions {
    /** Loopback address to listen on (the whole 127.0.0.0/8 works on Linux): one host = one throttled domain. */
    host?: string;
    /** Answers every path but `/robots.txt`. @default 200 with a small HTML page */
    handler?: PageHandler;
    /** How `/robots.txt` is answered; a function is called per fetch. @default 404 */
    robots?: Reply | ((n: number) => Reply);
}

export interface TestServer {
    host: string;
    port: number;
    /** `http://<host>:<port>` */
    origin: string;
    /** Absolute URL of a path on this server. */
    url(path: string): string;
    /** Every request, robots.txt included, in arrival order. */
    readonly log: LoggedRequest[];
    /** Requests other than `/robots.txt`. */
    pages(): LoggedRequest[];
    /** `/robots.txt` requests. */
    robots(): LoggedRequest[];
    close(): Promise<void>;
}

/** A minimal HTML page. */
export function htmlPage(title: string): string {
    return `<!doctype html><html><head><title>${title}</title></head><body><h1>${title}</h1></body></html>`;
}

/** Starts an HTTP server on `host` (default 127.0.0.1), port 0, logging every request. */
export async function startServer(options: StartServerOptions = {}): Promise<TestServer> {
    const host = options.host ?? '127.0.0.1';
    const log: LoggedRequest[] = [];
    let pageCount = 0;
    let robotsCount = 0;

    const server = http.createServer((req, res) => {
        const entry: LoggedRequest = { path: req.url ?? '', at: Date.now(), userAgent: req.headers['user-agent'] };
        log.push(entry);
        const send = (reply: Reply) => {
            const status = reply.status ?? 200;
            entry.status = status;
            const body = reply.body ?? (status === 404 ? 'not found' : htmlPage(entry.path));
            res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', ...reply.headers });
            res.end(body);
        };
        const fail = (error: unknown) => {
            entry.status = 500;
            res.writeHead(500, { 'content-type': 'text/plain' });
            res.end(String(error));
        };
        try {
            if (entry.path === '/robots.txt') {
                robotsCount += 1;
                const robots = options.robots;
                send(typeof robots === 'function' ? robots(robotsCount) : (robots ?? { status: 404 }));
                return;
            }
            pageCount += 1;
            const handler = options.handler ?? (() => ({}));
            Promise.resolve(handler({ path: entry.path, n: pageCount, req })).then(send, fail);
        } catch (error) {
            fail(error);
        }
    });
    await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(0, host, () => {
            server.off('error', reject);
            resolve();
        });
    });
    const { port } = server.address() as AddressInfo;
    const origin = `http://${host}:${port}`;
    let closing: Promise<void> | undefined;
    return {
        host,
        port,
        origin,
        url: (path) => `${origin}${path.startsWith('/') ? path : `/${path}`}`,
        log,
        pages: () => log.filter((e) => e.path !== '/robots.txt'),
        robots: () => log.filter((e) => e.path === '/robots.txt'),
        close: () =>
            (closing ??= new Promise<void>((resolve, reject) => {
                // Keep-alive sockets (got's agent, a browser) would otherwise hold close() open.
                server.closeAllConnections();
                server.close((error) => (error ? reject(error) : resolve()));
            })),
    };
}

/** Answers 429 (with `Retry-After` when given) to every second page request, 200 otherwise. */
export function refuseEverySecond(retryAfter?: string): PageHandler {
    return ({ n }) =>
        n % 2 === 0
            ? { status: 429, headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter }, body: 'slow down' }
            : {};
}

/** Answers 429 to the first request of each path, 200 afterwards. */
export function refuseFirstPerPath(headers: (path: string) => http.OutgoingHttpHeaders = () => ({})): PageHandler {
    const seen = new Set<string>();
    return ({ path }) => {
        if (seen.has(path)) return {};
        seen.add(path);
        return { status: 429, headers: headers(path), body: 'slow down' };
    };
}

/** For each refused request (status `status`), when the next request for the same path arrived. */
export function retriesAfterRefusals(
    log: readonly LoggedRequest[],
    status = 429,
): { path: string; refusedAt: number; retriedAt?: number }[] {
    return log.flatMap((entry, i) => {
        if (entry.status !== status) return [];
        const next = log.slice(i + 1).find((e) => e.path === entry.path);
        return [{ path: entry.path, refusedAt: entry.at, retriedAt: next?.at }];
    });
}

/** Most requests in any window of `windowMs` (sliding, starting at each request). */
export function maxInWindow(log: readonly LoggedRequest[], windowMs: number): number {
    const times = log.map((e) => e.at).sort((a, b) => a - b);
    let best = 0;
    let j = 0;
    for (let i = 0; i < times.length; i++) {
        while (times[i] - times[j] >= windowMs) j++;
        best = Math.max(best, i - j + 1);
    }
    return best;
}

/** Watches a promise: `settled` turns true once it resolves or rejects (the rejection is kept, not thrown). */
export function watchSettlement<T>(promise: Promise<T>): {
    readonly settled: boolean;
    readonly outcome: Promise<{ value?: T; error?: unknown }>;
} {
    const state = { settled: false };
    const outcome = promise.then(
        (value) => {
            state.settled = true;
            return { value };
        },
        (error: unknown) => {
            state.settled = true;
            return { error };
        },
    );
    return {
        get settled() {
            return state.settled;
        },
        outcome,
    };
}
