/**
 * When a scope may dispatch next, decided from its `DomainState`'s reads: the slots it may fill
 * (`concurrencyLimit`), the spacing between its dispatches (`interval`) and the earliest time every
 * clock, the quota and a slot allow one (`readyAt`, `isReady`). Functions rather than methods, so the
 * state keeps only its fields and the changes to them; every decision takes `now` (epoch ms) and
 * nothing here reads a clock.
 */

import type { BackoffReadings } from './backoff-clock';
import type { IntervalReason, PacingPolicy } from './domain-state-types';
import { UNLIMITED } from './domain-state-types';
import { nextQuotaWindow } from './domain-limits';
import type { LimitsReadings } from './domain-limits';
import type { RampupPolicy } from './rampup-policy';
import type { RatePacer } from './rate-pacer';

/**
 * What these decisions read of a scope's state; a `DomainState` is one. Typed here rather than
 * imported, as `DomainState` arms its clocks with these decisions and modules never import in a circle.
 */
export interface ScopeReads {
    /** Crawl delay declared for the scope (robots.txt `Crawl-delay`), in ms; 0 when none. */
    readonly crawlDelayMs: number;
    /** Crawl-delay clock: earliest time of the next dispatch. */
    readonly nextDispatchAt: number;
    /** Backoff clock: no dispatch before this time. 0 when never backed off. */
    readonly backoffUntil: number;
    readonly backoff: BackoffReadings;
    readonly limits: LimitsReadings;
    /** The scope's pace learner, when it has made one. */
    readonly rampupState: RatePacer | undefined;
    /** Requests holding a slot. */
    readonly inFlight: number;
    /** The per-slot clock of the free slot that can go first under `limit`; Infinity when none is free. */
    freeSlotAt(limit: number): number;
    /** The scope's pace learner, made on first use: a ramping scope is paced by it from the first ask. */
    ramp(policy: RampupPolicy): RatePacer;
}

/** The minimum spacing between dispatches, and which of its candidates set it. */
export interface Interval {
    ms: number;
    reason: IntervalReason;
}

/** The declared crawl delay in force: none when the scope ignores it or sets its own delay. */
export function crawlDelayFor(state: ScopeReads, policy: PacingPolicy): number {
    return policy.ignoreRobotsCrawlDelay || policy.explicit.delay ? 0 : state.crawlDelayMs;
}

/** The most requests in flight the policy allows, robots.txt crawl delay considered. */
export function concurrencyLimit(state: ScopeReads, policy: PacingPolicy = UNLIMITED): number {
    const base = baseConcurrency(state, policy);
    const learner = state.rampupState;
    // Rampup adds slots when a scope is held by slots rather than by pace (explicit caps win).
    if (
        !policy.rampup ||
        !learner ||
        policy.explicit.concurrency ||
        (state.crawlDelayMs > 0 && !policy.ignoreRobotsCrawlDelay)
    )
        return base;
    if (!Number.isFinite(base)) return base;
    return Math.min(base + learner.allowedExtraConcurrency, Math.max(base, policy.rampup.maxConcurrency));
}

/** The policy's concurrency, before rampup adds any slots. */
function baseConcurrency(state: ScopeReads, policy: PacingPolicy): number {
    if (policy.explicit.concurrency || policy.ignoreRobotsCrawlDelay || !Number.isFinite(policy.concurrency))
        return policy.concurrency;
    // A declared crawl delay means "one at a time", as Scrapy reads it.
    return state.crawlDelayMs > 0 ? 1 : policy.concurrency;
}

/**
 * Minimum spacing between dispatches at `now`, and why: the largest of the configured delay, the
 * learned pace, the robots.txt crawl delay (unless the scope overrides or ignores it), the floor,
 * the pacing raised by backoff, and the pacing the server announced.
 */
export function interval(state: ScopeReads, now: number, floorMs: number, policy: PacingPolicy = UNLIMITED): Interval {
    const candidates: [number, IntervalReason][] = [
        [policy.delayMs, 'configured'],
        [policy.rampup ? state.ramp(policy.rampup).delayMs() : 0, 'rampup'],
        [crawlDelayFor(state, policy), 'crawl-delay'],
        [floorMs, 'floor'],
        [state.backoff.penaltyAt(now, policy), 'backoff'],
        [state.backoff.announcedAt(now), 'announced'],
    ];
    let best: Interval = { ms: 0, reason: 'none' };
    for (const [ms, reason] of candidates) if (ms > best.ms) best = { ms, reason };
    return best;
}

/**
 * How long after a dispatch at `at` the next may leave: the interval, spread by the jitter `factor`,
 * and never under the floor or a robots.txt crawl delay, which are hard minimums jitter must not undercut.
 */
export function dispatchSpacing(
    state: ScopeReads,
    at: number,
    floorMs: number,
    policy: PacingPolicy,
    factor = 1,
): number {
    const soft = interval(state, at, 0, { ...policy, ignoreRobotsCrawlDelay: true }).ms * factor;
    return Math.max(soft, crawlDelayFor(state, policy), floorMs);
}

/** Earliest time every clock allows a dispatch; Infinity while all slots are in use. */
export function readyAt(state: ScopeReads, now: number, policy: PacingPolicy = UNLIMITED): number {
    let clocks = Math.max(state.nextDispatchAt, state.backoffUntil);
    if (policy.quota && !state.limits.quotaAllows(now, 1, policy.quota)) {
        clocks = Math.max(clocks, nextQuotaWindow(now, policy.quota));
    }
    const limit = concurrencyLimit(state, policy);
    if (state.inFlight >= limit) return Number.POSITIVE_INFINITY;
    if (policy.delayPerSlotMs <= 0 || !Number.isFinite(limit)) return clocks;
    return Math.max(clocks, state.freeSlotAt(limit));
}

/** Whether every clock, the quota and a slot allow a dispatch at `now`. */
export function isReady(state: ScopeReads, now: number, policy: PacingPolicy = UNLIMITED): boolean {
    return now >= readyAt(state, now, policy);
}
