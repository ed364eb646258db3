/**
 * The pacing state of one throttled domain: two clocks and the bookkeeping behind them.
 *
 * - The crawl-delay clock is armed on every dispatch: the next request may leave no sooner than
 *   `interval` after the previous one, where interval = max(robots.txt crawl delay, floor).
 * - The backoff clock is armed by a refusal (429 and friends): nothing leaves before it runs out
 *   (its decisions are in `RefusalClock`, which this class extends).
 *
 * The interval is the largest of the configured delay, the robots.txt crawl delay, the floor, the
 * pacing raised by backoff and the pacing the server announced. Concurrency slots cap how many
 * requests are in flight. A domain is ready when both clocks have passed and a slot is free. Every decision takes `now` (epoch ms) as an
 * argument, so it is a pure function of the state and the time; nothing here reads a clock.
 * All fields are plain numbers in epoch milliseconds so the state can be persisted as JSON and
 * restored by another process.
 */

import type { ResolvedPolicy } from './policy';
import { applyJitter } from './policy';
import type { DispatchReservation, IntervalReason, PacingPolicy } from './domain-state-types';
import { MAX_BACKOFF_EXPONENT, RefusalClock } from './refusal-clock';
import { NUMERIC_FIELDS, UNLIMITED } from './domain-state-types';
import { SlotPool } from './slot-pool';
import type { RampupPolicy } from './rampup-policy';
import type { LearnedRate, RatePacer } from './rate-pacer';
import { createPacer, pacerFromJSON } from './rate-pacer';

export type {
    BackoffPolicy,
    DispatchReservation,
    DomainStateData,
    IntervalReason,
    PacingPolicy,
    RateLimitOutcome,
} from './domain-state-types';

export { MAX_BACKOFF_EXPONENT, STALL_DISPATCH_SLACK_MS } from './refusal-clock';

export class DomainState extends RefusalClock {
    // Concurrency slots and their per-slot clocks.
    private readonly slots = new SlotPool();
    /**
     * The Crawl-delay (seconds) robots.txt asked for above `maxCrawlDelaySecs`, when the domain is
     * skipped for it (`onExcessiveCrawlDelay: 'skip'`). Not saved: robots.txt is read again on resume.
     */
    excessiveCrawlDelaySecs?: number;
    /** What an earlier run learned of the scope's rate (`rememberLearnedRates`); its pacer starts there. */
    learnedRate?: LearnedRate;

    constructor(domain: string) {
        super(domain);
    }

    /** The robots.txt crawl delay in force: none when the scope ignores it or sets its own delay. */
    private crawlDelayFor(policy: PacingPolicy): number {
        return policy.ignoreRobotsCrawlDelay || policy.explicit.delay ? 0 : this.crawlDelayMs;
    }

    /** The most requests in flight the policy allows, robots.txt crawl delay considered. */
    concurrencyLimit(policy: PacingPolicy = UNLIMITED): number {
        const base = this.baseConcurrency(policy);
        // Rampup adds slots when a scope is held by slots rather than by pace (explicit caps win).
        const robotsSaysOne = this.crawlDelayMs > 0 && !policy.ignoreRobotsCrawlDelay;
        if (
            !policy.rampup ||
            !this.rampupState ||
            policy.explicit.concurrency ||
            robotsSaysOne ||
            !Number.isFinite(base)
        )
            return base;
        return Math.min(base + this.rampupState.extraConcurrency, Math.max(base, policy.rampup.maxConcurrency));
    }

    /** Notes that the scope had work it could send but every slot was busy (for rampup). */
    noteSlotBound(now: number, policy: PacingPolicy = UNLIMITED): void {
        if (!policy.rampup || !this.rampupState) return;
        if (Math.max(this.nextDispatchAt, this.backoffUntil) <= now) this.rampupState.slotBoundInWindow = true;
    }

    private baseConcurrency(policy: PacingPolicy): number {
        if (policy.explicit.concurrency || policy.ignoreRobotsCrawlDelay || !Number.isFinite(policy.concurrency))
            return policy.concurrency;
        // A declared crawl delay means "one at a time", as Scrapy reads it.
        return this.crawlDelayMs > 0 ? 1 : policy.concurrency;
    }

    /** Requests handed out and not yet completed, as far as this state knows. */
    get inFlight(): number {
        return this.slots.inUse;
    }

    /**
     * Minimum spacing between dispatches at `now`, and why: the largest of the configured delay, the
     * robots.txt crawl delay (unless the scope overrides or ignores it), the floor, the pacing raised
     * by backoff, and the pacing the server announced.
     */
    interval(now: number, floorMs: number, policy: PacingPolicy = UNLIMITED): { ms: number; reason: IntervalReason } {
        const crawlDelay = this.crawlDelayFor(policy);
        const ramp = policy.rampup ? this.ramp(policy.rampup).delayMs() : 0;
        const candidates: [number, IntervalReason][] = [
            [policy.delayMs, 'configured'],
            [ramp, 'rampup'],
            [crawlDelay, 'crawl-delay'],
            [floorMs, 'floor'],
            [this.penaltyAt(now, policy), 'backoff'],
            [now < this.announcedUntil ? this.announcedIntervalMs : 0, 'announced'],
        ];
        let best: { ms: number; reason: IntervalReason } = { ms: 0, reason: 'none' };
        for (const [ms, reason] of candidates) if (ms > best.ms) best = { ms, reason };
        return best;
    }

    /** The pace learner of this scope, created on first use (from the rate an earlier run learned, if any). */
    ramp(policy: RampupPolicy): RatePacer {
        this.rampupState ??= createPacer(policy, this.learnedRate);
        return this.rampupState;
    }

    /**
     * Starts the scope's pacing from what an earlier run learned, unless it has sent anything already
     * (then it learns for itself, or resumed its own saved pacing). Returns whether it took it.
     */
    startFrom(learned: LearnedRate): boolean {
        if (this.dispatched > 0) return false;
        this.learnedRate = learned;
        // A pacer made before (a snapshot asked for the interval) has learned nothing yet.
        this.rampupState = undefined;
        return true;
    }

    /** Cost spent in the quota window containing `now`. */
    spentAt(now: number, windowMs: number): number {
        return Math.floor(now / windowMs) * windowMs === this.quotaWindowStart ? this.quotaSpent : 0;
    }

    /**
     * Whether the quota lets a request of `cost` go at `now`: always into an empty window (so one
     * oversized request still goes, alone), otherwise only if the spend stays within the quota.
     */
    quotaAllows(now: number, cost: number, quota: ResolvedPolicy['quota']): boolean {
        if (!quota) return true;
        const spent = this.spentAt(now, quota.windowMs);
        return spent === 0 || spent + cost <= quota.limit;
    }

    /** When the next quota window opens after `now`. */
    nextQuotaWindow(now: number, quota: NonNullable<ResolvedPolicy['quota']>): number {
        return (Math.floor(now / quota.windowMs) + 1) * quota.windowMs;
    }

    /** Spends `cost` in the window containing `now`. */
    spend(now: number, cost: number, quota: ResolvedPolicy['quota']): void {
        if (!quota) return;
        const window = Math.floor(now / quota.windowMs) * quota.windowMs;
        if (window !== this.quotaWindowStart) {
            this.quotaWindowStart = window;
            this.quotaSpent = 0;
        }
        this.quotaSpent += cost;
    }

    /** Corrects the spend of a request dispatched at `dispatchedAt` (if its window is still open). */
    adjustSpend(dispatchedAt: number, delta: number, quota: ResolvedPolicy['quota']): void {
        if (!quota) return;
        if (Math.floor(dispatchedAt / quota.windowMs) * quota.windowMs !== this.quotaWindowStart) return;
        this.quotaSpent = Math.max(0, this.quotaSpent + delta);
    }

    /** Earliest time every clock allows a dispatch; Infinity while all slots are in use. */
    readyAt(policy: PacingPolicy = UNLIMITED, now?: number): number {
        let clocks = Math.max(this.nextDispatchAt, this.backoffUntil);
        if (policy.quota && now !== undefined && !this.quotaAllows(now, 1, policy.quota)) {
            clocks = Math.max(clocks, this.nextQuotaWindow(now, policy.quota));
        }
        const limit = this.concurrencyLimit(policy);
        if (this.slots.inUse >= limit) return Number.POSITIVE_INFINITY;
        if (policy.delayPerSlotMs <= 0 || !Number.isFinite(limit)) return clocks;
        return Math.max(clocks, this.slots.free(limit).nextAt);
    }

    isReady(now: number, policy: PacingPolicy = UNLIMITED): boolean {
        return now >= this.readyAt(policy, now);
    }

    /** Frees a concurrency slot when its request was handled or reclaimed. */
    release(slot: number): void {
        this.slots.release(slot);
    }

    /**
     * Arms the clocks for a dispatch at `now` and takes a concurrency slot. Call before awaiting the
     * queue. `random` feeds the jitter.
     */
    dispatch(
        now: number,
        floorMs: number,
        policy: PacingPolicy = UNLIMITED,
        random: () => number = Math.random,
        probe = false,
        backlog = Number.POSITIVE_INFINITY,
    ): DispatchReservation {
        const limit = this.concurrencyLimit(policy);
        const { slot } = this.slots.free(limit);
        // Jitter spreads the configured delay and the backoff pacing; the floor and a robots.txt
        // crawl delay are hard minimums it must never undercut.
        const factor = policy.jitter ? applyJitter(1, policy.jitter, random) : 1;
        const crawlDelay = this.crawlDelayFor(policy);
        const soft = this.interval(now, 0, { ...policy, ignoreRobotsCrawlDelay: true }).ms * factor;
        const interval = Math.max(soft, crawlDelay, floorMs);
        const reservation: DispatchReservation = {
            previousNextDispatchAt: this.nextDispatchAt,
            armedNextDispatchAt: now + interval,
            slot,
            previousSlotNextAt: this.slots.take(slot, now + applyJitter(policy.delayPerSlotMs, policy.jitter, random)),
            probe,
        };
        this.nextDispatchAt = reservation.armedNextDispatchAt;
        // A probe (robots.txt) is paced like a request but is none: no count, no rampup sample.
        if (probe) return reservation;
        if (policy.rampup) this.ramp(policy.rampup).onDispatch(now, policy.rampup, backlog);
        this.dispatched += 1;
        return reservation;
    }

    /**
     * Re-arms the crawl-delay clock when a response arrives, for a domain taking one request at a
     * time: the request left at some moment between dispatch and response, so only counting the
     * interval from the response guarantees the server sees the spacing it asked for.
     */
    armAfterResponse(now: number, floorMs: number, policy: PacingPolicy = UNLIMITED): void {
        // An answer while every slot is busy and the pace would allow another: held by slots.
        if (this.slots.inUse >= this.concurrencyLimit(policy)) this.noteSlotBound(now, policy);
        if (this.concurrencyLimit(policy) !== 1) return;
        // A ramping scope searches its own rate from dispatches; only the minimums (robots.txt crawl
        // delay, the floor and a configured delay) are re-armed for it.
        const crawlDelay = this.crawlDelayFor(policy);
        const interval = policy.rampup
            ? Math.max(crawlDelay, floorMs, policy.delayMs)
            : this.interval(now, floorMs, policy).ms;
        this.nextDispatchAt = Math.max(this.nextDispatchAt, now + interval);
    }

    /** Gives a reserved window and slot back when the queue had nothing to hand out. */
    cancelDispatch(reservation: DispatchReservation): void {
        // Only roll back if no later dispatch re-armed the clock in the meantime.
        if (this.nextDispatchAt === reservation.armedNextDispatchAt)
            this.nextDispatchAt = reservation.previousNextDispatchAt;
        this.slots.untake(reservation.slot, reservation.previousSlotNextAt);
        if (reservation.probe) return;
        this.dispatched -= 1;
        this.rampupState?.undoDispatch();
    }

    /**
     * Applies limits a server announced in a response: with quota left, spread it over the time to
     * the reset; with none left, hold the domain until the reset (not a refusal: no escalation).
     * Adaptive pacing does not spread: a reset rounded up to whole seconds and a bucket that refills
     * before it would pace far below what the site grants; it learns the pace, and still holds at zero.
     */
    announce(
        now: number,
        remaining: number | undefined,
        resetMs: number | undefined,
        maxDelayMs: number,
        rampup?: RampupPolicy,
    ): void {
        if (resetMs === undefined || !(resetMs > 0)) return;
        const capped = Math.min(resetMs, maxDelayMs);
        if (remaining === 0) {
            // Nothing left: as telling as a refusal (the bucket is empty now), without one being spent.
            if (rampup && now >= this.backoffUntil) this.ramp(rampup).onExhausted(now, rampup, capped);
            this.backoffUntil = Math.max(this.backoffUntil, now + capped);
            return;
        }
        if (!rampup && remaining !== undefined && remaining > 0) {
            this.announcedIntervalMs = Math.min(resetMs / remaining, maxDelayMs);
            this.announcedUntil = now + capped;
        }
    }

    /**
     * Sets the declared crawl delay (robots.txt; the manager passes the largest of the domain's
     * origins). A re-read robots.txt may lower it. Returns whether it changed.
     */
    setCrawlDelay(ms: number): boolean {
        const next = Number.isFinite(ms) && ms > 0 ? ms : 0;
        if (next === this.crawlDelayMs) return false;
        this.crawlDelayMs = next;
        return true;
    }

    /**
     * The domain answered a request without a refusal: the run of refusals is broken. Under rampup the
     * answer is counted, and the next refusal starts its backoff from the first step again: it marks a
     * pace a little too fast, not a site refusing everything.
     */
    recordAnswered(policy?: PacingPolicy, now = 0, sentAt?: number): void {
        if (policy?.rampup && this.rampupState) {
            this.rampupState.onAnswer(now, sentAt);
            this.backoffExponent = 0;
        }
        this.refusingSince = 0;
        this.stallMs = 0;
        this.lastImposedMs = 0;
    }

    /** The domain answered at all (a refusal too): its run of network errors is over. */
    noteReachable(): void {
        this.consecutiveErrors = 0;
    }

    /** Whether the domain spent its error budget: `limit` network errors in a row (0: no budget). */
    isUnreachable(limit: number): boolean {
        return limit > 0 && this.consecutiveErrors >= limit;
    }

    /** A request of the domain was handled successfully (which also breaks a run of refusals). */
    recordSuccess(): void {
        this.handled += 1;
        this.recordAnswered();
    }

    /**
     * A request of the domain was given up on: Crawlee marks failed requests handled too. It counts
     * as handled but breaks no run of refusals, or a domain refusing everything would never stall.
     */
    recordGivenUp(): void {
        this.handled += 1;
    }

    /** Rebuilds a state from persisted data; returns undefined when the data has the wrong shape. */
    static fromJSON(data: unknown): DomainState | undefined {
        if (typeof data !== 'object' || data === null) return undefined;
        const record = data as Record<string, unknown>;
        if (typeof record.domain !== 'string' || record.domain === '') return undefined;
        const state = new DomainState(record.domain);
        for (const key of NUMERIC_FIELDS) {
            const value = record[key];
            if (value === undefined) continue;
            if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) return undefined;
            state[key] = value;
        }
        state.backoffExponent = Math.min(state.backoffExponent, MAX_BACKOFF_EXPONENT);
        if (record.rampup !== undefined) {
            const ramp = pacerFromJSON(record.rampup);
            if (!ramp) return undefined;
            state.rampupState = ramp;
        }
        return state;
    }
}
