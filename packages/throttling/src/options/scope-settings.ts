/**
 * Pacing settings of one scope (a domain, or an endpoint prefix such as `api.example.com/search`).
 * Every field falls back to the manager-wide option of the same name.
 */
export interface ScopeSettings {
    /**
     * Most requests of the scope in flight at once (handed out and not yet handled or reclaimed).
     * @default 1
     */
    concurrency?: number;
    /**
     * Least time between two dispatches to the scope.
     * @default 0
     */
    delaySecs?: number;
    /**
     * Least time between two dispatches of the same concurrency slot.
     * @default 0
     */
    delayPerSlotSecs?: number;
    /**
     * Randomises each delay: `0.5` multiplies it by a factor drawn from [0.5, 1.5]; `[low, high]`
     * draws from [low, high]. 0 turns it off.
     * @default 0
     */
    jitter?: number | readonly [number, number];
    /**
     * Response status codes that make the scope back off (and the request be retried for free).
     * @default [429, 502, 503, 504, 520, 521, 522, 523, 524]
     */
    backoffStatusCodes?: readonly number[];
    /**
     * Network errors and timeouts make the scope back off too.
     * @default true
     */
    backoffOnNetworkErrors?: boolean;
    /**
     * Growth of the backoff on each further trigger.
     * @default 2
     */
    backoffFactor?: number;
    /**
     * First backoff after a trigger without a usable server-given wait (Crawlee v4's name).
     * @default 2
     */
    baseDelaySecs?: number;
    /**
     * Cap on backoff, on server-given waits and on the raised pacing (Crawlee v4's name).
     * @default 60
     */
    maxDelaySecs?: number;
    /**
     * The quiet window: the raised pacing steps down one factor towards the configured pacing after
     * this long without a trigger (and again after each further window). With a `delaySecs` set, a
     * window lasts three intervals of the raised pacing, or this long if that is sooner.
     * @default 60
     */
    backoffWindowSecs?: number;
    /**
     * Ignore robots.txt `Crawl-delay` for this scope (and do not warn when explicit settings win).
     * @default false
     */
    ignoreRobotsCrawlDelay?: boolean;
    /**
     * Adaptive pacing (see docs/rampup.md): learn the rate the scope accepts from its answers and pace
     * just under it, growing slots while slow answers rather than the pace hold it back. `false` opts
     * out: backoff alone, one request at a time unless `concurrency` says otherwise. The configured
     * `delaySecs` and robots.txt `Crawl-delay` stay floors under the rate found.
     * @default true
     */
    rampup?: boolean | RampupSettings;
    /**
     * Most cost the scope may spend per `quotaWindowSecs` (fixed windows). A request costs 1 unless its
     * `userData.throttlingScopes` map says otherwise; one request costing more than the quota still
     * goes alone into an empty window.
     */
    quota?: number;
    /**
     * Length of a quota window (fixed windows aligned on the epoch).
     * @default 60
     */
    quotaWindowSecs?: number;
}

/** Settings of the pace learner (docs/rampup.md). */
export interface RampupSettings {
    /**
     * The learning algorithm: `'adaptive'`, the only one (kept so that settings naming it stay valid).
     * @default 'adaptive'
     */
    algorithm?: 'adaptive';
    /**
     * Least length of a measuring window.
     * @default 1
     */
    windowSecs?: number;
    /**
     * Rate to start from, requests per second; unset: unpaced until the site gives a signal (a
     * refusal, an empty quota, a queue). A rate an earlier crawl learned (`rememberLearnedRates`) wins.
     */
    initialRate?: number;
    /** @default 0.01 */
    minRate?: number;
    /** @default 1000 */
    maxRate?: number;
    /**
     * Most concurrency the learner may reach by adding slots while response times stay flat
     * (never above an explicit `concurrency` of the scope). 8 is Scrapy's
     * `CONCURRENT_REQUESTS_PER_DOMAIN`: what a polite crawler has long been trusted to send one site.
     * @default 8
     */
    maxConcurrency?: number;
}
