import type { QueueLayout } from './queue-layout';
import type { Clock } from '../core/clock';
import type { SharedDomainClock } from '../core/shared-domain-clock';
import type { ThrottleBy } from '../routing/domain-key';
import type { IpResolver } from '../ip/ip-resolver';
import type { LearnedRatesSettings } from './learned-rates-settings';

export type { LearnedRatesSettings } from './learned-rates-settings';
import type { RobotsFetcher } from './robots-fetcher';
import type { RefusalWhen } from '../response/refusal-rule';
import type { ScopeSettings } from './scope-settings';
import type { InnerRequestManager, RequestManagerOpener } from './options-schema';

export type { InnerRequestManager, RequestManagerOpener } from './options-schema';
import type { GetScopes } from './request-scopes';

/**
 * Options of {@link ThrottlingRequestManager}. Option names follow Crawlee v4's manager; the policy
 * settings of {@link ScopeSettings} (concurrency, delays, jitter, backoff) set the defaults of every
 * throttled domain and can be overridden per domain or endpoint in `scopes`.
 */
export interface ThrottlingRequestManagerOptions extends Omit<ScopeSettings, 'backoffStatusCodes'> {
    /**
     * Holds the requests of domains that are not throttled (and anything that arrives without a
     * domain). A manager, or a factory called once on first use.
     * @default the default RequestQueue, opened on first use
     */
    inner?: InnerRequestManager;
    /**
     * Domains to throttle: a list of hostnames (`example.com`, `xn--bcher-kva.example`, `[::1]`),
     * or `'all'` to throttle every domain the crawl meets. Wildcards are not hostnames: use
     * `throttleBy: 'registrableDomain'` to group subdomains.
     */
    domains: readonly string[] | 'all';
    /**
     * What one throttled "domain" is: the URL's hostname, or its registrable domain (so
     * `a.example.com` and `b.example.com` share one clock). IPs and `localhost` stay per hostname.
     * `'ip'` paces by hostname and also by address: hosts that resolve to one IP address (shared
     * hosting, one CDN edge) share the scope `ip:<address>` beside their own, and a request goes only
     * when both allow it (Nutch's `fetcher.queue.mode=byIP`). See `ipScope` and docs/policy.md.
     * @default 'hostname'
     */
    throttleBy?: ThrottleBy | 'ip';
    /**
     * Under `throttleBy: 'ip'`, the settings of every IP scope, over the manager-wide defaults (so by
     * default an address is paced like one host). `scopes['ip:203.0.113.7']` overrides one address.
     * @default {} (the manager-wide settings)
     */
    ipScope?: ScopeSettings;
    /**
     * Under `throttleBy: 'ip'`, resolves a hostname to its addresses. Answers are cached for their
     * `ttlSecs`; a rejection leaves the host paced by its own scope.
     * @default DNS A/AAAA records with their TTL, falling back to the system lookup (`/etc/hosts`,
     * `localhost`) kept 60 s
     */
    ipResolver?: IpResolver;
    /**
     * Keep the rate adaptive pacing learned for each scope in a named key-value store (which
     * `purgeOnStart` leaves alone), and start from it the next time that scope is crawled instead of
     * probing from scratch. `false` turns it off; an object names the store and how old a learned
     * rate may be before it is ignored. See docs/policy.md.
     * @default true (store 'crawlee-throttling-learned-rates', rates up to 7 days old)
     */
    rememberLearnedRates?: boolean | LearnedRatesSettings;
    /**
     * Floor under every throttled domain's crawl delay: the least time between two dispatches to one
     * domain.
     * @default 0
     */
    minCrawlDelaySecs?: number;
    /**
     * A domain refusing every request for longer than this (idle time and crawl delays not counted),
     * with work still queued, ends the crawl with `PersistentRateLimitError`.
     * @default 900
     */
    maxDomainStallSecs?: number;
    /**
     * Most domains kept under `domains: 'all'`. With `queueLayout: 'perDomain'` going past it throws
     * `ThrottledDomainLimitError` (a batch that overflows still stores what fits); with `'shared'` the
     * least recently used idle domain is forgotten instead (no work, nothing in flight, clocks run out),
     * so memory stays bounded however many domains the crawl meets.
     * @default 100 (`'perDomain'`), 10,000 (`'shared'`)
     */
    maxThrottledDomains?: number;
    /**
     * How requests are stored. `'perDomain'`: one `throttled-<domain>` queue per domain, for crawls of
     * up to a few hundred domains. `'shared'`: requests stay in `inner`; a bounded window of them waits
     * in memory, one line per domain, and a domain gets a queue of its own only when more of its
     * requests wait than `frontierWindowPerDomain`. For broad crawls; see docs/broad-crawls.md.
     * @default 'shared' under `domains: 'all'`, 'perDomain' for a list of domains
     */
    queueLayout?: QueueLayout;
    /**
     * `queueLayout: 'shared'` only: most requests waiting in memory at once, each locked in `inner`
     * (the lock is kept alive while it waits). While the window is full, no more requests are taken
     * from `inner`.
     * @default 1000
     */
    frontierWindow?: number;
    /**
     * `queueLayout: 'shared'` only: most requests of one domain in the window. Further ones move into
     * the domain's own `throttled-<domain>` queue, so one busy domain cannot fill the window. On
     * storage shared by several processes (`RedisStorageClient`) the default is 1: what waits in one
     * process's window is out of the others' reach, where its domain's queue serves them all.
     * @default 10 (1 on storage shared by several processes)
     */
    frontierWindowPerDomain?: number;
    /**
     * Key in the default key-value store under which discovered domains (and their clocks) are kept
     * for resuming. Give each manager sharing one storage its own key.
     * @default 'CRAWLEE_THROTTLED_DOMAINS'
     */
    persistStateKey?: string;
    /**
     * Opens the queue of each throttled domain, named `throttled-<domain>`.
     * @default RequestQueue.open
     */
    requestManagerOpener?: RequestManagerOpener;
    /**
     * Response status codes that mean "slow down": the domain backs off and the request is retried
     * later through the manager, without spending a retry or penalising the session.
     * @default [429, 502, 503, 504, 520, 521, 522, 523, 524]
     */
    backoffStatusCodes?: readonly number[];
    /**
     * Per-domain or per-endpoint overrides of the policy settings, keyed by hostname
     * (`'api.example.com'`) or hostname plus path prefix (`'api.example.com/search'`; such an endpoint
     * is paced apart from the rest of its host). A prefix covers whole segments (`/search` and
     * `/search/x`, not `/searchlight`) and matches every spelling of them: percent-encoded letters,
     * `;jsessionid=...` parameters, doubled slashes, dot segments and a trailing slash are normalised
     * away; case is significant.
     * @default {}
     */
    scopes?: Record<string, ScopeSettings>;
    /**
     * Random source in [0, 1) for jitter; pass `seededRandom(seed)` for reproducible runs.
     * @default Math.random
     */
    random?: () => number;
    /**
     * Decides the scopes of each request, replacing the default (the request's domain plus its
     * `userData.throttlingScopes`). The first scope returned holds the request's queue; a request is
     * dispatched only when every scope allows it. Return undefined to keep the default.
     */
    getScopes?: GetScopes;
    /**
     * Decides, before the built-in rules (`backoffStatusCodes`), what a response is:
     * - a function `(context, response) => 'refused' | 'blocked' | undefined` (may be async), where
     *   `response` has `statusCode`, `headers`, `url`, `body()` (the first 256 KiB as text, read
     *   without taking the body from the crawler) and `raw`;
     * - or the shorthand `{ statusCodes?, bodyPattern?, headerPattern?: { name, pattern } }`: a
     *   response meeting every field given is `'refused'` (a string pattern matches as a substring).
     *
     * `'refused'` backs the domain off and retries the request for free, as a 429 (Shopify's 430:
     * `{ statusCodes: [430] }`); `'blocked'` (a challenge page) throws `RequestBlockedError`, a
     * `SessionError`, so Crawlee retires the session and retries with another, no backoff;
     * undefined leaves the response to the built-in rules.
     * @default undefined (the built-in rules alone)
     */
    refusalWhen?: RefusalWhen;
    /**
     * Most free (throttled) retries of one request; past it, a refusal spends a normal retry, so a
     * single URL that always answers 503 cannot loop forever.
     * @default 20
     */
    maxFreeRetries?: number;
    /**
     * Read robots.txt `Crawl-delay` of each origin before the first request to it (and again once
     * the last read is 24 h old) and apply it as its domain's crawl delay.
     * @default true
     */
    respectCrawlDelay?: boolean;
    /**
     * Cap on a robots.txt `Crawl-delay`; applying it logs a warning.
     * @default 60
     */
    maxCrawlDelaySecs?: number;
    /**
     * User agent whose robots.txt group is read for `Crawl-delay`. Set it to the product token your
     * crawler announces; unset, the `*` group applies.
     */
    robotsUserAgent?: string;
    /**
     * Fetches robots.txt; the default uses got-scraping through the crawler's proxy.
     * @default got-scraping
     */
    robotsFetcher?: RobotsFetcher;
    /**
     * Reads of a robots.txt that answered 5xx or 429, or not at all (a timeout, a network error),
     * made again before giving up on it. Meanwhile the origin is paused: its key backs off (for
     * `Retry-After` when the answer has one, else exponentially) and its requests wait, spending no
     * retry. Nutch's `http.robots.503.defer.visits.retries`.
     * @default 5
     */
    maxRobotsRetries?: number;
    /**
     * How long an origin whose robots.txt stayed unreachable through `maxRobotsRetries` is treated as
     * RFC 9309 §2.3.1.4 says, as disallowing everything: its requests fail with
     * `RobotsUnreachableError` without being sent; after that, robots.txt is read again. An origin
     * whose robots.txt was read before keeps the rules of that read instead (RFC 9309 §2.4). 0 turns
     * this off: after the retries the origin is crawled with no rules.
     * @default 86400 (24 h, the longest a robots.txt answer is cached)
     */
    robotsUnreachableDisallowSecs?: number;
    /**
     * What `attach()` does with a crawler's own `sameDomainDelaySecs`: `'fold'` raises this manager's
     * floor to it and switches Crawlee's delay off (so requests are not paced twice); `'refuse'`
     * throws instead.
     * @default 'fold'
     */
    sameDomainDelay?: 'fold' | 'refuse';
    /**
     * Time source in epoch milliseconds; inject a manual clock in tests.
     * @default the system clock
     */
    clock?: Clock;
    /**
     * Clocks shared with other crawler processes (`new FileDomainClock(dir)` on one machine,
     * `new RedisDomainClock({ url })` across machines): every dispatch reserves its window there too (a
     * one-at-a-time domain holds it until the response), and backoffs are published there, so several
     * processes crawling the same sites keep each domain's interval together. When the clock offers
     * them (both built-in clocks do), concurrency slots, quotas and the backoff's escalation are shared
     * too: `concurrency: 2` means 2 across all processes. Rampup's learned rate stays per process.
     * @default undefined (pacing is per process)
     */
    sharedClock?: SharedDomainClock;
    /**
     * What to do when `sharedClock` fails (Redis down or slow, a lock timeout) on a call that decides a
     * dispatch (the window, a shared slot, a shared quota): `'pause'` holds the domain and asks the
     * clock again a second later, logging why; `'local'` paces by this process alone (its own slots and
     * quotas), with one warning, until the clock answers again. No request is lost either way. Calls
     * that others wait for (a lease end, a slot release, a refusal under `'pause'`) are sent again.
     * @default 'pause'
     */
    onSharedClockError?: 'pause' | 'local';
    /**
     * The error budget of a domain: after this many network errors or timeouts in a row with no
     * answer in between (a dead host, a refused port), its queued requests fail at once with
     * `DomainUnreachableError` instead of waiting out ever longer backoffs (Nutch's
     * `fetcher.max.exceptions.per.queue`). Any answer, even a 429, resets the count. 0 turns it off.
     * @default 5
     */
    maxConsecutiveErrors?: number;
    /**
     * What a robots.txt `Crawl-delay` above `maxCrawlDelaySecs` does: `'cap'` crawls the domain at
     * `maxCrawlDelaySecs` (with a warning); `'skip'` fails its requests promptly with
     * `CrawlDelayTooLongError` instead (Nutch's `fetcher.max.crawl.delay`, Heritrix's
     * `respectCrawlDelayUpToSeconds`).
     * @default 'cap'
     */
    onExcessiveCrawlDelay?: 'cap' | 'skip';
}
