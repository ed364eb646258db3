/** How a refusal tells the client when to come back. */
export type RetryAfterStyle = 'seconds' | 'http-date' | 'none';

/** Which family of rate-limit headers a site advertises. */
export type RateLimitHeaderStyle = 'none' | 'ietf' | 'legacy' | 'x-ratelimit';

/** What a site answers when it refuses a request (rate limit exceeded or overloaded). */
export interface RefusalOptions {
    /** Status code of a refusal. */
    status: 429 | 503;
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
     * - `x-ratelimit`: `X-RateLimit-Limit`, `X-RateLimit-Remaining`, `X-RateLimit-Reset` (epoch seconds)
     * @default 'none'
     */
    rateLimitHeaders?: RateLimitHeaderStyle;
}

/** Replaces the generated /robots.txt. */
export interface RobotsOverride {
    /** @default 200 */
    status?: number;
    /** @default the generated robots.txt when status is 2xx, otherwise a one-line status text */
    body?: string;
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
}

/** Site options with defaults applied and the host normalised. */
export interface ResolvedSite {
    readonly host: string;
    readonly rate: number | undefined;
    readonly burst: number;
    readonly refusal: Readonly<Required<RefusalOptions>>;
    readonly latencyMs: number;
    readonly maxConcurrent: number | undefined;
    readonly crawlDelay: number | undefined;
    readonly robots: Readonly<RobotsOverride> | undefined;
    readonly pages: number;
    readonly crossLinks: readonly string[];
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
    const pages = options.pages ?? 10;
    if (!(Number.isInteger(pages) && pages >= 0)) {
        throw new RangeError(`site ${host}: pages must be an integer >= 0, got ${pages}`);
    }
    return {
        host,
        rate: options.rate,
        burst,
        refusal: {
            status: options.refusal?.status ?? 429,
            retryAfter: options.refusal?.retryAfter ?? 'seconds',
            rateLimitHeaders: options.refusal?.rateLimitHeaders ?? 'none',
        },
        latencyMs: options.latencyMs ?? 0,
        maxConcurrent: options.maxConcurrent,
        crawlDelay: options.crawlDelay,
        robots: options.robots ? { ...options.robots } : undefined,
        pages,
        crossLinks: (options.crossLinks ?? []).map(normalizeHost),
    };
}
