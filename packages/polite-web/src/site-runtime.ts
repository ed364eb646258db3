import { type Agent, type IncomingMessage, STATUS_CODES, type ServerResponse } from 'node:http';
import type { LogEntry } from './request-log';
import { rateLimitHeaders } from './rate-limit-headers';
import type { RequestTarget } from './request-target';
import { retryAfterValue } from './retry-after';
import { robotsTxt } from './robots-txt';
import type { ResolvedSite } from './site-options';
import { type PageResponse, sitePage } from './site-pages';
import { sendThenReset } from './connection-reset';
import { scheduleIsOn } from './rate-limit-schedule';
import { seededRandom } from './seeded-random';
import { TokenBucket } from './token-bucket';
import { FixedWindow } from './fixed-window';
import { WorkerQueue } from './worker-queue';
import { forwardToUpstream } from './upstream-forward';

/** What a site needs from the server that hosts it. */
export interface SiteHost {
    clock: () => number;
    record: (entry: LogEntry) => void;
    /** Runs `fn` after `ms`, cancelled if the server closes first. */
    delay: (ms: number, fn: () => void) => void;
    /** Keeps connections to `upstream` servers open between requests; destroyed when the web closes. */
    agent: Agent;
}

/** The mutable side of one site: its token bucket and in-flight accounting. */
export class SiteRuntime {
    private readonly bucket: TokenBucket | undefined;
    // The fixed-window quota of a `window` site.
    private readonly window: FixedWindow | undefined;
    // Workers and their queue of a `service` site.
    private readonly queue: WorkerQueue | undefined;
    private inFlightNow = 0;
    private maxInFlightSeen = 0;
    private scheduleStartedAt: number;
    private resetDraw: () => number;
    // Requests for /robots.txt since start or `restart()`, so its first ones can fail (`robots.failFirst`).
    private robotsRequests = 0;

    constructor(
        readonly site: ResolvedSite,
        private readonly server: SiteHost,
    ) {
        this.bucket = site.rate === undefined ? undefined : new TokenBucket(site.rate, site.burst, server.clock());
        const { window, service } = site;
        this.window = window && new FixedWindow(window.limit, window.windowSecs * 1000, window.start);
        this.queue = service && new WorkerQueue(service.workers, service.msPerPage, service.queueLimit);
        this.scheduleStartedAt = server.clock();
        this.resetDraw = seededRandom(site.connectionResets?.seed ?? 1);
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

    /** Refills the bucket, restarts the rate-limit schedule and reseeds the resets: a run starts as the first did. */
    restart(): void {
        this.resetBucket();
        this.window?.reset();
        this.queue?.reset();
        this.scheduleStartedAt = this.server.clock();
        this.resetDraw = seededRandom(this.site.connectionResets?.seed ?? 1);
        this.robotsRequests = 0;
    }

    handle(res: ServerResponse, target: RequestTarget, req?: IncomingMessage): void {
        const now = this.server.clock();
        const log = (
            status: number,
            inFlightAtArrival: number,
            flag?: 'reset' | 'refused',
            retryAfter?: string,
        ): LogEntry => {
            const entry: LogEntry = {
                site: this.site.host,
                path: target.path,
                time: now,
                status,
                inFlightAtArrival,
                ...(target.client === undefined ? {} : { client: target.client }),
                ...(flag ? { [flag]: true } : {}),
                ...(retryAfter === undefined ? {} : { retryAfter }),
            };
            this.server.record(entry);
            // 'close' also fires when the client goes away first; the first of the two is the answer's end.
            const done = (): void => {
                entry.respondedAt ??= this.server.clock();
            };
            res.once('finish', done);
            res.once('close', done);
            return entry;
        };

        // robots.txt is exempt from rate and concurrency limits: crawlers fetch it before they can know
        // the rules, and punishing that would only measure the simulator, not the crawler.
        if (target.pathname === '/robots.txt') {
            this.answerRobots(res, (status, reset) => log(status, this.inFlightNow, reset ? 'reset' : undefined));
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

        const upstream = this.site.upstream;
        if (upstream && req) {
            // The entry is logged once the upstream's status is known; its arrival time stays `now`.
            const to = { port: upstream.port, path: target.path, host: this.site.host, agent: this.server.agent };
            forwardToUpstream(req, res, to, (status, headers) => {
                const refused = upstream.refusalStatuses.includes(status);
                const retryAfter = headers['retry-after'];
                log(status, inFlightAtArrival, refused ? 'refused' : undefined, retryAfter);
            });
            return;
        }

        // Concurrency is checked first and refuses without spending a token, so an overloaded server
        // does not also eat into the client's rate budget.
        const overloaded = this.site.maxConcurrent !== undefined && inFlightAtArrival > this.site.maxConcurrent;
        const bucket = this.limitingBucket(now);
        const overQuota = (bucket && !bucket.tryTake(now)) || (this.window && !this.window.tryTake(now));
        const admission = overloaded || overQuota ? undefined : this.queue?.admit(now);
        if (overloaded || overQuota || admission?.admitted === false) {
            const headers = this.refusalHeaders(now);
            log(this.site.refusal.status, inFlightAtArrival, 'refused', headers['Retry-After']);
            this.refuse(res, headers);
            return;
        }
        // Time in the worker queue plus the page's work; the site's latency comes on top.
        const latencyMs = (admission?.admitted ? admission.doneAt - now : 0) + this.site.latencyMs;

        const page = sitePage(this.site, target.pathname);
        const resets = this.site.connectionResets;
        // Drawn for every served page, so which ones are cut depends only on the seed and arrival order.
        if (resets && this.resetDraw() < resets.share) {
            log(page.status, inFlightAtArrival, 'reset');
            const headers = this.quotaHeaders(now);
            this.delayed(latencyMs, () => sendThenReset(res, page, headers));
            return;
        }
        log(page.status, inFlightAtArrival);
        this.send(res, page, this.quotaHeaders(now), latencyMs);
    }

    /** robots.txt, or one of the failures its first requests meet (`robots.failFirst`). */
    private answerRobots(res: ServerResponse, log: (status: number, reset?: boolean) => void): void {
        const robots = robotsTxt(this.site);
        const fail = this.site.robots?.failFirst;
        const attempt = this.robotsRequests++;
        if (!fail || attempt >= fail.times) {
            log(robots.status);
            this.send(res, robots, {}, this.site.latencyMs);
        } else if (fail.reset) {
            log(robots.status, true);
            this.delayed(this.site.latencyMs, () => sendThenReset(res, robots, {}));
        } else {
            const status = fail.status ?? 503;
            const headers: Record<string, string> =
                fail.retryAfterSecs === undefined ? {} : { 'Retry-After': String(fail.retryAfterSecs) };
            log(status);
            const body = `${STATUS_CODES[status] ?? 'error'}\n`;
            this.send(res, { status, contentType: 'text/plain; charset=utf-8', body }, headers, this.site.latencyMs);
        }
    }

    /** A refusal's headers at `now`: the quota's, and `Retry-After` in the site's style. */
    private refusalHeaders(now: number): Record<string, string> {
        const headers = this.quotaHeaders(now);
        const msUntilToken = this.limitingBucket(now)?.msUntilToken(now) ?? this.window?.msUntilReset(now) ?? 0;
        const retryAfter = retryAfterValue(this.site.refusal.retryAfter, msUntilToken, now);
        if (retryAfter !== undefined) headers['Retry-After'] = retryAfter;
        return headers;
    }

    private refuse(res: ServerResponse, headers: Record<string, string>): void {
        const { status, contentType } = this.site.refusal;
        const body = this.site.refusal.body ?? refusalText(status);
        this.send(res, { status, contentType, body }, headers, 0);
    }

    /** The token bucket when the rate limit applies at `now`: always, or in the "on" spells of its schedule. */
    private limitingBucket(now: number): TokenBucket | undefined {
        const schedule = this.site.rateLimitSchedule;
        if (schedule && !scheduleIsOn(schedule, this.scheduleStartedAt, now)) return undefined;
        return this.bucket;
    }

    private delayed(latencyMs: number, fn: () => void): void {
        if (latencyMs > 0) this.server.delay(latencyMs, fn);
        else fn();
    }

    private quotaHeaders(now: number): Record<string, string> {
        const window = this.window;
        if (window) {
            const remaining = window.remaining(now);
            return rateLimitHeaders(this.site.refusal.rateLimitHeaders, {
                limit: window.limit,
                remaining,
                resetMs: window.msUntilReset(now),
                windowSeconds: Math.ceil(window.windowMs / 1000),
                now,
                used: window.limit - remaining,
            });
        }
        const bucket = this.limitingBucket(now);
        if (!bucket) return {};
        return rateLimitHeaders(this.site.refusal.rateLimitHeaders, {
            limit: bucket.burst,
            remaining: bucket.remaining(now),
            resetMs: bucket.msUntilFull(now),
            windowSeconds: Math.max(1, Math.ceil(bucket.burst / bucket.rate)),
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
        this.delayed(latencyMs, write);
    }
}

function refusalText(status: number): string {
    if (status === 429) return 'too many requests\n';
    if (status === 503) return 'service unavailable\n';
    return `${STATUS_CODES[status] ?? 'refused'}\n`;
}
