import type { Request, RequestQueueOperationOptions } from '@crawlee/core';

import type { DomainStateStore } from '../pacing/domain-state-store';
import type { PacingFloor } from '../pacing/pacing-floor';
import type { PacingRecorder } from './pacing-recorder';
import type { DomainRegistry } from '../queues/domain-registry';
import { newNetworkError } from '../response/network-errors';
import type { ScopeRouter } from '../scopes/scope-router';
import type { Scheduler } from '../scheduling/scheduler';
import type { SharedClockSync } from '../shared-clock/shared-clock-sync';
import type { SharedLimits } from '../shared-clock/shared-limits';
import type { Clock } from '../core/clock';
import type { Handout, HandoutLedger } from './handout-ledger';
import { InvalidArgumentError } from '../core/errors';

/** What completing a request touches. */
export interface CompletionTrackerDeps {
    clock: Clock;
    router: ScopeRouter;
    states: DomainStateStore;
    floor: PacingFloor;
    registry: DomainRegistry;
    handouts: HandoutLedger;
    shared: SharedClockSync;
    limits: SharedLimits;
    scheduler: Scheduler;
    recorder: PacingRecorder;
}

/**
 * Takes handed-out requests back: a completion or reclaim goes to the queue that handed the request
 * out, and frees what the request held (its slots, a shared lease) exactly once, even when the
 * queue call throws and the crawler retries it, or a timed-out call is retried while it still runs.
 */
export class CompletionTracker {
    constructor(private readonly deps: CompletionTrackerDeps) {}

    async markHandled(request: Request) {
        const handout = this.handoutOf(request);
        let result;
        try {
            result = await handout.source.markRequestHandled(request);
        } finally {
            this.release(handout, request, true);
        }
        this.deps.handouts.settle(request);
        return result;
    }

    async reclaim(request: Request, options?: RequestQueueOperationOptions) {
        const handout = this.handoutOf(request);
        const throttledRetry = this.deps.handouts.restoreRetryCount(request);
        let result;
        try {
            result = await handout.source.reclaimRequest(request, options);
            // Back in its own queue; a request reclaimed to `inner` is re-routed when fetched again.
            if (handout.domain && handout.source === handout.domain.opened) handout.domain.addQueued();
        } finally {
            this.release(handout, request, !throttledRetry, false);
        }
        this.deps.handouts.settle(request);
        return result;
    }

    /**
     * Frees the request's slots (its own and shared ones) and lease and lets its domain be scheduled
     * again; once per handout.
     * A new network error backs the domain off; a completion counts as handled (a success, unless
     * the request came back with a new error: Crawlee marks failed requests handled too).
     */
    private release(handout: Handout, request: Request, checkNetworkError: boolean, completed = true): void {
        const entry = handout.domain;
        if (!entry || handout.released) return;
        handout.released = true;
        const { states, clock, router, floor, shared, scheduler } = this.deps;
        const networkError = checkNetworkError && this.noteNetworkError(handout, request);
        if (shared.holdsLease(entry)) {
            // No response reached us (a network error, or a BasicCrawler that does not report them):
            // count the interval from now, as a response would have.
            const now = clock.now();
            states.update(entry.key, (s) => s.armAfterResponse(now, floor.ms, router.policyOf(entry.key)));
            shared.settle(entry, now);
        }
        if (handout.slot !== undefined) states.update(entry.key, (s) => s.release(handout.slot!));
        this.deps.limits.release(handout.shared);
        for (const extra of handout.extras ?? []) states.update(extra.scope, (s) => s.release(extra.slot));
        if (completed && !networkError) this.countHandled(handout, entry.key, request);
        scheduler.touch(entry, clock.now());
    }

    /**
     * Counts a completed request handled: a success where it was answered (the domain a redirect led
     * to), or given up on in its own domain; the other scopes it cleared (an address, a named budget)
     * count it too.
     */
    private countHandled(handout: Handout, key: string, request: Request): void {
        const failed = handout.errors !== undefined && (request.errorMessages?.length ?? 0) > handout.errors;
        const extras = (handout.extras ?? []).map((extra) => extra.scope);
        const keys = new Set([failed ? key : (handout.answeredBy ?? key), ...extras]);
        const now = this.deps.clock.now();
        for (const k of keys) {
            if (failed) this.deps.states.update(k, (s) => s.recordGivenUp());
            else this.deps.recorder.answered(k, now, true, handout.sentAt);
        }
    }

    /** A request came back with a new network error or timeout: back its domain off. */
    private noteNetworkError(handout: Handout, request: Request): boolean {
        const entry = handout.domain;
        if (!entry || handout.errors === undefined) return false;
        if (!this.deps.router.policyOf(entry.key).backoffOnNetworkErrors) return false;
        if (!newNetworkError(request.errorMessages, handout.errors)) return false;
        this.deps.states.update(entry.key, (s) => s.noteNetworkError());
        this.deps.recorder.record({ reason: 'rateLimited', url: request.url }, { reason: 'network-error' });
        return true;
    }

    /** The handout of a request; falls back to routing by URL when the object is not ours. */
    private handoutOf(request: Request): Handout {
        const known = this.deps.handouts.get(request);
        if (known) return known;
        const { router, registry } = this.deps;
        const key = router.domainKeyOf(request.url);
        const entry = key === undefined ? undefined : registry.get(key);
        if (entry?.opened) return { source: entry.opened, domain: entry };
        const inner = registry.openedInner;
        if (!inner)
            throw new InvalidArgumentError(
                `ThrottlingRequestManager: ${request.url} was never handed out by this manager`,
            );
        return { source: inner };
    }
}
