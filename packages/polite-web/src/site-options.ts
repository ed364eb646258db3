import type { WindowStart } from './fixed-window';

/** How a refusal tells the client when to come back. */
export type RetryAfterStyle = 'seconds' | 'http-date' | 'none';

/** Which family of rate-limit headers a site advertises. */
export type RateLimitHeaderStyle = 'none' | 'ietf' | 'legacy' | 'x-ratelimit' | 'draft-8' | 'github';

/** What a site answers when it refuses a request (rate limit exceeded or overloaded). */
export interface RefusalOptions {
    /**
     * Status code of a refusal: 429 or 503 as most sites, or another one a crawler must be told about,
     * such as Shopify's 430, or 200 for a "slow down" page served as a success.
     */
    status: number;
    /**
     * Form of the `Retry-After` header: delta seconds until a token is available (rounded up, at least 1),
     * an HTTP-date of that moment, or no header at all.
     * @default 'seconds'
     */
    retryAfter?: RetryAfterStyle;
    /**
     * Rate-limit headers sent on every response of a rate-limited site (successes included):
     * - `ietf`: `RateLimit-Policy: "default";q=<burst>;w=<window>` and `RateLimit: "default";r=<remaining>;t=<reset>`
     * - `legacy`: `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` (delta seconds)
     * - `x-ratelimit`: `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (epoch seconds),
     *   as express-rate-limit's `legacyHeaders`
     * - `draft-8`: express-rate-limit v8's `standardHeaders: 'draft-8'`:
     *   `RateLimit-Policy: "<q>-in-<w>sec"; q=<q>; w=<w>; pk=:…:` and `RateLimit: "<q>-in-<w>sec"; r=<remaining>; t=<reset>`
     * - `github`: GitHub's `X-RateLimit-Limit`, `-Remaining`, `-Used`, `-Reset` (epoch seconds) and `-Resource`
     *
     * On a `window` site they tell the truth about the window (its limit, what is left, when it ends); on a
     * token-bucket site they state the bucket (capacity, whole tokens left, time until full).
     * @default 'none'
     */
    rateLimitHeaders?: RateLimitHeaderStyle;
    /**
     * Body of a refusal, e.g. a challenge page.
     * @default 'too many requests' for a 429, 'service unavailable' for a 503, the status text otherwise
     */
    body?: string;
    /**
     * `Content-Type` of a refusal.
     * @default 'text/plain; charset=utf-8'
     */
    contentType?: string;
}

/**
 * Switches a site's rate limit on and off over time, as limits that are tightened under load and lifted
 * again. The cycle starts "on" when the web starts (and again on `reset()`): `onMs` limited, then `offMs`
 * unlimited, repeating.
 */
export interface RateLimitSchedule {
    /** How long each limited spell lasts, ms. */
    onMs: number;
    /** How long each unlimited spell lasts, ms. */
    offMs: number;
    /**
     * How far into the cycle the site starts, ms, so sites sharing one schedule need not switch together.
     * @default 0
     */
    phaseMs?: number;
}

/** Connections reset in the middle of a response: headers and half the body are sent, then a TCP RST. */
export interface ConnectionResetOptions {
    /** Share of page responses (not refusals, not robots.txt) cut off, in [0, 1]. */
    share: number;
    /**
     * Seed of the random source that picks them, so a run can be repeated.
     * @default 1
     */
    seed?: number;
}

/** A fixed-window quota: at most `limit` requests per `windowSecs`, every request counted (refused ones too). */
export interface WindowLimit {
    /** Requests allowed per window. */
    limit: number;
    /** Window length, seconds. */
    windowSecs: number;
    /**
     * When windows start: at the client's first request after the last window ended (express-rate-limit's
     * memory store), or aligned on the epoch (GitHub-like hourly quotas).
     * @default 'first-request'
     */
    start?: WindowStart;
}

/**
 * A server that slows down under load instead of refusing: `workers` workers take `msPerPage` each from
 * one FIFO queue, so a page's response time is its wait plus `msPerPage`.
 */
export interface ServiceOptions {
    /** Requests served at once. */
    workers: number;
    /** Time one worker spends on a page, ms. */
    msPerPage: number;
    /**
     * Most requests waiting for a worker; one more is refused with `refusal.status` (say 503).
     * @default undefined (the queue grows without bound; nothing is refused)
     */
    queueLimit?: number;
}

/**
 * Forwards the site's requests to a real server on 127.0.0.1 (an nginx, haproxy or Node rate limiter),
 * with the site's hostname as `Host`, and logs what it answers: the web then acts as a transparent proxy
 * in front of a limiter it did not write. `rate`, `window`, `service`, `maxConcurrent`, `latencyMs` and
 * `connectionResets` do not apply; robots.txt is answered by the web itself.
 */
export interface UpstreamOptions {
    /** Port on 127.0.0.1. */
    port: number;
    /**
     * Upstream statuses logged as refusals.
     * @default [429, 503]
     */
    refusalStatuses?: readonly number[];
}

/** Replaces the generated /robots.txt. */
export interface RobotsOverride {
    /** @default 200 */
    status?: number;
    /** @default the generated robots.txt when status is 2xx, otherwise a one-line status text */
    body?: string;
    /**
     * The first `times` requests for /robots.txt fail before the file (or the override above) is served,
     * as a robots.txt that is down for a while. Counted from start and again from `reset()`.
     */
    failFirst?: RobotsFailures;
}

/** How the first requests for /robots.txt fail (see {@link RobotsOverride.failFirst}). */
export interface RobotsFailures {
    /** How many requests fail. */
    times: number;
    /**
     * Status of the failed answers.
     * @default 503
     */
    status?: number;
    /** Sends `Retry-After: <seconds>` with each failed answer. */
    retryAfterSecs?: number;
    /**
     * Instead of an answer, the file's response is cut off mid-body with a TCP reset (a network error).
     * @default false
     */
    reset?: boolean;
}

/** One simulated site. */
export interface SiteOptions {
    /** Hostname the site answers to, e.g. `shop-a.example` (matched case-insensitively, port ignored). */
    host: string;
    /**
     * Sustained rate in requests per second (token bucket refill rate).
     * @default undefined (unlimited)
     */
    rate?: number;
    /**
     * Token bucket capacity: how many requests may arrive back to back after a quiet period.
     * Only meaningful with `rate`.
     * @default 1
     */
    burst?: number;
    /**
     * How the site refuses requests over its rate or concurrency limit.
     * @default { status: 429, retryAfter: 'seconds', rateLimitHeaders: 'none' }
     */
    refusal?: RefusalOptions;
    /**
     * A fixed-window quota instead of a token bucket (not with `rate`); rate-limit headers then describe it.
     * @default undefined
     */
    window?: WindowLimit;
    /**
     * Workers and a FIFO queue: response times grow with load (see {@link ServiceOptions}).
     * @default undefined (every request is answered after `latencyMs`, however many are in flight)
     */
    service?: ServiceOptions;
    /**
     * Forward to a real server instead of simulating one (see {@link UpstreamOptions}).
     * @default undefined
     */
    upstream?: UpstreamOptions;
    /**
     * Delay before every non-refused response (pages, 404s, robots.txt), in milliseconds.
     * Refusals are immediate, like a rate limiter at the edge that rejects before doing any work.
     * @default 0
     */
    latencyMs?: number;
    /**
     * Page requests allowed in flight at once; more are refused with `refusal.status` (an overloaded server).
     * @default undefined (no limit)
     */
    maxConcurrent?: number;
    /**
     * Seconds between requests the site asks for, emitted as `Crawl-delay` in /robots.txt (fractions allowed).
     * Only advertised: enforcement is the token bucket's job; the score counts violations.
     * @default undefined (no Crawl-delay line)
     */
    crawlDelay?: number;
    /**
     * Replaces /robots.txt entirely (e.g. `{ status: 404 }` or `{ status: 500 }`).
     * @default undefined (generated robots.txt allowing everything)
     */
    robots?: RobotsOverride;
    /**
     * Number of pages `/page/0` … `/page/<pages-1>`; higher numbers answer 404.
     * @default 10
     */
    pages?: number;
    /**
     * Hosts of other sites whose `/` every page of this site links to, so crawlers discover domains.
     * @default []
     */
    crossLinks?: string[];
    /**
     * Applies the `rate` limit only in "on" spells of this schedule; in "off" spells the site is unlimited
     * (no token spent, no rate-limit headers). Needs `rate`.
     * @default undefined (the rate limit always applies)
     */
    rateLimitSchedule?: RateLimitSchedule;
    /**
     * Resets the connection in the middle of some page responses.
     * @default undefined (no resets)
     */
    connectionResets?: ConnectionResetOptions;
}

/** Site options with defaults applied and the host normalised. */
export interface ResolvedSite {
    readonly host: string;
    readonly rate: number | undefined;
    readonly burst: number;
    readonly window: Readonly<Required<WindowLimit>> | undefined;
    readonly service: Readonly<ServiceOptions> | undefined;
    readonly upstream: Readonly<Required<UpstreamOptions>> | undefined;
    readonly refusal: Readonly<Required<Omit<RefusalOptions, 'body'>>> & { readonly body?: string };
    readonly latencyMs: number;
    readonly maxConcurrent: number | undefined;
    readonly crawlDelay: number | undefined;
    readonly robots: Readonly<RobotsOverride> | undefined;
    readonly pages: number;
    readonly crossLinks: readonly string[];
    readonly rateLimitSchedule: Readonly<Required<RateLimitSchedule>> | undefined;
    readonly connectionResets: Readonly<Required<ConnectionResetOptions>> | undefined;
}

/** Lower-cases and strips a trailing dot so `Shop-A.Example.` and `shop-a.example` are one site. */
export function normalizeHost(host: string): string {
    return host.trim().toLowerCase().replace(/\.$/, '');
}

function assertNonNegative(value: number | undefined, name: string, host: string): void {
    if (value !== undefined && !(Number.isFinite(value) && value >= 0)) {
        throw new RangeError(`site ${host}: ${name} must be a finite number >= 0, got ${value}`);
    }
}

function resolveSchedule(options: SiteOptions, host: string): Required<RateLimitSchedule> | undefined {
    const schedule = options.rateLimitSchedule;
    if (schedule === undefined) return undefined;
    if (options.rate === undefined) {
        throw new TypeError(`site ${host}: rateLimitSchedule needs a rate to switch on and off`);
    }
    for (const key of ['onMs', 'offMs'] as const) {
        const value = schedule[key];
        if (!(Number.isFinite(value) && value > 0)) {
            throw new RangeError(`site ${host}: rateLimitSchedule.${key} must be a finite number > 0, got ${value}`);
        }
    }
    assertNonNegative(schedule.phaseMs, 'rateLimitSchedule.phaseMs', host);
    return { onMs: schedule.onMs, offMs: schedule.offMs, phaseMs: schedule.phaseMs ?? 0 };
}

function assertStatus(value: number | undefined, name: string, host: string): void {
    if (value !== undefined && !(Number.isInteger(value) && value >= 100 && value <= 599)) {
        throw new RangeError(`site ${host}: ${name} must be an HTTP status code (100-599), got ${value}`);
    }
}

function resolveRobots(robots: RobotsOverride | undefined, host: string): RobotsOverride | undefined {
    if (robots === undefined) return undefined;
    assertStatus(robots.status, 'robots.status', host);
    const fail = robots.failFirst;
    if (fail === undefined) return { ...robots };
    if (!(Number.isInteger(fail.times) && fail.times >= 0)) {
        throw new RangeError(`site ${host}: robots.failFirst.times must be an integer >= 0, got ${fail.times}`);
    }
    assertStatus(fail.status, 'robots.failFirst.status', host);
    assertNonNegative(fail.retryAfterSecs, 'robots.failFirst.retryAfterSecs', host);
    return { ...robots, failFirst: { ...fail } };
}

function resolveResets(
    resets: ConnectionResetOptions | undefined,
    host: string,
): Required<ConnectionResetOptions> | undefined {
    if (resets === undefined) return undefined;
    if (!(Number.isFinite(resets.share) && resets.share >= 0 && resets.share <= 1)) {
        throw new RangeError(`site ${host}: connectionResets.share must be a number in [0, 1], got ${resets.share}`);
    }
    const seed = resets.seed ?? 1;
    if (!Number.isInteger(seed)) {
        throw new RangeError(`site ${host}: connectionResets.seed must be an integer, got ${resets.seed}`);
    }
    return { share: resets.share, seed };
}

function positiveInteger(value: number, name: string, host: string): void {
    if (!(Number.isInteger(value) && value >= 1)) {
        throw new RangeError(`site ${host}: ${name} must be an integer >= 1, got ${value}`);
    }
}

function resolveWindow(options: SiteOptions, host: string): Required<WindowLimit> | undefined {
    const window = options.window;
    if (window === undefined) return undefined;
    if (options.rate !== undefined) {
        throw new TypeError(`site ${host}: window and rate are two limiters; give one of them`);
    }
    positiveInteger(window.limit, 'window.limit', host);
    if (!(Number.isFinite(window.windowSecs) && window.windowSecs > 0)) {
        throw new RangeError(`site ${host}: window.windowSecs must be a finite number > 0, got ${window.windowSecs}`);
    }
    const start = window.start ?? 'first-request';
    if (start !== 'first-request' && start !== 'epoch') {
        throw new RangeError(`site ${host}: window.start must be 'first-request' or 'epoch', got ${String(start)}`);
    }
    return { limit: window.limit, windowSecs: window.windowSecs, start };
}

function resolveService(service: ServiceOptions | undefined, host: string): ServiceOptions | undefined {
    if (service === undefined) return undefined;
    positiveInteger(service.workers, 'service.workers', host);
    assertNonNegative(service.msPerPage, 'service.msPerPage', host);
    if (service.msPerPage === undefined) throw new RangeError(`site ${host}: service.msPerPage is required`);
    if (service.queueLimit !== undefined && !(Number.isInteger(service.queueLimit) && service.queueLimit >= 0)) {
        throw new RangeError(`site ${host}: service.queueLimit must be an integer >= 0, got ${service.queueLimit}`);
    }
    return { ...service };
}

function resolveUpstream(upstream: UpstreamOptions | undefined, host: string): Required<UpstreamOptions> | undefined {
    if (upstream === undefined) return undefined;
    if (!(Number.isInteger(upstream.port) && upstream.port >= 1 && upstream.port <= 65535)) {
        throw new RangeError(`site ${host}: upstream.port must be a port number (1-65535), got ${upstream.port}`);
    }
    const refusalStatuses = upstream.refusalStatuses ?? [429, 503];
    refusalStatuses.forEach((status) => assertStatus(status, 'upstream.refusalStatuses', host));
    return { port: upstream.port, refusalStatuses: [...refusalStatuses] };
}

/** Applies defaults and rejects configurations that would make the simulation meaningless. */
export function resolveSite(options: SiteOptions): ResolvedSite {
    const host = normalizeHost(options.host);
    if (!host || /[/:\s]/.test(host)) {
        throw new TypeError(`site host must be a bare hostname, got "${options.host}"`);
    }
    if (options.rate !== undefined && !(Number.isFinite(options.rate) && options.rate > 0)) {
        throw new RangeError(`site ${host}: rate must be a finite number > 0, got ${options.rate}`);
    }
    const burst = options.burst ?? 1;
    if (!(Number.isInteger(burst) && burst >= 1)) {
        throw new RangeError(`site ${host}: burst must be an integer >= 1, got ${burst}`);
    }
    assertNonNegative(options.latencyMs, 'latencyMs', host);
    assertNonNegative(options.crawlDelay, 'crawlDelay', host);
    if (
        options.maxConcurrent !== undefined &&
        !(Number.isInteger(options.maxConcurrent) && options.maxConcurrent >= 1)
    ) {
        throw new RangeError(`site ${host}: maxConcurrent must be an integer >= 1, got ${options.maxConcurrent}`);
    }
    assertStatus(options.refusal?.status, 'refusal.status', host);
    const pages = options.pages ?? 10;
    if (!(Number.isInteger(pages) && pages >= 0)) {
        throw new RangeError(`site ${host}: pages must be an integer >= 0, got ${pages}`);
    }
    return {
        host,
        rate: options.rate,
        burst,
        window: resolveWindow(options, host),
        service: resolveService(options.service, host),
        upstream: resolveUpstream(options.upstream, host),
        refusal: {
            status: options.refusal?.status ?? 429,
            retryAfter: options.refusal?.retryAfter ?? 'seconds',
            rateLimitHeaders: options.refusal?.rateLimitHeaders ?? 'none',
            contentType: options.refusal?.contentType ?? 'text/plain; charset=utf-8',
            ...(options.refusal?.body === undefined ? {} : { body: options.refusal.body }),
        },
        latencyMs: options.latencyMs ?? 0,
        maxConcurrent: options.maxConcurrent,
        crawlDelay: options.crawlDelay,
        robots: resolveRobots(options.robots, host),
        pages,
        crossLinks: (options.crossLinks ?? []).map(normalizeHost),
        rateLimitSchedule: resolveSchedule(options, host),
        connectionResets: resolveResets(options.connectionResets, host),
    };
}
