import type {
    AddRequestsBatchedOptions,
    AddRequestsBatchedResult,
    Configuration,
    Dictionary,
    IRequestManager,
    Request,
    RequestOptions,
    RequestProvider,
    RequestQueueOperationOptions,
    RequestsLike,
    Source,
} from '@crawlee/core';
import { Configuration as CrawleeConfiguration, KeyValueStore, log as crawleeLog, RequestQueue } from '@crawlee/core';
import type { ProcessedRequest } from '@crawlee/types';

import type { Clock } from './time/clock';
import { domainKeyOfConfigured, domainKeyOfUrl } from './routing/domain-key';
import type { DomainState } from './pacing/domain-state';
import type { DomainStateStore } from './pacing/domain-state-store';
import { InMemoryDomainStateStore } from './pacing/domain-state-store';
import type { AttachableCrawler, NavigationContext } from './integration/crawler-integration';
import { attachCrawler, discardBody, spareSessionOnce } from './integration/crawler-integration';
import {
    PersistentRateLimitError,
    RequestThrottledError,
    ThrottlingOptionsError,
    ThrottledDomainLimitError,
    ThrottledRetriesExhaustedError,
} from './errors';
import type { StalledDomain } from './errors';
import { MinHeap } from './scheduling/min-heap';
import type { ResolvedThrottlingOptions, ThrottlingRequestManagerOptions } from './options/options';
import { resolveThrottlingOptions } from './options/options';
import type { PacingSignal } from './pacing/pacing-signal';
import { parsePersistedState, PERSISTED_STATE_VERSION } from './persistence/persisted-state';
import type { PersistedThrottlingState } from './persistence/persisted-state';
import { QueueNamespace } from './queues/queue-namespace';
import { listStoredQueueNames } from './queues/stored-queues';
import { readResponse } from './response/response-info';
import { parseRateLimitHeaders } from './response/rate-limit-headers';
import type { ResolvedPolicy } from './options/policy';
import type { RequestScopes } from './routing/request-scopes';
import { normalizeScope, readScopesDeclaration } from './routing/request-scopes';

/** The parts of a request (or request-like) that decide its scopes. */
type ScopedSource = { url: string; userData?: Record<string, unknown> };
import type { DomainSnapshot, Readiness } from './readiness/readiness';
import { DomainQueue } from './queues/domain-queue';
import { DomainRequestQueue, shrinkDedupCache } from './queues/domain-request-queue';

/**
 * Longest time a one-at-a-time domain's request holds the shared clock before its response: other
 * processes wait at most this long for a process that died with a request in flight.
 */
const SHARED_LEASE_MS = 30_000;

/** How often a domain held by another process's clock asks the shared clock again. */
const SHARED_RECHECK_MS = 100;

/** How many held-back requests one fetch may move out of `inner` before giving the slot back. */
const MAX_MOVES_PER_FETCH = 100;

/**
 * Runs for each origin of a domain before the first dispatch to that origin (e.g. reading its
 * robots.txt), and again once its last check is older than the gate's `recheckAfterMs`; the domain
 * is held back, without blocking any fetch, until the promise settles.
 */
export type DomainGate = (domainKey: string, firstUrl: string) => Promise<void | DomainGateOutcome>;

/**
 * What a check may answer: `'retry'` when it learned nothing (robots.txt answered 429). The origin is
 * then checked once more before its next request, which waits for the backoff the answer caused;
 * a second `'retry'` counts as checked.
 */
export type DomainGateOutcome = 'retry';

/** Options of {@link ThrottlingRequestManager.setDomainGate}. */
export interface DomainGateOptions {
    /**
     * Run the check of an origin again before dispatching to it once this long has passed since the
     * last one (RFC 9309: a robots.txt should not be cached for more than 24 hours).
     * @default Infinity (once per origin and process)
     */
    recheckAfterMs?: number;
}

/** Where a handed-out request came from, so its completion or reclaim goes back there. */
interface Handout {
    source: IRequestManager;
    domain?: DomainQueue;
    /** The concurrency slot it holds in its domain. */
    slot?: number;
    /** Its error count when handed out: a new network error on return is a backoff trigger. */
    errors?: number;
    /** Further scopes it holds a slot in (per-request scopes). */
    extras?: { scope: string; slot: number }[];
}

/** A domain filed in the waiting heap; stale once the domain was re-filed (another version). */
interface HeapItem {
    entry: DomainQueue;
    version: number;
}

/** What a dispatched request spent in each quota, so a reported real cost can correct it. */
interface Spend {
    at: number;
    costs: [scope: string, cost: number][];
}

/** Errors that say the server is overloaded or unreachable, not that our code failed. */
const NETWORK_ERROR =
    /ETIMEDOUT|ESOCKETTIMEDOUT|ECONNRESET|ECONNREFUSED|ECONNABORTED|EPIPE|EHOSTUNREACH|EAI_AGAIN|socket hang up|net::ERR_(?:CONNECTION|TIMED_OUT|EMPTY_RESPONSE)|Navigation timed out|navigation timeout|Timeout awaiting|Request timed out|ERR_GOT_REQUEST_ERROR/i;

/**
 * A Crawlee request manager that paces every throttled domain on two clocks (crawl delay and
 * backoff), keeps one `throttled-<domain>` queue per domain and never blocks a fetch.
 *
 * On Crawlee 3.x hand it to a crawler as `requestQueue` (the crawler's option validation rejects
 * `requestManager`); on v4 it goes to `requestManager`.
 */
export class ThrottlingRequestManager implements IRequestManager {
    /** Options with defaults applied. */
    readonly options: ResolvedThrottlingOptions;
    // Crawlee configuration for opening storages; undefined means the global one.
    private readonly config?: Configuration;
    // Time source for every decision.
    private readonly clock: Clock;
    // Pacing state per domain, behind an interface so several processes can share it later.
    private readonly states: DomainStateStore;
    // Queue bookkeeping per throttled domain key.
    private readonly domainQueues = new Map<string, DomainQueue>();
    // Names this manager's queues, apart from other managers' on the same storage.
    private readonly namespace: QueueNamespace;
    // First use: purge or restore, once.
    private initializing?: Promise<void>;
    // A state write in progress, and the one queued behind it (coalesces bursts of saves).
    private saving?: Promise<void>;
    private saveQueued?: Promise<void>;
    // Resolved policy per throttling key (scope settings over the defaults).
    private readonly policies = new Map<string, ResolvedPolicy>();
    // Path-prefix scopes per domain key, longest first: requests under them get their own key.
    private readonly pathScopes = new Map<string, string[]>();
    // Configured domain keys (empty under 'all').
    private readonly listedDomains: ReadonlySet<string>;
    // Domains with work that are ready now, served round-robin so none is drained first.
    private readonly readyRing: DomainQueue[] = [];
    // Domains with work that wait for a clock, ordered by when they become ready.
    private readonly waiting = new MinHeap<HeapItem>();
    // Which queue handed out each live request (by identity: uniqueKeys may collide across queues).
    private readonly handouts = new WeakMap<Request, Handout>();
    // What each dispatched request spent per scope (kept past completion for reportCost()).
    private readonly spends = new WeakMap<Request, Spend>();
    // Requests moved from `inner` into a domain queue: marked handled in `inner`, so not counted twice.
    private movedCount = 0;
    // Raised by `minIntervalEverywhere` signals; never lowered.
    private floorMs: number;
    // Alternates the first look between domain queues and `inner`, so neither starves.
    private preferInner = false;
    // The inner manager once opened, and the promise of opening it.
    private inner?: IRequestManager;
    private innerOpening?: Promise<IRequestManager>;
    // Forwarded onto every queue underneath, including ones opened later.
    private forwardedTimeoutMillis?: number;
    private forwardedLockSecs?: number;
    // Requests being retried because their domain refused them, with their retryCount before the
    // crawler's error handler raised it: a throttled retry must not spend a retry.
    private readonly throttledRetries = new WeakMap<Request, number>();
    // First-dispatch check per origin (robots.txt), set by the crawler integration.
    private domainGate?: DomainGate;
    // How old an origin's check may get before it runs again.
    private gateRecheckAfterMs = Infinity;
    // Crawl delay each origin's robots.txt declared, per domain key: a key spanning several origins
    // (registrableDomain) is paced by the largest, and a re-read replaces its origin's value.
    private readonly declaredCrawlDelays = new Map<string, Map<string, number>>();
    // Called when held-back work becomes ready, to wake the crawler's pool at once.
    private readonly wakeListeners = new Set<() => void>();
    // The pending wake-up timer and the time it fires.
    private wakeTimer?: NodeJS.Timeout;
    private wakeAt = Infinity;
    // A crawler wrote its settings onto this manager: it is serving a crawler.
    private servingCrawler = false;
    // Some integration listens to responses (attach() or handleResponse()).
    private integrated = false;
    private readonly log = crawleeLog.child({ prefix: 'ThrottlingRequestManager' });

    constructor(options: ThrottlingRequestManagerOptions, config?: Configuration) {
        this.options = resolveThrottlingOptions(options);
        this.config = config;
        this.clock = this.options.clock;
        this.states = this.options.stateStore ?? new InMemoryDomainStateStore();
        this.floorMs = this.options.minCrawlDelayMs;
        this.namespace = new QueueNamespace(this.options.persistStateKey);
        const { domains, throttleBy } = this.options;
        this.listedDomains = new Set(
            domains === 'all'
                ? []
                : domains.map((d, i) => {
                      try {
                          return domainKeyOfConfigured(d, throttleBy);
                      } catch (error) {
                          throw new ThrottlingOptionsError(
                              `Invalid ThrottlingRequestManager options: \`domains[${i}]\`: ${(error as Error).message}`,
                          );
                      }
                  }),
        );
        for (const key of this.listedDomains) this.states.update(key, () => undefined);
        for (const key of this.options.scopes.keys()) {
            const slash = key.indexOf('/');
            if (slash === -1) continue;
            const host = key.slice(0, slash);
            const prefixes = this.pathScopes.get(host) ?? [];
            prefixes.push(key.slice(slash));
            prefixes.sort((a, b) => b.length - a.length);
            this.pathScopes.set(host, prefixes);
        }
    }

    // ---- crawler-facing properties -------------------------------------------------------------

    /** Written by Crawlee's crawler constructor; forwarded to every queue underneath. */
    get internalTimeoutMillis(): number | undefined {
        return this.forwardedTimeoutMillis;
    }

    set internalTimeoutMillis(value: number | undefined) {
        this.servingCrawler = true;
        this.forwardedTimeoutMillis = value;
        this.forEachQueue((q) => forward(q, 'internalTimeoutMillis', value));
    }

    /** Written by Crawlee's crawler constructor; forwarded to every queue underneath. */
    get requestLockSecs(): number | undefined {
        return this.forwardedLockSecs;
    }

    set requestLockSecs(value: number | undefined) {
        this.forwardedLockSecs = value;
        this.forEachQueue((q) => forward(q, 'requestLockSecs', value));
    }

    /**
     * This manager, typed as the `requestQueue` option of Crawlee 3.x crawlers expects. Crawlee 3.x
     * rejects its own `requestManager` option at run time, while `requestQueue` accepts any object
     * with `fetchNextRequest` and `addRequest` and uses it as the request manager; only its
     * TypeScript type asks for a full `RequestProvider`. On Crawlee v4 pass the manager itself as
     * `requestManager` instead.
     */
    asRequestQueue(): RequestProvider {
        return this as unknown as RequestProvider;
    }

    /** The manager holding requests of unthrottled domains (opened on first use). */
    get innerManager(): IRequestManager | undefined {
        return this.inner;
    }

    /** Whether a throttling key (a domain key, or `host/path` of an endpoint scope) is paced here. */
    isThrottled(key: string): boolean {
        if (this.options.domains === 'all' || this.options.scopes.has(key)) return true;
        const slash = key.indexOf('/');
        return this.listedDomains.has(slash === -1 ? key : key.slice(0, slash));
    }

    /**
     * The throttling key of a URL: its domain key under `throttleBy`, or `host/path-prefix` when an
     * endpoint scope covers it.
     */
    domainKeyOf(url: string): string | undefined {
        const key = domainKeyOfUrl(url, this.options.throttleBy);
        if (key === undefined) return undefined;
        const prefixes = this.pathScopes.get(key);
        if (!prefixes) return key;
        let path: string;
        try {
            path = new URL(url).pathname;
        } catch {
            return key;
        }
        // Segment-aware: `/search` covers `/search` and `/search/...`, not `/searchlight`.
        const match = prefixes.find(
            (prefix) => path === prefix || path.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`),
        );
        return match ? `${key}${match}` : key;
    }

    /**
     * The scopes of a request: by default its domain, plus any in `userData.throttlingScopes`;
     * with `getScopes`, whatever it returns (the first scope holds the request's queue).
     */
    scopesOf(request: ScopedSource): RequestScopes | undefined {
        const { throttleBy, getScopes } = this.options;
        let declared: [string, number][] | undefined;
        let custom = false;
        try {
            const fromUser = getScopes?.(request);
            if (fromUser !== undefined) {
                declared = readScopesDeclaration(fromUser, throttleBy);
                custom = true;
            } else {
                declared = readScopesDeclaration(request.userData?.throttlingScopes, throttleBy);
            }
        } catch (error) {
            this.log.warningOnce(`Ignoring the scopes of ${request.url}: ${(error as Error).message}`);
            declared = undefined;
            custom = false;
        }
        if (custom && declared && declared.length > 0) {
            return { primary: declared[0][0], primaryCost: declared[0][1], extras: declared.slice(1) };
        }
        const domain = this.domainKeyOf(request.url);
        if (domain === undefined) return undefined;
        if (!declared?.length) return { primary: domain, primaryCost: 1, extras: [] };
        const own = declared.find(([scope]) => scope === domain);
        return {
            primary: domain,
            primaryCost: own ? own[1] : 1,
            extras: declared.filter(([scope]) => scope !== domain),
        };
    }

    /** The queue key of a request, if it is throttled here. */
    private routeOf(source: ScopedSource): { key: string } | undefined {
        if (this.options.getScopes) {
            const scopes = this.scopesOf(source);
            if (!scopes) return undefined;
            const domain = this.domainKeyOf(source.url);
            // A primary scope other than the domain was chosen by getScopes: always throttled.
            if (scopes.primary !== domain || this.isThrottled(scopes.primary)) return { key: scopes.primary };
            return undefined;
        }
        const key = this.domainKeyOf(source.url);
        return key !== undefined && this.isThrottled(key) ? { key } : undefined;
    }

    /**
     * Checks the scopes of a fetched request beyond its queue's (and every quota against the
     * request's cost). On success arms their clocks, takes their slots, spends the quotas and
     * returns the extra slots held; otherwise holds the queue until they allow it and returns false.
     */
    private admit(
        request: Request,
        entry: DomainQueue,
        now: number,
    ): { scope: string; slot: number }[] | undefined | false {
        const primaryPolicy = this.policyOf(entry.key);
        const hasDeclared = this.options.getScopes !== undefined || request.userData?.throttlingScopes !== undefined;
        if (!hasDeclared && !primaryPolicy.quota) return undefined;
        const scopes = hasDeclared ? this.scopesOf(request) : undefined;
        const primaryCost = scopes && scopes.primary === entry.key ? scopes.primaryCost : 1;
        const extras = scopes
            ? scopes.primary === entry.key
                ? scopes.extras
                : [[scopes.primary, scopes.primaryCost] as [string, number], ...scopes.extras]
            : [];
        let blockedUntil = 0;
        const primary = this.states.read(entry.key);
        if (primary && primaryPolicy.quota && !primary.quotaAllows(now, primaryCost, primaryPolicy.quota)) {
            blockedUntil = primary.nextQuotaWindow(now, primaryPolicy.quota);
        }
        for (const [scope, cost] of extras) {
            if (scope === entry.key) continue;
            const policy = this.policyOf(scope);
            const state = this.states.update(scope, (s) => s);
            let at = state.readyAt(policy, now);
            if (policy.quota && !state.quotaAllows(now, cost, policy.quota))
                at = Math.max(at, state.nextQuotaWindow(now, policy.quota));
            // A scope whose slots are all busy frees one on a completion; look again shortly.
            if (at === Number.POSITIVE_INFINITY) at = now + 50;
            if (at > now) blockedUntil = Math.max(blockedUntil, at);
        }
        if (blockedUntil > now) {
            entry.blockedUntil = blockedUntil;
            return false;
        }
        const held: { scope: string; slot: number }[] = [];
        const costs: [string, number][] = [[entry.key, primaryCost]];
        this.states.update(entry.key, (s) => s.spend(now, primaryCost, primaryPolicy.quota));
        for (const [scope, cost] of extras) {
            if (scope === entry.key) continue;
            const policy = this.policyOf(scope);
            const reservation = this.states.update(scope, (s) => {
                s.spend(now, cost, policy.quota);
                return s.dispatch(now, this.floorMs, policy, this.options.random);
            });
            held.push({ scope, slot: reservation.slot });
            costs.push([scope, cost]);
        }
        this.spends.set(request, { at: now, costs });
        return held;
    }

    /**
     * Corrects the quota spend of a request once its real cost is known (e.g. from a response
     * header): `cost` replaces the estimate in `scope` (default: every scope the request spent in).
     */
    reportCost(request: Request, cost: number, scope?: string): void {
        const spend = this.spends.get(request);
        if (!spend) return;
        const target = scope === undefined ? undefined : normalizeScope(scope, this.options.throttleBy);
        for (const pair of spend.costs) {
            if (target !== undefined && pair[0] !== target) continue;
            const delta = cost - pair[1];
            pair[1] = cost;
            const policy = this.policyOf(pair[0]);
            this.states.update(pair[0], (s) => s.adjustSpend(spend.at, delta, policy.quota));
        }
        // Quota may have been freed: queues held for it look again.
        const now = this.clock.now();
        for (const entry of this.domainQueues.values()) {
            if (entry.blockedUntil <= now) continue;
            entry.blockedUntil = 0;
            if (entry.scheduled === 'heap') {
                // Its heap item is now too late: retire it and file the domain again.
                entry.heapVersion += 1;
                entry.scheduled = undefined;
            }
            this.reschedule(entry, now);
        }
    }

    /**
     * Records a refusal against the scopes of a request whose backoff triggers include the status.
     * Returns false when none of them is paced here.
     */
    private recordRefusal(request: Request, statusCode: number, waitMs: number | undefined): boolean {
        const handout = this.handouts.get(request);
        const keys = scopeKeysOf(handout);
        if (keys.length === 0) return this.recordPacingSignal({ reason: 'rateLimited', url: request.url, waitMs });
        let paced = false;
        for (const key of keys) {
            if (!this.policyOf(key).backoffStatusCodes.has(statusCode)) continue;
            this.recordRateLimitOn(key, waitMs);
            paced = true;
        }
        return paced;
    }

    /** The policy in force for a throttling key. */
    policyOf(key: string): ResolvedPolicy {
        let policy = this.policies.get(key);
        if (!policy) {
            policy = this.options.scopes.get(key) ?? this.options.defaultPolicy;
            this.policies.set(key, policy);
        }
        return policy;
    }

    private backoffPolicy(policy: ResolvedPolicy) {
        return {
            baseDelayMs: policy.backoffMinDelayMs,
            maxDelayMs: policy.backoffMaxDelayMs,
            factor: policy.backoffFactor,
            windowMs: policy.backoffWindowMs,
            jitter: policy.jitter,
            random: this.options.random,
            rampup: policy.rampup,
        };
    }

    // ---- IRequestManager --------------------------------------------------------------------------

    async addRequest(requestLike: Source, options?: RequestQueueOperationOptions) {
        await this.ensureInitialized();
        const url = typeof requestLike === 'string' ? requestLike : requestLike.url;
        const target =
            url === undefined || hasRequestsFromUrl(requestLike)
                ? undefined
                : ((await this.targetOf(requestLike as ScopedSource, 'throw')) ?? undefined);
        if (!target) return (await this.getInner()).addRequest(requestLike, options);
        const info = await target.queue.addRequest(requestLike, options);
        if (!info.wasAlreadyPresent) this.noteAdded(target, 1);
        return info;
    }

    async addRequestsBatched(
        requests: RequestsLike,
        options: AddRequestsBatchedOptions = {},
    ): Promise<AddRequestsBatchedResult> {
        await this.ensureInitialized();
        const items: (Source & { url?: string })[] = [];
        for await (const item of requests as AsyncIterable<Source | string>)
            items.push(typeof item === 'string' ? { url: item } : item);

        const { maxNewRequests, ...passThrough } = options;
        const added: ProcessedRequest[] = [];
        const later: Promise<ProcessedRequest[]>[] = [];
        const overflow: string[] = [];
        let budget = maxNewRequests ?? Infinity;
        let cursor = 0;
        while (cursor < items.length && budget > 0) {
            // With a budget, send no more than it could admit, so requestsOverLimit is exact.
            const chunk = items.slice(cursor, maxNewRequests === undefined ? items.length : cursor + budget);
            cursor += chunk.length;
            const groups = new Map<DomainQueue | undefined, Source[]>();
            for (const item of chunk) {
                let target: DomainQueue | undefined;
                if (item.url !== undefined && !hasRequestsFromUrl(item)) {
                    const routed = await this.targetOf(item as ScopedSource, 'skip', false);
                    if (routed === null) {
                        overflow.push(this.routeOf(item as ScopedSource)?.key ?? item.url);
                        continue;
                    }
                    target = routed;
                }
                const group = groups.get(target) ?? [];
                group.push(item);
                groups.set(target, group);
            }
            for (const [target, group] of groups) {
                if (target?.saved) await target.saved;
                const queue = target ? target.queue : await this.getInner();
                const waitForAll = passThrough.waitForAllRequestsToBeAdded || maxNewRequests !== undefined;
                const result = await queue.addRequestsBatched(group, {
                    ...passThrough,
                    waitForAllRequestsToBeAdded: waitForAll,
                });
                const fresh = result.addedRequests.filter((r) => !r.wasAlreadyPresent).length;
                if (target) this.noteAdded(target, fresh);
                added.push(...result.addedRequests);
                budget -= fresh;
                if (!waitForAll) {
                    later.push(
                        result.waitForAllRequestsToBeAdded.then((rest) => {
                            if (target) this.noteAdded(target, rest.filter((r) => !r.wasAlreadyPresent).length);
                            return rest;
                        }),
                    );
                }
            }
        }
        const requestsOverLimit = maxNewRequests === undefined ? undefined : items.slice(cursor);
        if (overflow.length)
            throw new ThrottledDomainLimitError(this.options.maxThrottledDomains, [...new Set(overflow)]);
        return {
            addedRequests: added,
            waitForAllRequestsToBeAdded: Promise.all(later).then((lists) => lists.flat()),
            ...(requestsOverLimit ? { requestsOverLimit } : {}),
        } as AddRequestsBatchedResult;
    }

    async fetchNextRequest<T extends Dictionary = Dictionary>(): Promise<Request<T> | null> {
        await this.ensureInitialized();
        if (this.servingCrawler && !this.integrated) {
            this.log.warningOnce(
                'ThrottlingRequestManager is serving a crawler but was never attached: 429s and robots.txt crawl delays will not reach it. Call throttler.attach(crawler).',
            );
        }
        this.preferInner = !this.preferInner;
        if (this.preferInner) {
            return ((await this.fetchFromInner()) ?? (await this.fetchFromDomains())) as Request<T> | null;
        }
        return ((await this.fetchFromDomains()) ?? (await this.fetchFromInner())) as Request<T> | null;
    }

    async markRequestHandled(request: Request) {
        const handout = this.handoutOf(request);
        this.handouts.delete(request);
        const result = await handout.source.markRequestHandled(request);
        if (handout.domain) {
            const networkError = this.noteNetworkError(handout, request);
            this.completeHandout(handout);
            // A request that failed for good comes back with a new error message, and is no success.
            const failed = handout.errors !== undefined && (request.errorMessages?.length ?? 0) > handout.errors;
            if (!networkError)
                this.states.update(handout.domain.key, (s) => (failed ? s.recordGivenUp() : s.recordSuccess()));
        }
        return result;
    }

    /** Frees the request's slot in its domain and lets the domain be scheduled again. */
    private completeHandout(handout: Handout): void {
        const entry = handout.domain!;
        entry.inFlight = Math.max(0, entry.inFlight - 1);
        if (entry.sharedLease !== undefined) {
            // No response reached us (a network error, or a BasicCrawler that does not report them):
            // count the interval from now, as a response would have.
            const now = this.clock.now();
            this.states.update(entry.key, (s) => s.armAfterResponse(now, this.floorMs, this.policyOf(entry.key)));
            this.settleShared(entry, now);
        }
        if (handout.slot !== undefined) this.states.update(entry.key, (s) => s.release(handout.slot!));
        for (const extra of handout.extras ?? []) this.states.update(extra.scope, (s) => s.release(extra.slot));
        this.reschedule(entry, this.clock.now());
    }

    /** A request came back with a new network error or timeout: back its domain off. */
    private noteNetworkError(handout: Handout, request: Request): boolean {
        const entry = handout.domain;
        if (!entry || handout.errors === undefined || !this.policyOf(entry.key).backoffOnNetworkErrors) return false;
        const messages = request.errorMessages ?? [];
        if (messages.length <= handout.errors) return false;
        const last = String(messages[messages.length - 1] ?? '');
        if (!NETWORK_ERROR.test(last)) return false;
        this.recordPacingSignal({ reason: 'rateLimited', url: request.url });
        return true;
    }

    async reclaimRequest(request: Request, options?: RequestQueueOperationOptions) {
        const handout = this.handoutOf(request);
        this.handouts.delete(request);
        const retryCountBefore = this.throttledRetries.get(request);
        if (retryCountBefore !== undefined) {
            this.throttledRetries.delete(request);
            request.retryCount = retryCountBefore;
        }
        const result = await handout.source.reclaimRequest(request, options);
        const entry = handout.domain;
        if (entry) {
            if (retryCountBefore === undefined) this.noteNetworkError(handout, request);
            // A request reclaimed to `inner` is re-routed when fetched again; only count own queue's.
            if (handout.source === entry.queue) entry.queued += 1;
            this.completeHandout(handout);
        }
        return result;
    }

    async isEmpty(): Promise<boolean> {
        await this.ensureInitialized();
        if (this.firstReady(this.clock.now())) return false;
        const inner = await this.getInner();
        const empty = await inner.isEmpty();
        if (empty) this.scheduleWake();
        return empty;
    }

    async isFinished(): Promise<boolean> {
        const readiness = await this.checkReadiness();
        if (readiness.kind === 'stalled') {
            this.clearWake();
            await this.persistState();
            throw new PersistentRateLimitError(readiness.domains);
        }
        if (readiness.kind === 'finished') {
            this.clearWake();
            await this.persistState();
        }
        return readiness.kind === 'finished';
    }

    async handledCount(): Promise<number> {
        await this.ensureInitialized();
        const counts = await Promise.all(
            [this.getInner(), ...this.openQueues()].map(async (q) => (await q).handledCount()),
        );
        return counts.reduce((a, b) => a + b, 0) - this.movedCount;
    }

    getTotalCount(): number {
        let total = this.inner?.getTotalCount() ?? 0;
        for (const entry of this.domainQueues.values()) total += entry.opened?.getTotalCount() ?? 0;
        return total - this.movedCount;
    }

    getPendingCount(): number {
        let pending = this.inner?.getPendingCount() ?? 0;
        for (const entry of this.domainQueues.values()) pending += entry.opened?.getPendingCount() ?? 0;
        return pending;
    }

    async *[Symbol.asyncIterator](): AsyncGenerator<Request> {
        for (;;) {
            const request = await this.fetchNextRequest();
            if (!request) return;
            yield request;
        }
    }

    // ---- pacing ----------------------------------------------------------------------------------

    /**
     * Tells the manager what a response said about pacing. Returns whether the signal's domain is
     * paced by this manager (false: the signal was ignored, e.g. a 429 from an unthrottled domain).
     */
    recordPacingSignal(signal: PacingSignal): boolean {
        const now = this.clock.now();
        if (signal.reason === 'minIntervalEverywhere') {
            if (signal.intervalMs > this.floorMs) this.floorMs = signal.intervalMs;
            return true;
        }
        const key = this.domainKeyOf(signal.url);
        if (key === undefined || !this.isThrottled(key)) return false;
        const policy = this.policyOf(key);
        this.states.update(key, () => undefined);
        if (signal.reason === 'minInterval') {
            if (policy.ignoreRobotsCrawlDelay) return true;
            const byOrigin = this.declaredCrawlDelays.get(key) ?? new Map<string, number>();
            this.declaredCrawlDelays.set(key, byOrigin);
            byOrigin.set(originOf(signal.url), Math.max(0, signal.intervalMs));
            const crawlDelayMs = Math.max(...byOrigin.values());
            this.states.update(key, (s) => s.setCrawlDelay(crawlDelayMs));
            if (crawlDelayMs > 0 && (policy.explicit.delay || policy.explicit.concurrency)) {
                this.log.warningOnce(
                    `robots.txt of ${key} declares Crawl-delay: ${crawlDelayMs / 1000} s; the explicit settings of scope ${policy.scopeKey} win. Set ignoreRobotsCrawlDelay: true on that scope to silence this.`,
                );
            }
        } else {
            this.recordRateLimitOn(key, signal.waitMs);
        }
        const entry = this.domainQueues.get(key);
        if (entry) this.reschedule(entry, now);
        return true;
    }

    /** Backs one scope off (see {@link recordPacingSignal}). */
    private recordRateLimitOn(key: string, waitMs: number | undefined): void {
        const now = this.clock.now();
        const policy = this.policyOf(key);
        const outcome = this.states.update(key, (s) => s.recordRateLimit(now, waitMs, this.backoffPolicy(policy)));
        this.publishShared(key);
        // A backoff must survive a crash: save it now (coalesced), not only at the next persistState.
        if (outcome.escalated)
            void this.persistState().catch((error) =>
                this.log.warning(`Saving throttling state failed: ${String(error)}`),
            );
        if (outcome.cappedFrom) {
            const source =
                outcome.cappedFrom.source === 'retry-after' ? 'the Retry-After header' : 'exponential backoff';
            this.log.warning(
                `${key}: ${source} asked for ${Math.round(outcome.cappedFrom.requestedMs / 1000)} s; capped at ${policy.scopeKey ? `backoffMaxDelaySecs of scope ${policy.scopeKey}` : 'maxDelaySecs'} (${policy.backoffMaxDelayMs / 1000} s).`,
            );
        }
        const entry = this.domainQueues.get(key);
        if (entry) this.reschedule(entry, now);
    }

    /**
     * Wires a crawler to this manager in one call: its responses reach the manager (429s back off
     * the domain and are retried for free), its pool wakes when held-back work becomes ready, and
     * robots.txt crawl delays are read before the first request to each origin. Returns the manager.
     */
    attach(crawler: AttachableCrawler | object): this {
        attachCrawler(this, crawler as AttachableCrawler);
        return this;
    }

    /**
     * Checks one response of a request this manager handed out. When its status is one of
     * `backoffStatusCodes` and its domain is throttled, records a `rateLimited` signal (with the
     * `Retry-After` wait), discards the body and throws `RequestThrottledError`, which makes Crawlee
     * retry the request later through this manager without spending a retry or penalising the
     * session. `attach()` calls it from a post-navigation hook; `BasicCrawler` users call it in
     * their request handler with the response they got.
     */
    async handleResponse(context: NavigationContext, response: unknown): Promise<void> {
        this.integrated = true;
        const info = readResponse(response);
        if (!info) return;
        const { request } = context;
        const key = this.domainKeyOf(request.url);
        const now = this.clock.now();
        const limits = parseRateLimitHeaders(info.headers, now);
        const policy = key === undefined ? this.options.defaultPolicy : this.policyOf(key);
        const handout = this.handouts.get(request);
        const scopeKeys = handout?.domain ? scopeKeysOf(handout) : key === undefined ? [] : [key];
        const triggers = scopeKeys.length
            ? scopeKeys.some((k) => this.policyOf(k).backoffStatusCodes.has(info.statusCode))
            : policy.backoffStatusCodes.has(info.statusCode);
        for (const k of scopeKeys) {
            if (!this.isThrottled(k) && !handout) continue;
            this.states.update(k, (s) => {
                s.armAfterResponse(now, this.floorMs, this.policyOf(k));
                // The server answered: a run of refusals is broken, whatever the request handler makes of it.
                if (!triggers) s.recordAnswered();
            });
            this.publishShared(k);
        }
        if (handout?.domain) this.settleShared(handout.domain, now);
        if (!triggers) {
            if (key !== undefined && limits && this.isThrottled(key)) {
                this.states.update(key, (s) =>
                    s.announce(now, limits.remaining, limits.resetMs, policy.backoffMaxDelayMs),
                );
            }
            return;
        }
        const waitMs = limits?.waitMs;
        if (!this.recordRefusal(request, info.statusCode, waitMs)) {
            if (info.statusCode === 429) {
                this.log.warningOnce(
                    `${key ?? request.url} answered 429, but this throttler does not throttle it (domains: ${this.options.domains === 'all' ? "'all'" : this.options.domains.join(', ')}); add it to domains to back off.`,
                );
            }
            return;
        }
        const freeRetries =
            ((request.userData as Record<string, unknown>).__throttledRetries as number | undefined) ?? 0;
        if (freeRetries >= this.options.maxFreeRetries) {
            // Out of free retries: let Crawlee count this one like any failure.
            discardBody(response);
            throw new ThrottledRetriesExhaustedError(request.url, info.statusCode, this.options.maxFreeRetries);
        }
        (request.userData as Record<string, unknown>).__throttledRetries = freeRetries + 1;
        discardBody(response);
        spareSessionOnce(context.session);
        this.markThrottledRetry(request);
        throw new RequestThrottledError(request.url, info.statusCode, waitMs);
    }

    /**
     * Marks a request as refused by its domain: when the crawler reclaims it, its `retryCount` is
     * restored, so a throttled retry never spends one of `maxRequestRetries`.
     */
    markThrottledRetry(request: Request): void {
        this.throttledRetries.set(request, request.retryCount);
    }

    /** Sets the check run per origin before its first dispatch (robots.txt), and again when stale. */
    setDomainGate(gate: DomainGate | undefined, options: DomainGateOptions = {}): void {
        this.domainGate = gate;
        this.gateRecheckAfterMs = options.recheckAfterMs ?? Infinity;
    }

    /**
     * Calls `listener` whenever held-back work becomes ready (a clock ran out, a domain check
     * finished), so a crawler's pool can be woken instead of polling. Returns an unsubscribe.
     */
    onWake(listener: () => void): () => void {
        this.wakeListeners.add(listener);
        return () => {
            this.wakeListeners.delete(listener);
            if (this.wakeListeners.size === 0) this.clearWake();
        };
    }

    /** Records that responses reach this manager (set by the crawler integration). */
    markIntegrated(): void {
        this.integrated = true;
    }

    /** Stops any pending wake-up timer (the crawl ended). */
    clearWake(): void {
        if (this.wakeTimer) clearTimeout(this.wakeTimer);
        this.wakeTimer = undefined;
        this.wakeAt = Infinity;
    }

    /** The least time between two dispatches to any throttled domain, in ms. */
    get floorIntervalMs(): number {
        return this.floorMs;
    }

    /**
     * Where the crawl stands: `ready` (a request can leave now), `stalled` (a domain refused for too
     * long), `waiting` (work remains but every clock is running, or requests are in flight) or
     * `finished`. Precedence: ready > stalled > waiting > finished.
     */
    async checkReadiness(): Promise<Readiness> {
        await this.ensureInitialized();
        const inner = await this.getInner();
        const now = this.clock.now();
        if (this.firstReady(now)) return { kind: 'ready' };
        if (!(await inner.isEmpty())) return { kind: 'ready' };

        // Domains we count work for are unfinished without asking their queues: asking an empty
        // RequestQueue is a storage call (an API call on the Apify platform), and this runs on every
        // idle poll of the pool, so at thousands of domains it must not ask every queue.
        const counted = [...this.domainQueues.values()].filter(
            (entry) => entry.opened && (entry.queued > 0 || entry.inFlight > 0),
        );
        const stalled: StalledDomain[] = [];
        for (const entry of counted) {
            const stalledForMs = entry.queued > 0 ? (this.states.read(entry.key)?.stalledForMs(now) ?? 0) : 0;
            if (stalledForMs <= this.options.maxDomainStallMs) continue;
            // Ending the crawl is for real work only: our count may be ahead of the queue.
            if (await entry.opened!.isFinished()) entry.queued = 0;
            else stalled.push({ domain: entry.key, stalledForMs, queued: entry.queued });
        }
        if (this.firstReady(now)) return { kind: 'ready' };
        if (stalled.length > 0) return { kind: 'stalled', domains: stalled };

        let { readyAt, inFlight } = this.waitingSummary(counted, now);
        if (readyAt === null && inFlight === 0) {
            // Nothing counted is left: before calling the crawl finished, ask the quiet queues whether
            // they hold work we did not count (locked by a dead process, or added behind our back).
            const quiet = [...this.domainQueues.values()].filter(
                (entry) => entry.opened && entry.queued === 0 && entry.inFlight === 0,
            );
            const verdicts = await Promise.all(
                quiet.map(async (entry) => ({ entry, finished: await entry.opened!.isFinished() })),
            );
            const found = verdicts.filter((v) => !v.finished).map((v) => v.entry);
            for (const entry of found) {
                // Probe it again once its clocks allow.
                entry.queued = Math.max(1, entry.opened!.getPendingCount());
                this.reschedule(entry, now);
            }
            if (this.firstReady(now)) return { kind: 'ready' };
            ({ readyAt, inFlight } = this.waitingSummary(found, now));
        }
        const innerFinished = await inner.isFinished();
        if (readyAt !== null || inFlight > 0 || !innerFinished) return { kind: 'waiting', readyAt, inFlight };
        return { kind: 'finished' };
    }

    /** The earliest time one of `entries` with queued work becomes ready, and their requests in flight. */
    private waitingSummary(entries: DomainQueue[], now: number): { readyAt: number | null; inFlight: number } {
        let readyAt: number | null = null;
        let inFlight = 0;
        for (const entry of entries) {
            inFlight += entry.inFlight;
            if (entry.queued <= 0) continue;
            const at = this.entryReadyAt(entry, now);
            if (readyAt === null || at < readyAt) readyAt = at;
        }
        return { readyAt, inFlight };
    }

    /** Earliest time a waiting domain with work becomes ready (undefined when none waits). */
    nextReadyAt(): number | undefined {
        const now = this.clock.now();
        this.promoteDue(now);
        // Ring entries whose clocks were pushed back by a signal are re-filed by their real time.
        for (const entry of this.readyRing.splice(0)) {
            entry.scheduled = undefined;
            this.reschedule(entry, now);
        }
        if (this.readyRing.length > 0) return now;
        for (;;) {
            const key = this.waiting.peekKey();
            if (key === undefined) return undefined;
            const { entry, version } = this.waiting.peek()!;
            if (version !== entry.heapVersion || entry.scheduled !== 'heap') {
                this.waiting.pop();
                continue;
            }
            const actual = this.entryReadyAt(entry, now);
            if (actual <= key) return key;
            this.waiting.pop();
            entry.scheduled = undefined;
            this.reschedule(entry, now);
        }
    }

    /** A read-only view of every known domain's state, for users, reports and tests. */
    snapshot(): readonly DomainSnapshot[] {
        const now = this.clock.now();
        const out: DomainSnapshot[] = [];
        for (const state of this.states.list()) {
            const entry = this.domainQueues.get(state.domain);
            const policy = this.policyOf(state.domain);
            const interval = state.interval(now, this.floorMs, policy);
            out.push(
                Object.freeze({
                    domain: state.domain,
                    scope: policy.scopeKey,
                    ready: state.isReady(now, policy),
                    readyAt: state.readyAt(policy),
                    crawlDelayMs: state.crawlDelayMs,
                    intervalMs: interval.ms,
                    intervalReason: interval.reason,
                    concurrencyLimit: state.concurrencyLimit(policy),
                    penaltyMs: state.penaltyAt(now, policy),
                    rampup: state.rampupState
                        ? {
                              rate: state.rampupState.rate,
                              safeRate: state.rampupState.safeRate,
                              unsafeRate: state.rampupState.unsafeRate,
                          }
                        : undefined,
                    quota: policy.quota
                        ? {
                              limit: policy.quota.limit,
                              windowMs: policy.quota.windowMs,
                              spent: state.spentAt(now, policy.quota.windowMs),
                          }
                        : undefined,
                    nextDispatchAt: state.nextDispatchAt,
                    backoffUntil: state.backoffUntil,
                    backingOff: state.isBackingOff(now),
                    backoffExponent: state.effectiveExponent(now),
                    decayAt: state.decayAt,
                    stalledForMs: state.stalledForMs(now),
                    refusals: state.refusals,
                    dispatched: state.dispatched,
                    handled: state.handled,
                    queued: entry?.queued ?? 0,
                    inFlight: state.inFlight,
                }),
            );
        }
        return Object.freeze(out);
    }

    // ---- storage -----------------------------------------------------------------------------------

    /** Drops every throttled queue this manager knows and forgets all domain state. */
    async purge(): Promise<void> {
        await Promise.all(this.openQueues().map(async (q) => dropQueue(await q)));
        this.domainQueues.clear();
        this.readyRing.length = 0;
        this.waiting.clear();
        this.states.clear();
        for (const key of this.listedDomains) this.states.update(key, () => undefined);
        this.movedCount = 0;
    }

    /** Drops every queue underneath, `inner` included. */
    async drop(): Promise<void> {
        await this.purge();
        const inner = await this.getInner();
        await dropQueue(inner);
        this.inner = undefined;
        this.innerOpening = undefined;
    }

    // ---- internals ---------------------------------------------------------------------------------

    /** First use: opens `inner`, then purges earlier runs' queues or restores them (resume). */
    private ensureInitialized(): Promise<void> {
        this.initializing ??= (async () => {
            await this.getInner();
            const config = this.config ?? CrawleeConfiguration.getGlobalConfig();
            if (config.get('purgeOnStart')) await this.purgeStoredQueues();
            else await this.restore();
            const events = config.getEventManager();
            // Every domain queue listens to the crawler's events; without room for them, Node warns of a
            // leak once a crawl passes 50 domains.
            const emitter = (
                events as unknown as { events?: { setMaxListeners?(n: number): unknown; getMaxListeners?(): number } }
            ).events;
            const wanted = 2 * Math.max(this.options.maxThrottledDomains, this.listedDomains.size) + 1000;
            if (emitter?.setMaxListeners && (emitter.getMaxListeners?.() ?? 0) < wanted)
                emitter.setMaxListeners(wanted);
            // Crawlee's EventType is a const enum, which isolated modules cannot read: use its value.
            events.on('persistState' as never, () => {
                void this.persistState().catch((error) =>
                    this.log.warning(`Saving throttling state failed: ${String(error)}`),
                );
            });
        })();
        return this.initializing;
    }

    /** Drops this manager's `throttled-*` queues left by earlier runs (Crawlee purges only default storages). */
    private async purgeStoredQueues(): Promise<void> {
        const names = [...(await listStoredQueueNames(this.config))].filter((name) => this.namespace.owns(name));
        const opener = this.options.requestManagerOpener ?? ((name, opts) => DomainRequestQueue.open(name, opts));
        await Promise.all(names.map(async (name) => dropQueue(await opener(name, { config: this.config }))));
    }

    /** Reopens every known domain's queue and restores the clocks saved by an earlier run. */
    private async restore(): Promise<void> {
        const store = await KeyValueStore.open(null, { config: this.config });
        let parsed: ReturnType<typeof parsePersistedState>;
        try {
            parsed = parsePersistedState(await store.getValue(this.options.persistStateKey));
        } catch (error) {
            parsed = { ok: false, reason: `it could not be read (${String(error)})`, domains: [] };
        }
        if (parsed && !parsed.ok) {
            this.log.warning(
                `The throttling state saved under ${this.options.persistStateKey} is unusable: ${parsed.reason}. Clocks start fresh; known queues are still reopened.`,
            );
        }
        if (parsed?.ok) {
            this.floorMs = Math.max(this.floorMs, parsed.floorMs);
            for (const saved of parsed.states) {
                this.states.update(saved.domain, (state) => Object.assign(state, saved.toJSON()));
            }
        }
        const domains = new Set(parsed?.domains ?? []);
        for (const name of await listStoredQueueNames(this.config)) {
            const domain = this.namespace.domainOf(name);
            if (domain !== undefined) domains.add(domain);
        }
        for (const key of this.listedDomains) domains.add(key);
        const now = this.clock.now();
        await Promise.all(
            // Every queue of ours is served, even of a domain no longer listed: no request is stranded.
            [...domains].map(async (key) => {
                let entry = this.domainQueues.get(key);
                if (!entry) {
                    entry = new DomainQueue(key, this.namespace.nameOf(key));
                    this.domainQueues.set(key, entry);
                    this.states.update(key, () => undefined);
                }
                const queue = await this.openQueue(entry);
                // Without queue metadata on disk the pending count includes handled requests: ask the queue.
                if (!(await queue.isEmpty())) entry.queued += Math.max(1, queue.getPendingCount());
                this.reschedule(entry, now);
            }),
        );
    }

    /**
     * Saves discovered domains and every domain's clocks under `persistStateKey`. Calls made while
     * a write runs share the next write, so a batch that discovers many domains costs two writes.
     */
    async persistState(): Promise<void> {
        if (this.saveQueued) return this.saveQueued;
        if (this.saving) {
            this.saveQueued = this.saving
                .catch(() => undefined)
                .then(() => {
                    this.saveQueued = undefined;
                    return this.persistState();
                });
            return this.saveQueued;
        }
        this.saving = this.writeState().finally(() => {
            this.saving = undefined;
        });
        return this.saving;
    }

    private async writeState(): Promise<void> {
        const states: PersistedThrottlingState['states'] = {};
        for (const state of this.states.list()) states[state.domain] = state.toJSON();
        const record: PersistedThrottlingState = {
            version: PERSISTED_STATE_VERSION,
            savedAt: this.clock.now(),
            floorMs: this.floorMs,
            domains: [...this.domainQueues.keys()],
            states,
        };
        const store = await KeyValueStore.open(null, { config: this.config });
        await store.setValue(this.options.persistStateKey, record);
    }

    private storagePersists(): boolean {
        return (this.config ?? CrawleeConfiguration.getGlobalConfig()).get('persistStorage') !== false;
    }

    /** Arms one unref'd timer for the earliest ready time of held-back work. */
    private scheduleWake(): void {
        if (this.wakeListeners.size === 0) return;
        const at = this.nextReadyAt();
        if (at === undefined || at >= this.wakeAt) return;
        this.clearWake();
        this.wakeAt = at;
        // A millisecond late rather than early: a wake-up before the deadline finds nothing ready.
        const delay = Math.max(0, at - this.clock.now()) + 1;
        this.wakeTimer = setTimeout(() => {
            this.wakeTimer = undefined;
            this.wakeAt = Infinity;
            this.wake();
        }, delay);
        this.wakeTimer.unref();
    }

    private wake(): void {
        for (const listener of this.wakeListeners) listener();
    }

    /**
     * Whether the origin of `url` must be checked (robots.txt) before a request to it goes out. A
     * retry of a check that learned nothing is due only `atDispatch`, i.e. once the backoff its answer
     * caused has passed, not when more requests are added.
     */
    private needsGate(entry: DomainQueue, url: string, now: number, atDispatch = false): boolean {
        if (!this.domainGate) return false;
        const origin = originOf(url);
        if (atDispatch && entry.retryPending.has(origin)) return true;
        const checkedAt = entry.checkedOrigins.get(origin);
        return checkedAt === undefined || now - checkedAt >= this.gateRecheckAfterMs;
    }

    /** Starts the check of the origin of `url` if it is due, holding the domain back until it settles. */
    private maybeGate(entry: DomainQueue, url: string, atDispatch = false): void {
        const gate = this.domainGate;
        const now = this.clock.now();
        if (!gate || !this.needsGate(entry, url, now, atDispatch)) return;
        const origin = originOf(url);
        entry.retryPending.delete(origin);
        entry.checkedOrigins.set(origin, now);
        entry.gatesPending += 1;
        const release = (outcome?: void | DomainGateOutcome) => {
            if (outcome === 'retry' && !entry.retriedOrigins.has(origin)) {
                entry.retriedOrigins.add(origin);
                entry.retryPending.add(origin);
            }
            // Counted from when the answer came, so the next check finds the robots.txt cache expired too.
            entry.checkedOrigins.set(origin, this.clock.now());
            entry.gatesPending -= 1;
            this.reschedule(entry, this.clock.now());
            this.wake();
        };
        gate(entry.key, url).then(release, (error: unknown) => {
            this.log.warning(
                `The first-dispatch check of ${origin} (${entry.key}) failed; crawling it without: ${String(error)}`,
            );
            release();
        });
    }

    private async getInner(): Promise<IRequestManager> {
        if (this.inner) return this.inner;
        this.innerOpening ??= (async () => {
            const { inner } = this.options;
            const opened =
                inner === undefined
                    ? await RequestQueue.open(null, { config: this.config })
                    : typeof inner === 'function'
                      ? await inner()
                      : inner;
            forward(opened, 'internalTimeoutMillis', this.forwardedTimeoutMillis);
            forward(opened, 'requestLockSecs', this.forwardedLockSecs);
            this.inner = opened;
            return opened;
        })();
        return this.innerOpening;
    }

    /**
     * The domain queue a URL's request belongs to; undefined for `inner`. When a new domain would
     * exceed `maxThrottledDomains`: throws (`'throw'`) or returns null (`'skip'`).
     */
    private async targetOf(
        source: ScopedSource,
        onLimit: 'throw' | 'skip',
        awaitSaved = true,
    ): Promise<DomainQueue | undefined | null> {
        const route = this.routeOf(source);
        if (!route) return undefined;
        const { key } = route;
        const url = source.url;
        let entry = this.domainQueues.get(key);
        if (!entry) {
            if (this.options.domains === 'all' && this.domainQueues.size >= this.options.maxThrottledDomains) {
                if (onLimit === 'skip') return null;
                throw new ThrottledDomainLimitError(this.options.maxThrottledDomains, [key]);
            }
            entry = new DomainQueue(key, this.namespace.nameOf(key));
            this.domainQueues.set(key, entry);
            this.states.update(key, () => undefined);
            // Saved before its first request lands, so a crash in between cannot strand the queue.
            // Discoveries made while a write runs share the next write. Storage that does not
            // persist loses everything in a crash anyway: its domains are saved with the clocks.
            if (this.options.domains === 'all' && this.storagePersists()) entry.saved = this.persistState();
        }
        this.maybeGate(entry, url);
        await this.openQueue(entry);
        if (awaitSaved && entry.saved) await entry.saved;
        return entry;
    }

    private async openQueue(entry: DomainQueue): Promise<IRequestManager> {
        if (entry.opened) return entry.opened;
        entry.opening ??= (async () => {
            const opener = this.options.requestManagerOpener ?? ((name, opts) => DomainRequestQueue.open(name, opts));
            const queue = await opener(entry.queueName, { config: this.config });
            shrinkDedupCache(queue);
            forward(queue, 'internalTimeoutMillis', this.forwardedTimeoutMillis);
            forward(queue, 'requestLockSecs', this.forwardedLockSecs);
            entry.opened = queue;
            return queue;
        })();
        return entry.opening;
    }

    private openQueues(): Promise<IRequestManager>[] {
        return [...this.domainQueues.values()].filter((e) => e.opened || e.opening).map((e) => this.openQueue(e));
    }

    private forEachQueue(fn: (queue: IRequestManager) => void): void {
        if (this.inner) fn(this.inner);
        for (const entry of this.domainQueues.values()) if (entry.opened) fn(entry.opened);
    }

    /** Counts new work in a domain queue and makes sure the domain is scheduled. */
    private noteAdded(entry: DomainQueue, count: number): void {
        if (count <= 0) return;
        entry.queued += count;
        this.reschedule(entry, this.clock.now());
    }

    /**
     * When a domain's queue may hand out next: its scope's clocks, slots and quota, and a hold for
     * the head request's other scopes. Infinity while every slot is in use.
     */
    private entryReadyAt(entry: DomainQueue, now: number): number {
        const state = this.states.read(entry.key);
        return Math.max(state ? state.readyAt(this.policyOf(entry.key), now) : 0, entry.blockedUntil);
    }

    /** Puts a domain with work where it belongs: the ready ring or the waiting heap. */
    private reschedule(entry: DomainQueue, now: number): void {
        if (entry.queued <= 0 || entry.scheduled || entry.gated) return;
        const state = this.states.read(entry.key);
        const readyAt = this.entryReadyAt(entry, now);
        // All slots busy: a completion reschedules the domain.
        if (readyAt === Number.POSITIVE_INFINITY) {
            if (state) this.states.update(entry.key, (s) => s.noteSlotBound(now, this.policyOf(entry.key)));
            return;
        }
        if (readyAt <= now) {
            entry.scheduled = 'ring';
            this.readyRing.push(entry);
        } else {
            entry.scheduled = 'heap';
            this.waiting.push(readyAt, { entry, version: ++entry.heapVersion });
        }
    }

    /** Moves every domain whose clocks have run out from the heap to the ring. */
    private promoteDue(now: number): void {
        while (this.waiting.size > 0 && this.waiting.peekKey()! <= now) {
            const { entry, version } = this.waiting.pop()!;
            if (version !== entry.heapVersion || entry.scheduled !== 'heap') continue;
            entry.scheduled = undefined;
            this.reschedule(entry, now);
        }
    }

    /** The first ready domain with work, re-filing stale ring entries in front of it. */
    private firstReady(now: number): DomainQueue | undefined {
        this.promoteDue(now);
        while (this.readyRing.length > 0) {
            const entry = this.readyRing[0];
            if (entry.queued > 0 && !entry.gated && this.entryReadyAt(entry, now) <= now) return entry;
            this.readyRing.shift();
            entry.scheduled = undefined;
            this.reschedule(entry, now);
        }
        return undefined;
    }

    /** Takes the next ready domain with work from the ring, re-filing stale entries. */
    private takeReady(now: number): DomainQueue | undefined {
        for (;;) {
            const entry = this.readyRing.shift();
            if (!entry) return undefined;
            entry.scheduled = undefined;
            if (entry.queued <= 0 || entry.gated) continue;
            if (this.entryReadyAt(entry, now) > now) {
                this.reschedule(entry, now);
                continue;
            }
            return entry;
        }
    }

    private async fetchFromDomains(): Promise<Request | null> {
        const now = this.clock.now();
        this.promoteDue(now);
        for (;;) {
            const entry = this.takeReady(now);
            if (!entry) return null;
            const queue = await this.openQueue(entry);
            // Arm the clock before awaiting, so a concurrent fetch cannot dispatch into this window.
            const reservation = this.states.update(entry.key, (s) =>
                s.dispatch(now, this.floorMs, this.policyOf(entry.key), this.options.random),
            );
            entry.queued -= 1;
            entry.inFlight += 1;
            let shared: boolean;
            try {
                shared = this.reserveShared(entry, reservation, now);
            } catch (error) {
                this.undoDispatch(entry, reservation, 1);
                throw error;
            }
            if (!shared) {
                // Another process holds this domain's window: wait for it like for our own clocks.
                this.undoDispatch(entry, reservation, 1);
                this.reschedule(entry, now);
                continue;
            }
            this.reschedule(entry, now);
            let request: Request | null;
            try {
                request = await queue.fetchNextRequest();
            } catch (error) {
                this.undoDispatch(entry, reservation, 1);
                throw error;
            }
            if (request && this.needsGate(entry, request.url, now, true)) {
                // An origin not checked yet in this process (a domain restored from an earlier run, a
                // new subdomain under a registrable-domain key) or checked too long ago: check it first.
                this.undoDispatch(entry, reservation, 1);
                await queue.reclaimRequest(request, { forefront: true });
                this.maybeGate(entry, request.url, true);
                continue;
            }
            if (request) {
                const admitted = this.admit(request, entry, now);
                if (admitted === false) {
                    // Another scope of this request (or its quota) says not yet: it waits at the head.
                    this.undoDispatch(entry, reservation, 1);
                    await queue.reclaimRequest(request, { forefront: true });
                    this.reschedule(entry, now);
                    continue;
                }
                return this.handOut(request, queue, entry, reservation.slot, admitted);
            }
            // Our count was ahead of the queue (e.g. requests locked elsewhere): give the slot back.
            this.undoDispatch(entry, reservation, 0);
            entry.queued = 0;
        }
    }

    /** Remembers where a request came from and what it holds, and hands it out. */
    private handOut(
        request: Request,
        source: IRequestManager,
        entry: DomainQueue,
        slot: number,
        extras: Handout['extras'],
    ): Request {
        this.handouts.set(request, { source, domain: entry, slot, errors: request.errorMessages?.length ?? 0, extras });
        return request;
    }

    private undoDispatch(entry: DomainQueue, reservation: ReturnType<DomainState['dispatch']>, requeue: number): void {
        this.states.update(entry.key, (s) => s.cancelDispatch(reservation));
        entry.inFlight -= 1;
        entry.queued += requeue;
        // Nothing went out: give a shared lease back at once.
        this.settleShared(entry, this.clock.now());
    }

    /**
     * Reserves a dispatch our own clocks allowed in the clocks shared with other processes, if any.
     * When they say not yet, the domain is held until then and false is returned. A one-at-a-time
     * domain leases the shared clock until its response (at most {@link SHARED_LEASE_MS}), so that,
     * as inside one process, the next request of any process leaves an interval after the response.
     */
    private reserveShared(entry: DomainQueue, reservation: ReturnType<DomainState['dispatch']>, now: number): boolean {
        const shared = this.options.sharedClock;
        if (!shared) return true;
        const oneAtATime = this.states.read(entry.key)?.concurrencyLimit(this.policyOf(entry.key)) === 1;
        const nextAt = oneAtATime
            ? Math.max(reservation.armedNextDispatchAt, now + SHARED_LEASE_MS)
            : reservation.armedNextDispatchAt;
        const answer = shared.reserve(entry.key, now, nextAt);
        if (answer.granted) {
            if (oneAtATime) entry.sharedLease = nextAt;
            return true;
        }
        // The shared clock may be a lease that ends early (at the holder's response), so look again
        // soon rather than at its end.
        entry.blockedUntil = Math.max(entry.blockedUntil, Math.min(answer.notBefore, now + SHARED_RECHECK_MS));
        return false;
    }

    /**
     * Ends this process's lease of the shared clock of `entry`, if it holds one: the next dispatch
     * may go when our own clock says (at the earliest `earliest`).
     */
    private settleShared(entry: DomainQueue, earliest: number): void {
        const shared = this.options.sharedClock;
        const lease = entry.sharedLease;
        if (!shared || lease === undefined) return;
        entry.sharedLease = undefined;
        const nextAt = Math.max(this.states.read(entry.key)?.nextDispatchAt ?? 0, earliest);
        try {
            shared.settle(entry.key, lease, nextAt);
        } catch (error) {
            this.log.warningOnce(
                `Could not update the shared clocks of ${entry.key}; other processes wait for the lease to run out: ${String(error)}`,
            );
        }
    }

    /** Tells the shared clocks (if any) what our clocks of `key` now say; a failure only costs the sharing. */
    private publishShared(key: string): void {
        const shared = this.options.sharedClock;
        const state = shared && this.states.read(key);
        if (!shared || !state) return;
        const entry = this.domainQueues.get(key);
        try {
            // While we hold the lease, its end carries our next dispatch time (settleShared).
            shared.extend(key, {
                nextAt: entry?.sharedLease === undefined ? state.nextDispatchAt : undefined,
                backoffUntil: state.backoffUntil,
            });
        } catch (error) {
            this.log.warningOnce(
                `Could not update the shared clocks of ${key}; pacing across processes may slip: ${String(error)}`,
            );
        }
    }

    /**
     * Serves `inner`. A request of a throttled domain is paced like any other: dispatched if its
     * domain is ready, otherwise moved into the domain's queue (copy added first, then the original
     * marked handled; if the add fails the original goes back to the front of `inner`).
     */
    private async fetchFromInner(): Promise<Request | null> {
        const inner = await this.getInner();
        for (let moves = 0; moves < MAX_MOVES_PER_FETCH; moves++) {
            const request = await inner.fetchNextRequest();
            if (!request) return null;
            const url = request.url;
            let entry: DomainQueue | null | undefined;
            try {
                entry = await this.targetOf(request, 'skip');
            } catch (error) {
                await inner.reclaimRequest(request, { forefront: true });
                throw error;
            }
            if (!entry) {
                if (entry === null)
                    this.log.warningOnce(
                        `maxThrottledDomains reached: requests of ${this.domainKeyOf(url)} are served unthrottled.`,
                    );
                this.handouts.set(request, { source: inner });
                return request;
            }
            const now = this.clock.now();
            const policy = this.policyOf(entry.key);
            if (!entry.gated && this.entryReadyAt(entry, now) <= now) {
                const reservation = this.states.update(entry.key, (s) =>
                    s.dispatch(now, this.floorMs, policy, this.options.random),
                );
                let shared: boolean;
                try {
                    shared = this.reserveShared(entry, reservation, now);
                } catch (error) {
                    this.states.update(entry.key, (s) => s.cancelDispatch(reservation));
                    await inner.reclaimRequest(request, { forefront: true });
                    throw error;
                }
                const admitted = shared && this.admit(request, entry, now);
                if (admitted !== false) {
                    entry.inFlight += 1;
                    return this.handOut(request, inner, entry, reservation.slot, admitted);
                }
                this.states.update(entry.key, (s) => s.cancelDispatch(reservation));
                this.settleShared(entry, now);
            }
            try {
                const info = await entry.queue.addRequest(copyOf(request), { forefront: true });
                if (!info.wasAlreadyPresent) this.noteAdded(entry, 1);
            } catch (error) {
                this.log.error(
                    `Could not move a held-back request of ${entry.key} into its queue; it stays in inner.`,
                    {
                        url,
                        error: String(error),
                    },
                );
                await inner.reclaimRequest(request, { forefront: true });
                return null;
            }
            await inner.markRequestHandled(request);
            this.movedCount += 1;
        }
        return null;
    }

    /** The handout of a request; falls back to routing by URL when the object is not ours. */
    private handoutOf(request: Request): Handout {
        const known = this.handouts.get(request);
        if (known) return known;
        const key = this.domainKeyOf(request.url);
        const entry = key === undefined ? undefined : this.domainQueues.get(key);
        if (entry?.opened) return { source: entry.opened, domain: entry };
        if (!this.inner)
            throw new Error(`ThrottlingRequestManager: ${request.url} was never handed out by this manager`);
        return { source: this.inner };
    }
}

/** Every scope a handed-out request holds: its queue's, then the others it cleared. */
function scopeKeysOf(handout: Handout | undefined): string[] {
    return handout?.domain ? [handout.domain.key, ...(handout.extras ?? []).map((e) => e.scope)] : [];
}

/** A fresh request carrying everything of `request` but its queue identity (as storage would). */
function copyOf(request: Request): RequestOptions {
    const { id: _id, ...rest } = JSON.parse(JSON.stringify(request)) as RequestOptions;
    return rest;
}

/** The origin of a URL, or the URL itself when it does not parse (it then counts as its own origin). */
function originOf(url: string): string {
    try {
        return new URL(url).origin;
    } catch {
        return url;
    }
}

function hasRequestsFromUrl(source: Source | string): boolean {
    return typeof source === 'object' && source !== null && 'requestsFromUrl' in source;
}

function forward(
    queue: IRequestManager,
    key: 'internalTimeoutMillis' | 'requestLockSecs',
    value: number | undefined,
): void {
    if (value !== undefined) (queue as unknown as Record<string, unknown>)[key] = value;
}

async function dropQueue(queue: IRequestManager): Promise<void> {
    const droppable = queue as IRequestManager & { drop?: () => Promise<void> };
    if (typeof droppable.drop === 'function') await droppable.drop();
}
