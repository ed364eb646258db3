import type { IRequestManager } from '@crawlee/core';
import { GotScrapingHttpClient, log as crawleeLog, Session } from '@crawlee/core';

import { ThrottlingOptionsError } from '../core/errors';
import type { RobotsFetcher } from '../options/robots-fetcher';
import type { RobotsVerdict } from '../robots/robots-crawl-delay';
import type { StreamingHttpClient } from '../robots/crawler-robots-fetcher';
import { robotsFetcherOfHttpClient } from '../robots/crawler-robots-fetcher';
import type { RobotsReadFailure } from '../robots/robots-crawl-delay';
import {
    loadGotScraping,
    RobotsCrawlDelayCache,
    robotsReadFailure,
    ROBOTS_TXT_MAX_AGE_MS,
} from '../robots/robots-crawl-delay';
import type { DomainGateAttempt, DomainGateOutcome } from '../robots/origin-gate';
import { decideRobotsFailure } from '../robots/robots-failure';
import type { NavigationContext } from '../orchestration/response-interpreter';
import { assertPatchable } from '../core/crawlee-shape';
import type { ThrottlerPort } from '../orchestration/throttler-port';

/**
 * The parts of a Crawlee 3.x crawler the integration touches. Every crawler class has them
 * (`postNavigationHooks` only the HTTP and browser crawlers), so no crawler package is imported.
 */
export interface AttachableCrawler {
    requestManager?: IRequestManager;
    requestQueue?: unknown;
    autoscaledPool?: { notify(): unknown };
    postNavigationHooks?: ((context: NavigationContext, ...rest: unknown[]) => unknown)[];
    preNavigationHooks?: ((context: NavigationContext, ...rest: unknown[]) => unknown)[];
    proxyConfiguration?: { newUrl(sessionId?: string | number): Promise<string | undefined> | string | undefined };
    sameDomainDelayMillis?: number;
    retryOnBlocked?: boolean;
    sessionPool?: unknown;
    /**
     * Crawlee's `BaseHttpClient` (every 3.x crawler has one; got-scraping unless the user chose
     * another). robots.txt is fetched with its `stream()`, so the body can be cut while it downloads.
     */
    httpClient?: Partial<StreamingHttpClient> | object;
    log?: { info(message: string): void };
    /** Crawlee's `Statistics`: `calculate()` feeds its periodic and final logs and `crawler.run()`'s result. */
    stats?: { calculate?(): object };
}

// Made on use, so a log level set after this module loaded still applies.
const integrationLog = () => crawleeLog.child({ prefix: 'ThrottlingRequestManager' });

/** Whether `crawler` hands out requests through `manager` (directly or inside a tandem). */
export function crawlerUsesManager(crawler: AttachableCrawler, manager: IRequestManager): boolean {
    const candidates = [crawler.requestManager, crawler.requestQueue];
    return candidates.some(
        (c) =>
            c === manager ||
            (typeof c === 'object' && c !== null && (c as { requestQueue?: unknown }).requestQueue === manager),
    );
}

/**
 * Wires a crawler to the manager through its port: responses reach it through a post-navigation
 * hook, its pool is woken when held-back work becomes ready, robots.txt crawl delays are read before
 * the first request to each origin (and again after 24 h), and settings that would fight the
 * throttler are reported once. `requests` is the manager itself: the crawler must take its requests
 * from it.
 */
export function attachCrawler(manager: ThrottlerPort, crawler: AttachableCrawler, requests: IRequestManager): void {
    // Every check that can refuse runs before anything is installed: a refused attach changes nothing.
    const sameDomainDelayMs = refuseConflicts(manager, crawler, requests);
    assertCrawleeShape(crawler);
    manager.markIntegrated();
    hookResponses(manager, crawler);
    manager.onWake(() => crawler.autoscaledPool?.notify());
    reportFreeRetries(manager, crawler);
    if (manager.options.respectCrawlDelay) gateOnRobotsTxt(manager, crawler);
    if (sameDomainDelayMs > 0) {
        manager.recordPacingSignal({ reason: 'minIntervalEverywhere', intervalMs: sameDomainDelayMs });
        crawler.sameDomainDelayMillis = 0;
        integrationLog().info(
            `sameDomainDelaySecs (${sameDomainDelayMs / 1000} s) folded into the throttler's floor; Crawlee's own delay is switched off so requests are not paced twice.`,
        );
    }
    warnAboutSessionRetirement(manager, crawler);
}

/**
 * Crawlee's statistics show the free retries: a refused request's retry is given back, so Crawlee's
 * retry histogram never counts it. `calculate()` (the "Statistics" and "Final request statistics"
 * logs, `stats.toJSON()` and what `crawler.run()` resolves to) gains `throttledRetries`.
 */
function reportFreeRetries(manager: ThrottlerPort, crawler: AttachableCrawler): void {
    const stats = crawler.stats;
    if (!stats) return;
    assertPatchable(stats, 'calculate', 'Statistics.calculate');
    const calculate = stats.calculate!.bind(stats);
    const throttledRetries = () => manager.stats().reduce((sum, row) => sum + row.freeRetries, 0);
    stats.calculate = () => ({ ...calculate(), throttledRetries: throttledRetries() });
}

/**
 * The members of Crawlee objects this package patches, checked before anything is installed: there
 * is no supported hook for either (Crawlee calls `session.markBad()` after every failed attempt, and
 * `Statistics` has no way to add a figure), so a Crawlee that changed them fails loudly here.
 */
function assertCrawleeShape(crawler: AttachableCrawler): void {
    assertPatchable(Session.prototype, 'markBad', 'Session.markBad');
    if (crawler.stats) assertPatchable(crawler.stats, 'calculate', 'Statistics.calculate');
}

/** Throws when the crawler does not use this manager, or sets a delay it must not fold; returns that delay. */
function refuseConflicts(manager: ThrottlerPort, crawler: AttachableCrawler, requests: IRequestManager): number {
    if (!crawlerUsesManager(crawler, requests)) {
        throw new ThrottlingOptionsError(
            'attach(crawler): this crawler does not take its requests from this ThrottlingRequestManager. ' +
                'On Crawlee 3.x pass it as `requestQueue: throttler.asRequestQueue()` (alone or with a requestList); on v4 as `requestManager`.',
        );
    }
    const sameDomainDelayMs = crawler.sameDomainDelayMillis ?? 0;
    if (sameDomainDelayMs > 0 && manager.options.sameDomainDelay === 'refuse') {
        throw new ThrottlingOptionsError(
            `attach(crawler): the crawler sets sameDomainDelaySecs (${sameDomainDelayMs / 1000} s), which would pace throttled domains twice. ` +
                'Remove it and use minCrawlDelaySecs, or set sameDomainDelay: "fold".',
        );
    }
    return sameDomainDelayMs;
}

/**
 * Whether the crawler sends its requests with got-scraping (Crawlee's default HTTP client, for every
 * HTTP crawler), whose `beforeRequest` hooks run once the request is built, just before it is written.
 * A browser crawler's pre-navigation hooks get `page.goto()`'s options instead, and another client
 * may not run got's hooks; both keep the departure the pre-navigation hook counts.
 */
function sendsThroughGot(crawler: AttachableCrawler): boolean {
    if ('browserPool' in crawler) return false;
    const client = crawler.httpClient;
    return client instanceof GotScrapingHttpClient || client?.constructor?.name === 'GotScrapingHttpClient';
}

/**
 * Appends a got `beforeRequest` hook to the crawler's request options: it runs after got-scraping's
 * own (header generation) and the crawler's later pre-navigation hooks, so a request's interval
 * counts from when it is written, not from when the first hook saw it. Redirects run it again.
 */
function countAgainAtSend(requestOptions: unknown, departs: () => number): void {
    if (typeof requestOptions !== 'object' || requestOptions === null) return;
    const options = requestOptions as { hooks?: { beforeRequest?: unknown } };
    const hooks = (options.hooks ??= {});
    const before = Array.isArray(hooks.beforeRequest) ? hooks.beforeRequest : [];
    // got awaits the hook; it must answer undefined, or got takes the answer as the response.
    const holdThenSend = async (): Promise<undefined> => {
        const holdMs = departs();
        if (holdMs > 0) await new Promise((resolve) => setTimeout(resolve, holdMs));
        return undefined;
    };
    hooks.beforeRequest = [...before, holdThenSend];
}

/** Responses: our hook goes first, before Crawlee's own hooks and blocked-status checks retire the session. */
function hookResponses(manager: ThrottlerPort, crawler: AttachableCrawler): void {
    // A request of a domain past its error budget fails before it is sent.
    if (Array.isArray(crawler.preNavigationHooks)) {
        const throughGot = sendsThroughGot(crawler);
        crawler.preNavigationHooks.unshift(async (context: NavigationContext, requestOptions?: unknown) => {
            manager.checkReachable(context);
            if (throughGot) countAgainAtSend(requestOptions, () => manager.departs(context));
        });
    }
    if (Array.isArray(crawler.postNavigationHooks)) {
        crawler.postNavigationHooks.unshift(async (context: NavigationContext) =>
            manager.handleResponse(context, context.response),
        );
        return;
    }
    integrationLog().info(
        'This crawler has no navigation hooks (BasicCrawler): report each response with `await throttler.handleResponse(context, response)` in the request handler, or 429s will not reach the throttler.',
    );
}

/** robots.txt of each origin is read (with the crawler's client and proxy) before its first request. */
function gateOnRobotsTxt(manager: ThrottlerPort, crawler: AttachableCrawler): void {
    const { options } = manager;
    const fetcher = options.robotsFetcher ?? robotsFetcherOf(crawler);
    // Only the default fetcher loads got-scraping through this package's own loader; warm it up so
    // the first robots.txt fetch does not pay for it. (Pages, and robots.txt fetched with the
    // crawler's client, load it through Crawlee; under jest this loader's Function-built import()
    // resolves against an earlier, torn-down test environment and only adds noise.)
    if (!fetcher) void loadGotScraping().catch(() => undefined);
    const robots = new RobotsCrawlDelayCache({
        fetcher,
        maxCrawlDelaySecs: options.maxCrawlDelaySecs,
        now: () => options.clock.now(),
    });
    const userAgent = options.robotsUserAgent;
    manager.setDomainGate(
        async (_domain, url, { retriesLeft }) => {
            const proxyUrl = (await crawler.proxyConfiguration?.newUrl()) ?? undefined;
            const verdict = await robots.get(url, { userAgent, proxyUrl });
            const hasGoodRead = robots.lastGood(url, userAgent) !== undefined;
            return applyRobotsVerdict(manager, url, verdict, { retriesLeft, hasGoodRead });
        },
        { recheckAfterMs: ROBOTS_TXT_MAX_AGE_MS, maxRetries: options.maxRobotsRetries },
    );
}

/**
 * Fetches robots.txt with the crawler's own HTTP client (the same stack as its pages: got-scraping by
 * default, or whatever client the user configured) through its `stream()`, so the body is cut at
 * 500 KiB and at the time limit while it downloads. Undefined when the crawler has no client or one
 * that cannot stream, so the cache falls back to its default (streaming) fetcher.
 *
 * The crawler's client also loads got-scraping the way Crawlee does everywhere else; the default
 * fetcher's own `import()` (compiled through `new Function`) resolves against the first module
 * context that ran it, which under jest is an earlier, torn-down test file's environment.
 */
export function robotsFetcherOf(crawler: AttachableCrawler): RobotsFetcher | undefined {
    return robotsFetcherOfHttpClient(crawler.httpClient);
}

/** Where a robots.txt read stands: retries left for its origin, and whether an earlier read got the file. */
export interface RobotsReadAttempt extends DomainGateAttempt {
    hasGoodRead: boolean;
}

/**
 * Turns what an origin's robots.txt said into pacing, and tells the origin gate what is left to do.
 * A file that says nothing about delays (or is gone) clears that origin's delay, so a re-read can
 * lower it. A failed read (a 5xx, a 429, no answer) changes none of that: it pauses the origin and
 * asks for a retry, and once the retries are spent disallows the origin for a while (see
 * {@link decideRobotsFailure}).
 */
export function applyRobotsVerdict(
    manager: ThrottlerPort,
    url: string,
    verdict: RobotsVerdict,
    attempt: RobotsReadAttempt = { retriesLeft: 0, hasGoodRead: false },
): DomainGateOutcome | undefined {
    const failure = robotsReadFailure(verdict);
    const errorBudgetSpent = manager.noteRobotsRead(url, failure?.answered ?? true);
    if (failure) return onRobotsFailure(manager, url, failure, { ...attempt, errorBudgetSpent });
    if (verdict.kind === 'crawlDelay' && verdict.capped && manager.options.onExcessiveCrawlDelay === 'skip') {
        integrationLog().warning(
            `robots.txt of ${new URL(url).origin} asks for Crawl-delay: ${verdict.declaredSecs} s, more than maxCrawlDelaySecs (${verdict.delayMs / 1000} s): its requests fail with CrawlDelayTooLongError (onExcessiveCrawlDelay: 'skip').`,
        );
        manager.skipForCrawlDelay(url, verdict.declaredSecs);
        return undefined;
    }
    // A read that says something else lifts an earlier skip.
    manager.skipForCrawlDelay(url, undefined);
    if (verdict.kind === 'crawlDelay') {
        if (verdict.capped) {
            integrationLog().warning(
                `robots.txt of ${new URL(url).origin} asks for Crawl-delay: ${verdict.declaredSecs} s; capped at maxCrawlDelaySecs (${verdict.delayMs / 1000} s).`,
            );
        }
        manager.recordPacingSignal({ reason: 'minInterval', url, intervalMs: verdict.delayMs });
    } else {
        manager.recordPacingSignal({ reason: 'minInterval', url, intervalMs: 0 });
    }
    return undefined;
}

/**
 * A read that told nothing: while retries are left, the origin's key backs off (for `Retry-After`
 * when the answer had one) and the gate reads again after it; then the last good read stays in
 * force, or the origin is disallowed for `robotsUnreachableDisallowSecs`. Reads that got no answer
 * count in the domain's error budget; once it is spent, the budget fails the requests instead.
 * Whatever the last good read said (its delay, a skip) stays as it was.
 */
function onRobotsFailure(
    manager: ThrottlerPort,
    url: string,
    failure: RobotsReadFailure,
    attempt: RobotsReadAttempt & { errorBudgetSpent: boolean },
): DomainGateOutcome | undefined {
    const { options } = manager;
    const decision = decideRobotsFailure(failure, {
        ...attempt,
        disallowMs: options.robotsUnreachableDisallowMs,
        now: options.clock.now(),
    });
    const origin = new URL(url).origin;
    switch (decision.action) {
        case 'errorBudget':
            // The host is down: its requests fail with DomainUnreachableError, as after page requests.
            return undefined;
        case 'retry':
            // A read the server answered (5xx, 429) pauses the origin before the next read; one that got
            // no answer is read again at once, as nothing reached a server to be polite to, and the
            // error budget ends a run of those. Neither is a refusal of a page: the pacing learns nothing.
            if (failure.answered) {
                manager.pauseForRobots(url, decision.waitMs, options.maxRobotsRetries - attempt.retriesLeft);
            }
            return 'retry';
        case 'disallow':
            integrationLog().warning(
                `robots.txt of ${origin} ${failure.reason}, ${options.maxRobotsRetries + 1} reads in a row: as RFC 9309 says for an unreachable robots.txt, its requests fail with RobotsUnreachableError for ${decision.forMs / 1000} s (robotsUnreachableDisallowSecs), then it is read again.`,
            );
            return { disallowForMs: decision.forMs, reason: failure.reason };
        case 'keepLastGood':
            integrationLog().warning(
                `robots.txt of ${origin} ${failure.reason}, ${options.maxRobotsRetries + 1} reads in a row: the rules of its last good read stay in force (RFC 9309 §2.4).`,
            );
            return undefined;
        case 'allow':
            integrationLog().warning(
                `robots.txt of ${origin} ${failure.reason}, ${options.maxRobotsRetries + 1} reads in a row: crawled without its rules (robotsUnreachableDisallowSecs: 0).`,
            );
            return undefined;
    }
}

/** One line for each setting that would still retire sessions on a rate-limit answer. */
function warnAboutSessionRetirement(manager: ThrottlerPort, crawler: AttachableCrawler): void {
    const codes = manager.options.defaultPolicy.backoffStatusCodes;
    // The session pool exists only once run() starts; its options are on the crawler from the start.
    const poolOptions = (crawler as { sessionPoolOptions?: { blockedStatusCodes?: number[] } }).sessionPoolOptions;
    const usesSessions = (crawler as { useSessionPool?: boolean }).useSessionPool !== false;
    const blocked = usesSessions ? (poolOptions?.blockedStatusCodes ?? [401, 403, 429]) : [];
    if (!codes.has(429) && blocked.includes(429)) {
        integrationLog().warning(
            'backoffStatusCodes leaves out 429 while the session pool treats 429 as blocked: 429 answers will retire sessions and spend retries. Add 429 to backoffStatusCodes.',
        );
    }
    if (crawler.retryOnBlocked && !codes.has(429)) {
        integrationLog().warning(
            'retryOnBlocked is on and 429 is not in backoffStatusCodes: 429 answers will rotate sessions instead of backing off.',
        );
    }
}
