import { request, type IncomingHttpHeaders } from 'node:http';
import type { PoliteWeb } from '@crawlee-throttling/polite-web';

export interface SimpleResponse {
    status: number;
    headers: IncomingHttpHeaders;
    body: string;
}

export interface GetOptions {
    /** `proxy`: absolute-form request line, as got-scraping sends through an http proxy; `host`: origin form + Host header. */
    via?: 'proxy' | 'host';
    /** Port to put in the Host header / absolute URL (ignored by the server). */
    hostPort?: number;
    method?: string;
    /** Extra request headers. */
    headers?: Record<string, string>;
}

/** One request on a fresh connection (agent: false) so concurrency tests really are concurrent. */
export function get(web: PoliteWeb, host: string, path = '/', options: GetOptions = {}): Promise<SimpleResponse> {
    const hostHeader = options.hostPort === undefined ? host : `${host}:${options.hostPort}`;
    const requestPath = options.via === 'host' ? path : `http://${hostHeader}${path}`;
    return new Promise((resolve, reject) => {
        const req = request(
            {
                host: '127.0.0.1',
                port: web.port,
                method: options.method ?? 'GET',
                path: requestPath,
                headers: { ...options.headers, host: hostHeader },
                agent: false,
            },
            (res) => {
                const chunks: Buffer[] = [];
                res.on('data', (chunk: Buffer) => chunks.push(chunk));
                res.on('end', () =>
                    resolve({
                        status: res.statusCode ?? 0,
                        headers: res.headers,
                        body: Buffer.concat(chunks).toString('utf8'),
                    }),
                );
                res.on('error', reject);
            },
        );
        req.on('error', reject);
        req.end();
    });
}

/** Hrefs of all links in a page. */
export function hrefs(html: string): string[] {
    return [...html.matchAll(/<a href="([^"]*)"/g)].map((m) => m[1]);
}

/** Waits until `predicate` holds, polling on the event loop (server-side 'close' events land a tick after the client sees the body). */
export async function eventually(predicate: () => boolean, timeoutMs = 2000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
        if (Date.now() > deadline) throw new Error('condition not met in time');
        await new Promise((resolve) => setTimeout(resolve, 5));
    }
}

/** A hand-driven clock for token bucket tests. */
export function manualClock(start = Date.UTC(2025, 0, 1, 12, 0, 0)): {
    now: () => number;
    advance: (ms: number) => void;
    set: (ms: number) => void;
} {
    let t = start;
    return { now: () => t, advance: (ms) => void (t += ms), set: (ms) => void (t = ms) };
}
