/**
 * Every default of the options, in the units a user writes them (seconds), in one table. The
 * resolver applies them, the robots reader and the layouts read theirs from here, and a unit test
 * checks each one against the `@default` of its JSDoc and its row in docs/options.md.
 */
export const DEFAULTS = {
    // The policy of every throttled key (each can also be set per scope).
    /** One request at a time per key, until the learner finds the site takes more. */
    concurrency: 1,
    delaySecs: 0,
    delayPerSlotSecs: 0,
    jitter: 0,
    /** Rate limiting, and the usual overload answers of servers and CDNs. */
    backoffStatusCodes: [429, 502, 503, 504, 520, 521, 522, 523, 524] as readonly number[],
    backoffOnNetworkErrors: true,
    backoffFactor: 2,
    /** Crawlee v4's first backoff. */
    baseDelaySecs: 2,
    /** Crawlee v4's cap on backoff (and here on server-given waits and raised pacing). */
    maxDelaySecs: 60,
    backoffWindowSecs: 60,
    ignoreRobotsCrawlDelay: false,
    rampup: true,
    quotaWindowSecs: 60,

    // The pace learner's settings (`rampup: { ... }`).
    rampupSettings: {
        windowSecs: 1,
        minRate: 0.01,
        maxRate: 1_000,
        /** Scrapy's `CONCURRENT_REQUESTS_PER_DOMAIN`: what a polite crawler has long sent one site. */
        maxConcurrency: 8,
    },

    // Manager-wide settings.
    throttleBy: 'hostname',
    minCrawlDelaySecs: 0,
    /** 15 minutes without a dispatch while requests wait is a stall. */
    maxDomainStallSecs: 900,
    /** The key Crawlee v4's manager uses, so a crawl moving to v4 finds its domains. */
    persistStateKey: 'CRAWLEE_THROTTLED_DOMAINS',
    onSharedClockError: 'pause',
    maxConsecutiveErrors: 5,
    sameDomainDelay: 'fold',
    maxFreeRetries: 20,
    onExcessiveCrawlDelay: 'cap',
    respectCrawlDelay: true,
    maxCrawlDelaySecs: 60,
    maxRobotsRetries: 5,
    /** How long an unreachable robots.txt disallows its origin, and how long an answer is kept. */
    robotsUnreachableDisallowSecs: 24 * 60 * 60,
    rememberLearnedRates: true,
    learnedRates: {
        /** Named, so Crawlee's `purgeOnStart` leaves it alone. */
        storeName: 'crawlee-throttling-learned-rates',
        /** 7 days: sites change. */
        maxAgeSecs: 7 * 24 * 3600,
    },
    frontierWindow: 1_000,
    /**
     * Per process: on storage shared by several processes (`sharesQueuesAcrossProcesses`) a request in
     * the window is out of the others' reach, so each holds one per domain and leaves the rest in
     * the domain's queue, which every process takes from.
     */
    frontierWindowPerDomain: { local: 10, sharedStorage: 1 },
    /** A hard limit for `'perDomain'`; for `'shared'`, the bound of the state kept. */
    maxThrottledDomains: { perDomain: 100, shared: 10_000 },
} as const;

/** The default `backoffStatusCodes` (exported for users who extend it). */
export const DEFAULT_BACKOFF_STATUS_CODES: readonly number[] = DEFAULTS.backoffStatusCodes;
