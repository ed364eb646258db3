import type { ResolvedThrottlingOptions } from '../config/resolved-options';
import type { ResolvedPolicy } from '../pacing/policy';
import { originOf } from '../routing/origin';
import type { ScopeRouter } from '../scopes/scope-router';
import type { BackoffPolicy, DomainState } from '../pacing/domain-state';
import type { DomainStateStore } from '../pacing/domain-state-store';
import type { PacingFloor } from '../pacing/pacing-floor';
import type { PacingSignal } from '../pacing/pacing-signal';
import type { BackoffReason, ThrottlingEventEmitter } from '../core/throttling-events';

/**
 * Most origins whose robots.txt crawl delay one key remembers. Only origins that declare a delay are
 * kept, and past the cap the smallest go, so the key's delay (the largest) never drops by it.
 */
export const MAX_DECLARED_ORIGINS_PER_KEY = 64;

/** A learned rate is reported again (`rateLearned`) once it moved by this share of the last report. */
const RATE_REPORT_STEP = 0.1;

/** What the recorder tells its owner. */
export interface PacingRecorderHost {
    now(): number;
    /** Whether a key is paced here (throttled, and not over the domain limit). */
    paces(key: string): boolean;
    /** The clocks of `key` changed: reschedule its queue and publish them to a shared clock. */
    changed(key: string): void;
    /**
     * A refusal of `key` was applied here (`localWaitMs`: the wait it imposed): record it in a shared
     * clock before the new clocks are published, so the shared clock decides its escalation first.
     */
    refused?(key: string, serverWaitMs: number | undefined, localWaitMs: number): void;
    /** The clocks of `key` moved earlier (a raised pace): file its queue again by them and wake the pool. */
    sooner?(key: string): void;
    /** A ramping scope's pacer counted an accepted answer of `key` (shared with other processes' pacers). */
    accepted?(key: string): void;
    /** A backoff escalated: it must survive a crash, so save now. */
    escalated(): void;
    warn(message: string): void;
    warnOnce(message: string): void;
    events: ThrottlingEventEmitter;
}

/** What caused a backoff, for the `backoff` event. */
export interface BackoffCause {
    reason: BackoffReason;
    statusCode?: number;
}

/**
 * Turns pacing signals (refusals, robots.txt crawl delays, a floor for every domain) into the clocks
 * of the scopes they concern.
 */
export class PacingRecorder {
    // Crawl delay each origin's robots.txt declared, per key: a key spanning several origins
    // (registrableDomain) is paced by the largest, and a re-read replaces its origin's value.
    private readonly declaredCrawlDelays = new Map<string, Map<string, number>>();
    // The learned rate last reported per key (rateLearned), so only moves of 10 % or more are.
    private readonly reportedRates = new Map<string, number>();

    constructor(
        private readonly options: ResolvedThrottlingOptions,
        private readonly router: ScopeRouter,
        private readonly states: DomainStateStore,
        private readonly floor: PacingFloor,
        private readonly host: PacingRecorderHost,
    ) {}

    /** Applies a signal; returns whether its domain is paced here (false: ignored). */
    record(signal: PacingSignal, cause: BackoffCause = { reason: 'signal' }): boolean {
        if (signal.reason === 'minIntervalEverywhere') {
            this.floor.raise(signal.intervalMs);
            return true;
        }
        const key = this.router.domainKeyOf(signal.url);
        if (key === undefined || !this.host.paces(key)) return false;
        this.states.update(key, () => undefined);
        if (signal.reason === 'rateLimited') {
            this.recordRateLimit(key, signal.waitMs, cause);
        } else {
            this.recordCrawlDelay(key, signal.url, signal.intervalMs);
            this.host.changed(key);
        }
        return true;
    }

    /**
     * Backs one scope off: exponential, or for as long as the server asked (`waitMs`). `sentAt`: when
     * the refused request was sent, when known (the pace learner places the refusal there).
     */
    recordRateLimit(
        key: string,
        waitMs: number | undefined,
        cause: BackoffCause = { reason: 'signal' },
        sentAt?: number,
    ): void {
        const now = this.host.now();
        const policy = this.router.policyOf(key);
        const state = this.states.update(key, (s) => s);
        const outcome = state.recordRateLimit(now, waitMs, this.backoffPolicy(policy), sentAt);
        this.reportLearned(key, state, 'refused');
        this.host.refused?.(key, waitMs, outcome.waitMs);
        if (outcome.escalated) {
            this.host.escalated();
            const exponent = state.backoff.backoffExponent;
            this.host.events.emit('backoff', {
                domain: key,
                ...cause,
                retryAfterMs: waitMs,
                waitMs: outcome.waitMs,
                exponent,
            });
        }
        if (outcome.cappedFrom) {
            const source =
                outcome.cappedFrom.source === 'retry-after' ? 'the Retry-After header' : 'exponential backoff';
            const cap = policy.scopeKey ? `maxDelaySecs of scope ${policy.scopeKey}` : 'maxDelaySecs';
            this.host.warn(
                `${key}: ${source} asked for ${Math.round(outcome.cappedFrom.requestedMs / 1000)} s; capped at ${cap} (${policy.backoffMaxDelayMs / 1000} s).`,
            );
        }
        this.host.changed(key);
    }

    /**
     * A scope answered without refusing: a run of refusals is broken (a `recovered` event when one
     * was running). `success` also counts the request handled.
     */
    answered(key: string, now: number, success = false, sentAt?: number): void {
        const state = this.states.read(key);
        if (!state) return;
        if (state.backoff.refusingSince !== 0 && state.backoff.isBrokenBy(sentAt)) {
            const refusingForMs = state.backoff.stalledForMs(now);
            this.host.events.emit('recovered', { domain: key, refusingForMs, refusals: state.backoff.refusals });
        }
        // The answer itself teaches a ramping scope (once: not again when the request is handled).
        if (success) state.recordSuccess(sentAt);
        else {
            if (state.recordAnswered(now, this.router.policyOf(key), sentAt, this.floor.ms)) this.host.sooner?.(key);
            this.host.accepted?.(key);
        }
        this.reportLearned(key, state, 'answers');
    }

    /** Emits `rateLearned` when the scope's learned rate moved by {@link RATE_REPORT_STEP} or more. */
    private reportLearned(key: string, state: DomainState, reason: 'refused' | 'answers'): void {
        const rate = state.rampupState?.safeRate ?? 0;
        const previousRate = this.reportedRates.get(key) ?? 0;
        if (!(rate > 0) || Math.abs(rate - previousRate) < previousRate * RATE_REPORT_STEP) return;
        this.reportedRates.set(key, rate);
        this.host.events.emit('rateLearned', { domain: key, rate, previousRate, reason });
    }

    /** Skips the key of `url` for a crawl delay above the maximum (undefined: stops skipping it). */
    skipForCrawlDelay(url: string, declaredSecs: number | undefined): void {
        const key = this.router.domainKeyOf(url);
        if (key === undefined || !this.host.paces(key)) return;
        const state = this.states.update(key, (s) => s);
        if (state.skipForCrawlDelay(declaredSecs)) this.host.changed(key);
    }

    /**
     * A robots.txt read for the key of `url` got an answer (any status), or none (a timeout, a network
     * error). No answer counts against the key's error budget as a request's network error does (unless
     * `backoffOnNetworkErrors` is off); an answer ends a run of them. Returns whether the budget is spent.
     */
    robotsRead(url: string, answered: boolean): boolean {
        const key = this.router.domainKeyOf(url);
        if (key === undefined || !this.host.paces(key)) return false;
        const state = this.states.update(key, (s) => s);
        if (answered) state.noteReachable();
        else if (this.router.policyOf(key).backoffOnNetworkErrors) state.noteNetworkError();
        return state.limits.isUnreachable(this.options.maxConsecutiveErrors);
    }

    /** Forgets every declared crawl delay (the queues were dropped). */
    clear(): void {
        this.declaredCrawlDelays.clear();
    }

    /** Forgets what robots.txt said for keys no longer crawled (bounded memory on broad crawls). */
    forget(key: string): void {
        this.declaredCrawlDelays.delete(key);
        this.reportedRates.delete(key);
    }

    private recordCrawlDelay(key: string, url: string, intervalMs: number): void {
        const policy = this.router.policyOf(key);
        if (policy.ignoreRobotsCrawlDelay) return;
        const crawlDelayMs = this.declare(key, originOf(url), intervalMs);
        this.states.update(key, (s) => s.setCrawlDelay(crawlDelayMs));
        if (crawlDelayMs > 0 && (policy.explicit.delay || policy.explicit.concurrency)) {
            this.host.warnOnce(
                `robots.txt of ${key} declares Crawl-delay: ${crawlDelayMs / 1000} s; the explicit settings of scope ${policy.scopeKey} win. Set ignoreRobotsCrawlDelay: true on that scope to silence this.`,
            );
        }
    }

    /** Records an origin's declared delay (none is forgotten) and returns the key's largest. */
    private declare(key: string, origin: string, intervalMs: number): number {
        const byOrigin = this.declaredCrawlDelays.get(key) ?? new Map<string, number>();
        byOrigin.delete(origin);
        if (intervalMs > 0) byOrigin.set(origin, intervalMs);
        if (byOrigin.size > MAX_DECLARED_ORIGINS_PER_KEY) {
            const smallest = [...byOrigin].reduce((a, b) => (b[1] < a[1] ? b : a));
            byOrigin.delete(smallest[0]);
        }
        if (byOrigin.size === 0) {
            this.declaredCrawlDelays.delete(key);
            return 0;
        }
        this.declaredCrawlDelays.set(key, byOrigin);
        return Math.max(...byOrigin.values());
    }

    /** Origins remembered with a declared delay, over every key (what the memory holds). */
    get declaredOriginCount(): number {
        let count = 0;
        for (const byOrigin of this.declaredCrawlDelays.values()) count += byOrigin.size;
        return count;
    }

    private backoffPolicy(policy: ResolvedPolicy): BackoffPolicy {
        return { ...policy, random: this.options.random };
    }
}
