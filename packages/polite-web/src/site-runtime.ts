import type { ServerResponse } from 'node:http';
import type { LogEntry } from './request-log';
import { rateLimitHeaders } from './rate-limit-headers';
import type { RequestTarget } from './request-target';
import { retryAfterValue } from './retry-after';
import { robotsTxt } from './robots-txt';
import type { ResolvedSite } from './site-options';
import { type PageResponse, sitePage } from './site-pages';
import { TokenBucket } from './token-bucket';

/** What a site needs from the server that hosts it. */
export interface SiteHost {
    clock: () => number;
    record: (entry: LogEntry) => void;
    /** Runs `fn` after `ms`, cancelled if the server closes first. */
    delay: (ms: number, fn: () => void) => void;
}

/** The mutable side of one site: its token bucket and in-flight accounting. */
export class SiteRuntime {
    private readonly bucket: TokenBucket | undefined;
    private inFlightNow = 0;
    private maxInFlightSeen = 0;

    constructor(
        readonly site: ResolvedSite,
        private readonly server: SiteHost,
    ) {
        this.bucket = site.rate === undefined ? undefined : new TokenBucket(site.rate, site.burst, server.clock());
    }

    /** Page requests currently being answered. */
    get inFlight(): number {
        return this.inFlightNow;
    }

    /** Most page requests seen in flight at once since start or the last `resetStats`. */
    get maxInFlight(): number {
        return this.maxInFlightSeen;
    }

    resetStats(): void {
        this.maxInFlightSeen = this.inFlightNow;
    }

    resetBucket(): void {
        this.bucket?.reset(this.server.clock());
    }

    handle(res: ServerResponse, target: RequestTarget): void {
        const now = this.server.clock();
        const log = (status: number, inFlightAtArrival: number): void =>
            this.server.record({ site: this.site.host, path: target.path, time: now, status, inFlightAtArrival });

        // robots.txt is exempt from rate and concurrency limits: crawlers fetch it before they can know
        // the rules, and punishing that would only measure the simulator, not the crawler.
        if (target.pathname === '/robots.txt') {
            const robots = robotsTxt(this.site);
            log(robots.status, this.inFlightNow);
            this.send(res, robots, {}, this.site.latencyMs);
            return;
        }

        this.inFlightNow += 1;
        this.maxInFlightSeen = Math.max(this.maxInFlightSeen, this.inFlightNow);
        const inFlightAtArrival = this.inFlightNow;
        let released = false;
        const release = (): void => {
            if (released) return;
            released = true;
            this.inFlightNow -= 1;
        };
        res.once('close', release);
        res.once('finish', release);

        // Concurrency is checked first and refuses without spending a token, so an overloaded server
        // does not also eat into the client's rate budget.
        const overloaded = this.site.maxConcurrent !== undefined && inFlightAtArrival > this.site.maxConcurrent;
        if (overloaded || (this.bucket && !this.bucket.tryTake(now))) {
            const { status } = this.site.refusal;
            log(status, inFlightAtArrival);
            const headers = this.quotaHeaders(now);
            const retryAfter = retryAfterValue(this.site.refusal.retryAfter, this.bucket?.msUntilToken(now) ?? 0, now);
            if (retryAfter !== undefined) headers['Retry-After'] = retryAfter;
            const body = status === 429 ? 'too many requests\n' : 'service unavailable\n';
            this.send(res, { status, contentType: 'text/plain; charset=utf-8', body }, headers, 0);
            return;
        }

        const page = sitePage(this.site, target.pathname);
        log(page.status, inFlightAtArrival);
        this.send(res, page, this.quotaHeaders(now), this.site.latencyMs);
    }

    private quotaHeaders(now: number): Record<string, string> {
        if (!this.bucket) return {};
        return rateLimitHeaders(this.site.refusal.rateLimitHeaders, {
            limit: this.bucket.burst,
            remaining: this.bucket.remaining(now),
            resetMs: this.bucket.msUntilFull(now),
            windowSeconds: Math.max(1, Math.ceil(this.bucket.burst / this.bucket.rate)),
            now,
        });
    }

    private send(res: ServerResponse, page: PageResponse, headers: Record<string, string>, latencyMs: number): void {
        const write = (): void => {
            if (res.destroyed) return;
            res.writeHead(page.status, {
                ...headers,
                'Content-Type': page.contentType,
                'Content-Length': Buffer.byteLength(page.body),
            });
            res.end(page.body);
        };
        if (latencyMs > 0) this.server.delay(latencyMs, write);
        else write();
    }
}
