import { CriticalError, NonRetryableError, RetryRequestError, SessionError } from '@crawlee/core';

/** Base of the plugin's own errors; each subclass has a stable `code` to match on. */
export abstract class ThrottlingError extends Error {
    abstract readonly code: string;
    override name = 'ThrottlingError';
}

/** The options object given to the manager (or to `attach`) is not valid. */
export class ThrottlingOptionsError extends ThrottlingError {
    override name = 'ThrottlingOptionsError' as const;
    readonly code = 'ERR_THROTTLING_OPTIONS' as const;
}

/** Discovering one more domain under `domains: 'all'` would exceed `maxThrottledDomains`. */
export class ThrottledDomainLimitError extends ThrottlingError {
    override name = 'ThrottledDomainLimitError' as const;
    readonly code = 'ERR_THROTTLING_DOMAIN_LIMIT' as const;

    constructor(
        readonly limit: number,
        readonly rejectedDomains: readonly string[],
    ) {
        super(
            `maxThrottledDomains (${limit}) reached: ${rejectedDomains.length} request(s) for new domain(s) ` +
                `${rejectedDomains.slice(0, 5).join(', ')}${rejectedDomains.length > 5 ? ', …' : ''} were not added. ` +
                `Raise maxThrottledDomains or list the domains to throttle explicitly.`,
        );
    }
}

/**
 * A request was refused more often than `maxFreeRetries`: this refusal is counted like any failed
 * attempt (it spends one of `maxRequestRetries`), so one URL that always refuses cannot loop forever.
 */
export class ThrottledRetriesExhaustedError extends ThrottlingError {
    override name = 'ThrottledRetriesExhaustedError' as const;
    readonly code = 'ERR_THROTTLING_FREE_RETRIES_EXHAUSTED' as const;

    constructor(
        readonly url: string,
        readonly statusCode: number,
        readonly maxFreeRetries: number,
    ) {
        super(`${url} answered ${statusCode} after ${maxFreeRetries} free retries; this attempt counts as a failure.`);
    }
}

/** One domain that has refused every request for longer than `maxDomainStallSecs`. */
export interface StalledDomain {
    domain: string;
    /** How long it has been refusing, in milliseconds (idle time and crawl delays excluded). */
    stalledForMs: number;
    /** Requests of that domain still queued: they stay there for a later resume. */
    queued: number;
}

/**
 * Ends the crawl: a domain kept answering "slow down" for longer than `maxDomainStallSecs`.
 * Extends Crawlee's `CriticalError`, so `crawler.run()` rejects with it; the stalled domains'
 * requests stay queued, and a later run with `purgeOnStart: false` resumes them.
 */
export class PersistentRateLimitError extends CriticalError {
    override name = 'PersistentRateLimitError' as const;
    readonly code = 'ERR_THROTTLING_PERSISTENT_RATE_LIMIT' as const;

    constructor(readonly domains: readonly StalledDomain[]) {
        super(
            `Persistent rate limiting: ${domains
                .map(
                    (d) =>
                        `${d.domain} has refused every request for ${Math.round(d.stalledForMs / 1000)} s (${d.queued} request(s) left queued)`,
                )
                .join('; ')}. The crawl stops here; resume it later with purgeOnStart disabled.`,
        );
    }
}

/**
 * Thrown from the crawler integration when a response asks us to slow down (429 by default).
 * A `RetryRequestError`, so Crawlee retries it without spending `maxRequestRetries`; the plugin
 * also restores `retryCount` and keeps the session from being penalised.
 */
export class RequestThrottledError extends RetryRequestError {
    override name = 'RequestThrottledError' as const;
    readonly code = 'ERR_THROTTLING_REQUEST_THROTTLED' as const;

    constructor(
        readonly url: string,
        readonly statusCode: number,
        readonly waitMs: number | undefined,
    ) {
        super(
            `${url} answered ${statusCode}${waitMs !== undefined ? ` (wait ${waitMs} ms)` : ''}: the request goes back to its domain queue and is retried after the backoff`,
        );
    }
}

/**
 * Fails a request of a domain that met `maxConsecutiveErrors` network errors or timeouts with no
 * answer in between (a dead host, a port that refuses connections): its queued requests fail
 * promptly with this error instead of waiting out ever longer backoffs. A `NonRetryableError`, so
 * Crawlee hands it to `failedRequestHandler` at once. A later answer from the domain lifts it.
 */
export class DomainUnreachableError extends NonRetryableError {
    override name = 'DomainUnreachableError' as const;
    readonly code = 'ERR_THROTTLING_DOMAIN_UNREACHABLE' as const;

    constructor(
        readonly url: string,
        readonly domain: string,
        readonly consecutiveErrors: number,
    ) {
        super(
            `${url}: ${domain} is unreachable (${consecutiveErrors} network errors or timeouts in a row, none answered); failed without sending (maxConsecutiveErrors)`,
        );
    }
}

/**
 * Fails a request whose domain's robots.txt asks for a longer `Crawl-delay` than
 * `maxCrawlDelaySecs`, with `onExcessiveCrawlDelay: 'skip'`: rather than crawl it at a pace the
 * site did not ask for, its requests fail promptly. A `NonRetryableError`.
 */
export class CrawlDelayTooLongError extends NonRetryableError {
    override name = 'CrawlDelayTooLongError' as const;
    readonly code = 'ERR_THROTTLING_CRAWL_DELAY_TOO_LONG' as const;

    constructor(
        readonly url: string,
        readonly domain: string,
        readonly crawlDelaySecs: number,
        readonly maxCrawlDelaySecs: number,
    ) {
        super(
            `${url}: robots.txt of ${domain} asks for Crawl-delay: ${crawlDelaySecs} s, more than maxCrawlDelaySecs (${maxCrawlDelaySecs} s); skipped (onExcessiveCrawlDelay: 'skip')`,
        );
    }
}

/**
 * Fails a request whose origin's robots.txt stayed unreachable (a 5xx, a 429, a timeout or a network
 * error) through its `maxRobotsRetries` retries. RFC 9309 §2.3.1.4 asks a crawler to assume complete
 * disallow then, so the origin's requests fail without being sent until `robotsUnreachableDisallowSecs`
 * have passed; after that, robots.txt is read again. A `NonRetryableError`.
 */
export class RobotsUnreachableError extends NonRetryableError {
    override name = 'RobotsUnreachableError' as const;
    readonly code = 'ERR_THROTTLING_ROBOTS_UNREACHABLE' as const;

    constructor(
        readonly url: string,
        readonly origin: string,
        /** What the last read met, e.g. `answered 503`. */
        readonly reason: string,
        /** Reads of robots.txt that failed in a row. */
        readonly attempts: number,
        /** Epoch ms when robots.txt is read again. */
        readonly disallowedUntil: number,
    ) {
        super(
            `${url}: robots.txt of ${origin} ${reason} (${attempts} reads in a row); RFC 9309 says to assume complete disallow, so the request failed without being sent. robots.txt is read again after ${isoTime(disallowedUntil)} (robotsUnreachableDisallowSecs)`,
        );
    }
}

/** An epoch-ms time as ISO 8601; a time past what `Date` holds (a huge setting) reads as such. */
function isoTime(ms: number): string {
    const date = new Date(ms);
    return Number.isNaN(date.getTime()) ? 'the end of time' : date.toISOString();
}

/**
 * Thrown from the crawler integration when `refusalWhen` calls a response `'blocked'` (a challenge
 * page, say). A Crawlee `SessionError`: Crawlee retires the session and retries the request with
 * another, up to `maxSessionRotations`, as it does for blocked requests; the domain does not back off,
 * and the retry is not a free one.
 */
export class RequestBlockedError extends SessionError {
    override name = 'RequestBlockedError' as const;
    readonly code = 'ERR_THROTTLING_REQUEST_BLOCKED' as const;

    constructor(
        readonly url: string,
        readonly statusCode: number,
    ) {
        super(
            `${url} answered ${statusCode}, which refusalWhen calls blocked: the session is retired and the request retried with another`,
        );
    }
}

/**
 * A configured domain cannot be turned into a throttling key (thrown while the options are read,
 * and by `domainKeyOfConfigured`). The message names the value and the forms allowed.
 */
export class InvalidDomainError extends ThrottlingError {
    override name = 'InvalidDomainError' as const;
    readonly code = 'ERR_THROTTLING_INVALID_DOMAIN' as const;

    /** The configured value that was rejected, as given. */
    readonly domain: unknown;

    constructor(domain: unknown, reason: string) {
        super(`Invalid throttling domain ${describeValue(domain)}: ${reason}`);
        this.domain = domain;
    }
}

/**
 * A value given to a method of the public API (not an option) is not allowed: a `ManualClock` moved
 * back, a request this manager never handed out, a shared clock's call out of range. The message
 * names the method, the value and what is allowed.
 */
export class InvalidArgumentError extends ThrottlingError {
    override name = 'InvalidArgumentError' as const;
    readonly code = 'ERR_THROTTLING_INVALID_ARGUMENT' as const;
}

/**
 * A shared clock's store failed (Redis unreachable, timed out or a script error; a lock file held
 * too long): the message says which call, key or path.
 */
export class SharedClockError extends ThrottlingError {
    override name = 'SharedClockError' as const;
    readonly code = 'ERR_THROTTLING_SHARED_CLOCK' as const;
}

/**
 * A storage call (a domain queue's fetch, add or mark) did not settle within its time limit; what it
 * held was given back, and the request is served again later.
 */
export class StorageCallTimeoutError extends ThrottlingError {
    override name = 'StorageCallTimeoutError' as const;
    readonly code = 'ERR_THROTTLING_STORAGE_TIMEOUT' as const;

    constructor(what: string, timeoutMs: number) {
        super(`${what} did not settle within ${timeoutMs} ms; what it held was given back`);
    }
}

/** A storage call on Redis failed (`RedisStorageClient`): the message names the storage, the call and the reason. */
export class RedisStorageError extends ThrottlingError {
    override name = 'RedisStorageError' as const;
    readonly code = 'ERR_THROTTLING_REDIS_STORAGE' as const;
}

/**
 * Redis is gone for this crawl: it did not answer for `outageMs`, or it came back without a storage
 * the crawl had opened (restarted without persistence). Extends Crawlee's `CriticalError`, so the
 * crawl ends with it from any call, one in a request handler (`enqueueLinks`, `pushData`) included,
 * instead of retrying requests against a frontier that is not there. What Redis still holds stays:
 * run the crawl again once Redis is back.
 */
export class RedisUnavailableError extends CriticalError {
    override name = 'RedisUnavailableError' as const;
    readonly code = 'ERR_THROTTLING_REDIS_UNAVAILABLE' as const;
}

/** `ioredis` is not installed: the Redis entry point needs it (an optional peer dependency). */
export class MissingRedisDriverError extends ThrottlingError {
    override name = 'MissingRedisDriverError' as const;
    readonly code = 'ERR_THROTTLING_REDIS_DRIVER_MISSING' as const;
}

/** A value for an error message: a string quoted, anything else with its type, never throwing. */
export function describeValue(value: unknown): string {
    if (typeof value === 'string') return JSON.stringify(value);
    try {
        return `(${typeof value}) ${String(value)}`;
    } catch {
        // Object.create(null) or a throwing toString: the error about the value must not become another error.
        return `(${typeof value}) ${Object.prototype.toString.call(value)}`;
    }
}

/**
 * Crawlee no longer has the shape a patch of this package relies on (a member renamed, removed or no
 * longer a function). Thrown when the crawler is attached, before anything is patched, so a Crawlee
 * upgrade that breaks an assumption fails at once and by name, instead of quietly crawling unthrottled.
 */
export class CrawleeShapeError extends ThrottlingError {
    override name = 'CrawleeShapeError' as const;
    readonly code = 'ERR_THROTTLING_CRAWLEE_SHAPE' as const;

    constructor(
        readonly member: string,
        readonly crawleeVersion: string,
        found: string,
    ) {
        super(
            `crawlee-throttling patches ${member}, which Crawlee ${crawleeVersion} does not have as a method (found ${found}). ` +
                'This Crawlee version is not supported (the peer range is >=3.15 <4); install a supported one, or report it.',
        );
    }
}
