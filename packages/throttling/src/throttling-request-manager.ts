import type {
    AddRequestsBatchedOptions,
    AddRequestsBatchedResult,
    Configuration,
    Dictionary,
    IRequestManager,
    Request,
    RequestProvider,
    RequestQueueOperationOptions,
    RequestsLike,
    Source,
} from '@crawlee/core';
import { log as crawleeLog } from '@crawlee/core';

import type { Collaborators } from './orchestration/assemble';
import { assemble } from './orchestration/assemble';
import type { AttachableCrawler } from './integration/crawler-integration';
import { attachCrawler } from './integration/crawler-integration';
import { InvalidArgumentError } from './core/errors';
import type { ThrottlingEvents, ThrottlingListener } from './core/throttling-events';
import type { ResolvedThrottlingOptions } from './config/resolved-options';
import type { ThrottlingRequestManagerOptions } from './options/options';
import { resolveThrottlingOptions } from './config/resolve-options';
import { storageSharedAcrossProcesses } from './queues/shared-queue-discovery';
import type { ResolvedPolicy } from './pacing/policy';
import type { ScopeSettings } from './options/scope-settings';
import type { PacingSignal, UrlLessPacingSignal } from './orchestration/scoped-signal';
import type { DomainSnapshot, Readiness } from './readiness/readiness';
import type { DomainStatistics } from './readiness/statistics';
import type { NavigationContext } from './orchestration/response-interpreter';
import type { RequestScopes } from './options/request-scopes';
import type { ScopedSource } from './scopes/scope-router';

/**
 * A Crawlee request manager that paces every throttled domain on two clocks (crawl delay and
 * backoff), keeps one `throttled-<domain>` queue per domain (or, with `queueLayout: 'shared'`, one
 * shared queue and a bounded window in memory) and never blocks a fetch.
 *
 * On Crawlee 3.x hand it to a crawler as `requestQueue` (the crawler's option validation rejects
 * `requestManager`); on v4 it goes to `requestManager`. The work is done by collaborators, each in
 * a file of its own (see docs/architecture.md); this class builds them and delegates.
 */
export class ThrottlingRequestManager implements IRequestManager {
    /** Options with defaults applied. */
    readonly options: ResolvedThrottlingOptions;
    // The collaborators that do the work (see docs/architecture.md).
    private readonly parts: Collaborators;
    // First use: purge or restore, once.
    private initializing?: Promise<void>;
    // A crawler wrote its settings onto this manager: it is serving a crawler.
    private servingCrawler = false;
    private readonly log = crawleeLog.child({ prefix: 'ThrottlingRequestManager' });

    constructor(options: ThrottlingRequestManagerOptions, config?: Configuration) {
        this.options = resolveThrottlingOptions(options, {
            sharedAcrossProcesses: storageSharedAcrossProcesses(config),
        });
        this.parts = assemble(this.options, config, this.log);
    }

    // ---- crawler-facing properties -------------------------------------------------------------

    /** Written by Crawlee's crawler constructor; forwarded to every queue underneath. */
    get internalTimeoutMillis(): number | undefined {
        return this.parts.registry.getForwarded('internalTimeoutMillis');
    }

    set internalTimeoutMillis(value: number | undefined) {
        this.servingCrawler = true;
        this.parts.registry.forward('internalTimeoutMillis', value);
    }

    /** Written by Crawlee's crawler constructor; forwarded to every queue underneath. */
    get requestLockSecs(): number | undefined {
        return this.parts.registry.getForwarded('requestLockSecs');
    }

    set requestLockSecs(value: number | undefined) {
        this.parts.registry.forward('requestLockSecs', value);
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
        return this.parts.registry.openedInner;
    }

    /** Whether a throttling key (a domain key, or `host/path` of an endpoint scope) is paced here. */
    isThrottled(key: string): boolean {
        return this.parts.router.isThrottled(key);
    }

    /** The throttling key of a URL: its domain key, or `host/path-prefix` when an endpoint scope covers it. */
    domainKeyOf(url: string): string | undefined {
        return this.parts.router.domainKeyOf(url);
    }

    /** The scopes of a request: its domain plus `userData.throttlingScopes`, or what `getScopes` returns. */
    scopesOf(request: ScopedSource): RequestScopes | undefined {
        return this.parts.router.scopesOf(request);
    }

    /** The policy in force for a throttling key. */
    policyOf(key: string): ResolvedPolicy {
        return this.parts.router.policyOf(key);
    }

    /**
     * Changes a scope's settings while the crawl runs (`concurrency`, `delaySecs`, backoff, rampup,
     * quota, ...): merged into what the scope had, validated like the options (a bad value throws
     * `ThrottlingOptionsError`), applied to the next dispatch, and saved, so a resumed crawl keeps it.
     * `scope` is a domain, a `host/path` endpoint or an `@named` scope; a new one is created.
     */
    updateScope(scope: string, settings: ScopeSettings): void {
        this.parts.editor.update(scope, settings);
    }

    /**
     * Corrects the quota spend of a request once its real cost is known (e.g. from a response
     * header): `cost` replaces the estimate in `scope` (default: every scope the request spent in).
     */
    reportCost(request: Request, cost: number, scope?: string): void {
        this.parts.quotas.reportCost(request, cost, scope);
    }

    // ---- IRequestManager --------------------------------------------------------------------------

    /** @inheritdoc */
    async addRequest(requestLike: Source, options?: RequestQueueOperationOptions) {
        await this.ensureInitialized();
        return this.parts.intake.add(requestLike, options);
    }

    /** @inheritdoc */
    async addRequestsBatched(
        requests: RequestsLike,
        options?: AddRequestsBatchedOptions,
    ): Promise<AddRequestsBatchedResult> {
        await this.ensureInitialized();
        return this.parts.intake.addBatched(requests, options);
    }

    /** @inheritdoc */
    async fetchNextRequest<T extends Dictionary = Dictionary>(): Promise<Request<T> | null> {
        await this.ensureInitialized();
        if (this.servingCrawler && !this.parts.port.integrated) {
            this.log.warningOnce(
                'ThrottlingRequestManager is serving a crawler but was never attached: 429s and robots.txt crawl delays will not reach it. Call throttler.attach(crawler).',
            );
        }
        return (await this.parts.fetcher.fetch()) as Request<T> | null;
    }

    /** @inheritdoc */
    async markRequestHandled(request: Request) {
        return this.parts.completions.markHandled(request);
    }

    /** @inheritdoc */
    async reclaimRequest(request: Request, options?: RequestQueueOperationOptions) {
        return this.parts.completions.reclaim(request, options);
    }

    /** @inheritdoc */
    async isEmpty(): Promise<boolean> {
        await this.ensureInitialized();
        return this.parts.probe.isEmpty();
    }

    /**
     * @inheritdoc
     * @throws PersistentRateLimitError when a domain has refused everything for `maxDomainStallSecs`.
     */
    async isFinished(): Promise<boolean> {
        let readiness = await this.checkReadiness();
        // On storage shared by several processes, domain queues others opened meanwhile count too.
        if (readiness.kind === 'finished' && (await this.parts.persister.adoptSharedQueues()).adopted > 0)
            readiness = await this.checkReadiness();
        return this.parts.end.settle(readiness);
    }

    /** @inheritdoc */
    async handledCount(): Promise<number> {
        await this.ensureInitialized();
        return this.parts.totals.handled();
    }

    /** @inheritdoc */
    getTotalCount(): number {
        return this.parts.totals.total();
    }

    /** @inheritdoc */
    getPendingCount(): number {
        return this.parts.totals.pending();
    }

    async *[Symbol.asyncIterator](): AsyncGenerator<Request> {
        for (;;) {
            const request = await this.fetchNextRequest();
            if (!request) return;
            yield request;
        }
    }

    // ---- pacing and integration -------------------------------------------------------------------

    /**
     * Calls `listener` on every `name` event (`domainAdded`, `backoff`, `recovered`, `stalled`), each
     * carrying the domain, the reason and the figures; returns the unsubscribe. See docs/policy.md.
     */
    on<K extends keyof ThrottlingEvents>(name: K, listener: ThrottlingListener<K>): () => void {
        return this.parts.events.on(name, listener);
    }

    /** Removes a listener added with {@link on}. */
    off<K extends keyof ThrottlingEvents>(name: K, listener: ThrottlingListener<K>): void {
        this.parts.events.off(name, listener);
    }

    /**
     * Tells the manager what a response said about pacing. Returns whether some domain paced here took
     * it (false: the signal was ignored, e.g. a 429 from an unthrottled domain, or a floor for every
     * domain when none is throttled). Takes this package's shape (`url` inside the signal) or Crawlee
     * v4's (`recordPacingSignal(url, signal)`). A `scope` this manager cannot honour throws.
     */
    recordPacingSignal(signal: PacingSignal): boolean;
    recordPacingSignal(url: string, signal: UrlLessPacingSignal): boolean;
    recordPacingSignal(signalOrUrl: PacingSignal | string, v4Signal?: UrlLessPacingSignal): boolean {
        const { port } = this.parts;
        if (typeof signalOrUrl !== 'string') return port.recordPacingSignal(signalOrUrl);
        if (!v4Signal) throw new InvalidArgumentError('recordPacingSignal(url, signal): the signal is missing');
        return port.recordPacingSignal({ ...v4Signal, url: signalOrUrl } as PacingSignal);
    }

    /**
     * Wires a crawler to this manager in one call: its responses reach the manager (429s back off
     * the domain and are retried for free), its pool wakes when held-back work becomes ready, and
     * robots.txt crawl delays are read before the first request to each origin. Returns the manager.
     */
    attach(crawler: AttachableCrawler | object): this {
        attachCrawler(this.parts.port, crawler as AttachableCrawler, this);
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
        await this.parts.port.handleResponse(context, response);
    }

    /**
     * Throws `DomainUnreachableError` (or `CrawlDelayTooLongError`) for a request whose domain spent its error budget
     * (`maxConsecutiveErrors` network errors in a row), so it fails without being sent. `attach()`
     * calls it from a pre-navigation hook; `BasicCrawler` users call it before sending.
     */
    checkReachable(context: { request: Request }): void {
        this.parts.port.checkReachable(context);
    }

    /**
     * Marks a request as refused by its domain: when the crawler reclaims it, its `retryCount` is
     * restored, so a throttled retry never spends one of `maxRequestRetries`.
     */
    markThrottledRetry(request: Request): void {
        this.parts.handouts.markThrottledRetry(request);
    }

    /** The least time between two dispatches to any throttled domain, in ms. */
    get floorIntervalMs(): number {
        return this.parts.floor.ms;
    }

    /**
     * Where the crawl stands: `ready` (a request can leave now), `stalled` (a domain refused for too
     * long), `waiting` (work remains but every clock is running, or requests are in flight) or
     * `finished`. Precedence: ready > stalled > waiting > finished.
     */
    async checkReadiness(): Promise<Readiness> {
        await this.ensureInitialized();
        return this.parts.probe.check();
    }

    /** Crawlee v4's name for {@link checkReadiness}: the same answer (`status`: ready, waiting, stalled, finished). */
    async readiness(): Promise<Readiness> {
        return this.checkReadiness();
    }

    /**
     * Per-domain statistics: requests, handled, refused, free retries, time backed off, the learned
     * rate and the crawl delay. Logged as a summary when the crawl ends, too.
     */
    stats(): readonly DomainStatistics[] {
        return this.parts.report.stats();
    }

    /** A read-only view of every known domain's state, for users, reports and tests. */
    snapshot(): readonly DomainSnapshot[] {
        return this.parts.report.snapshot();
    }

    // ---- storage -----------------------------------------------------------------------------------

    /** Drops every throttled queue this manager knows and forgets all domain state. */
    async purge(): Promise<void> {
        return this.parts.purger.purge();
    }

    /** Drops every queue underneath, `inner` included. */
    async drop(): Promise<void> {
        await this.purge();
        await this.parts.registry.dropInner();
    }

    /**
     * Saves discovered domains and every domain's clocks under `persistStateKey`. Calls made while
     * a write runs share the next write, so a batch that discovers many domains costs two writes.
     */
    async persistState(): Promise<void> {
        return this.parts.persister.save();
    }

    /** First use: opens `inner`, then purges earlier runs' queues or restores them (resume). */
    private ensureInitialized(): Promise<void> {
        this.initializing ??= (async () => {
            await this.parts.registry.getInner();
            await this.parts.persister.start();
        })();
        return this.initializing;
    }
}
