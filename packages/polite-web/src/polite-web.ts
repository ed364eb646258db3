import { Agent, createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { AddressInfo } from 'node:net';
import type { LogEntry } from './request-log';
import { requestTarget } from './request-target';
import { type ScoreOptions, type WebScore, scoreLog } from './score-log';
import { normalizeHost, type ResolvedSite, resolveSite, type SiteOptions } from './site-options';
import { SiteRuntime } from './site-runtime';

/** Options of {@link startPoliteWeb}. */
export interface PoliteWebOptions {
    /** The simulated sites; hosts must be unique. */
    sites: SiteOptions[];
    /**
     * Port on 127.0.0.1 to listen on.
     * @default 0 (a random free port)
     */
    port?: number;
    /**
     * Time source in epoch ms for token buckets and log timestamps; inject one to test without sleeping.
     * Latency still uses real timers.
     * @default Date.now
     */
    clock?: () => number;
}

/** A running local web. */
export interface PoliteWeb {
    /** `http://127.0.0.1:<port>`, for `new ProxyConfiguration({ proxyUrls: [web.proxyUrl] })`. */
    readonly proxyUrl: string;
    readonly port: number;
    /** The sites with defaults applied. */
    readonly sites: readonly ResolvedSite[];
    /** Every request since start or the last `resetLog()`, in arrival order. */
    readonly log: readonly LogEntry[];
    /** Public URL of a page, e.g. `url('shop-a.example', '/page/3')` → `http://shop-a.example/page/3`. */
    url(host: string, path?: string): string;
    /** Page requests of a site in flight right now. */
    inFlight(host: string): number;
    /** Most page requests of a site seen in flight at once (server side) since start or `resetLog()`. */
    maxInFlight(host: string): number;
    /** Starts a fresh log (earlier `log` arrays are left intact) and resets max-in-flight counters. */
    resetLog(): void;
    /**
     * `resetLog()` plus refills every token bucket, restarts rate-limit schedules and reseeds connection
     * resets, so runs against the same web start alike.
     */
    reset(): void;
    /** Scores the current log against the sites. */
    score(options?: ScoreOptions): WebScore;
    /** Stops listening, drops open connections and cancels pending delayed responses. */
    close(): Promise<void>;
}

function plainResponse(res: ServerResponse, status: number, body: string): void {
    res.writeHead(status, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
    res.end(body);
}

/**
 * Starts one HTTP server on 127.0.0.1 that serves every site, both as an origin (`Host:` header) and as an
 * HTTP forward proxy (absolute-form request lines), so a crawler can reach fake hostnames without DNS.
 */
export async function startPoliteWeb(options: PoliteWebOptions): Promise<PoliteWeb> {
    const clock = options.clock ?? Date.now;
    const timers = new Set<NodeJS.Timeout>();
    const rawSockets = new Set<Duplex>();
    let log: LogEntry[] = [];

    const runtimes = new Map<string, SiteRuntime>();
    const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
    const siteHost = {
        agent,
        clock,
        record: (entry: LogEntry) => void log.push(entry),
        delay: (ms: number, fn: () => void) => {
            const timer = setTimeout(() => {
                timers.delete(timer);
                fn();
            }, ms);
            timers.add(timer);
        },
    };
    for (const siteOptions of options.sites) {
        const site = resolveSite(siteOptions);
        if (runtimes.has(site.host)) throw new Error(`duplicate site host ${site.host}`);
        runtimes.set(site.host, new SiteRuntime(site, siteHost));
    }

    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
        const target = requestTarget(req);
        const runtime = runtimes.get(target.host);
        if (runtime) {
            runtime.handle(res, target, req);
            return;
        }
        log.push({ site: target.host, path: target.path, time: clock(), status: 502, inFlightAtArrival: 0 });
        plainResponse(res, 502, 'unknown site\n');
    });
    // Sites are http-only, so there is nothing to tunnel to; refusing also keeps any https URL from
    // being silently sent elsewhere.
    server.on('connect', (_req: IncomingMessage, socket: Duplex) => {
        // The socket is ours once 'connect' fires: the server no longer tracks it, so close() must, and an
        // unhandled reset on it would crash the process.
        rawSockets.add(socket);
        socket.once('close', () => rawSockets.delete(socket));
        socket.on('error', () => socket.destroy());
        const body = 'CONNECT not supported: polite-web sites are http only\n';
        socket.end(
            `HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\nConnection: close\r\n` +
                `Content-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
        );
    });
    // A client dropping mid-response must not crash the process hosting the tests.
    server.on('clientError', (_err, socket: Duplex) => {
        if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n');
        else socket.destroy();
    });

    await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.port ?? 0, '127.0.0.1', () => {
            server.off('error', reject);
            resolve();
        });
    });
    const { port } = server.address() as AddressInfo;
    const sites = [...runtimes.values()].map((r) => r.site);
    const resetLog = (): void => {
        log = [];
        for (const runtime of runtimes.values()) runtime.resetStats();
    };
    const runtimeOf = (host: string): SiteRuntime => {
        const runtime = runtimes.get(normalizeHost(host));
        if (!runtime) throw new Error(`unknown site ${host}`);
        return runtime;
    };

    return {
        proxyUrl: `http://127.0.0.1:${port}`,
        port,
        sites,
        get log() {
            return log;
        },
        url: (host, path = '/') => `http://${normalizeHost(host)}${path.startsWith('/') ? '' : '/'}${path}`,
        inFlight: (host) => runtimeOf(host).inFlight,
        maxInFlight: (host) => runtimeOf(host).maxInFlight,
        resetLog,
        reset() {
            resetLog();
            for (const runtime of runtimes.values()) runtime.restart();
        },
        score: (scoreOptions) => scoreLog(log, sites, scoreOptions),
        close: () =>
            new Promise<void>((resolve, reject) => {
                for (const timer of timers) clearTimeout(timer);
                timers.clear();
                server.close((err) => (err ? reject(err) : resolve()));
                // Keep-alive sockets from crawlers would otherwise hold close() open indefinitely.
                server.closeAllConnections();
                agent.destroy();
                for (const socket of rawSockets) socket.destroy();
            }),
    };
}
