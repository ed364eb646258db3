/**
 * The pacing state of one throttled scope, made of parts that each own their fields:
 *
 * - the crawl-delay clock, its own: armed on every dispatch, the next request may leave no sooner
 *   than `interval` after the previous one, re-armed from that one when the learner raises the pace
 *   (two numbers every scope has, kept here rather than in an object of their own, which would cost
 *   every scope of a broad crawl 32 bytes more);
 * - the concurrency slots (`SlotPool`), each with its per-slot delay;
 * - the backoff clock (`BackoffClock`), armed by a refusal (429 and friends): nothing leaves before it
 *   runs out; it also keeps the raised pacing, the pace a server announced and the refusal run;
 * - the pace learner (`PaceLearner`) of a ramping scope;
 * - the quota window, the error budget and the crawl-delay skip (`DomainLimits`).
 *
 * The interval is the largest of the configured delay, the learned pace, the robots.txt crawl delay,
 * the floor, the pacing raised by backoff and the pacing the server announced. A scope is ready when
 * both clocks have passed, its quota allows and a slot is free; those decisions (`interval`,
 * `concurrencyLimit`, `readyAt`, `isReady`) are functions of this state's reads, in
 * `readiness-decision.ts`. The backoff clock, the learner and the limits are made on first use: most
 * scopes of a broad crawl never need them. This class combines the parts' changes; every decision
 * takes `now` (epoch ms) and nothing here reads a clock. The state persists as plain numbers
 * (`DomainStateData`, written and read in `domain-state-codec.ts`), so another process can restore it.
 */

import { applyJitter } from './policy';
import type { ResolvedPolicy } from './policy';
import type { SharedRefusal } from '../core/shared-limit-types';
import type { BackoffPolicy, DispatchReservation, DomainStateData } from './domain-state-types';
import type { AnnouncedLimits, PacingPolicy, RateLimitOutcome, SentRequest } from './domain-state-types';
import { anyBackoffData, UNLIMITED } from './domain-state-types';
import { BackoffClock, NO_BACKOFF } from './backoff-clock';
import type { BackoffReadings } from './backoff-clock';
import { DomainLimits, NO_LIMITS } from './domain-limits';
import type { LimitsReadings } from './domain-limits';
import { PaceLearner } from './pace-learner';
import { JITTER_FLOOR_MS } from './pace-learner-constants';
import { SlotPool } from './slot-pool';
import { concurrencyLimit, crawlDelayFor, dispatchSpacing, interval } from './readiness-decision';
import type { ScopeReads } from './readiness-decision';
import type { RampupPolicy } from './rampup-policy';
import type { LearnedRate, RatePacer } from './rate-pacer';
import { createPacer } from './rate-pacer';

export type {
    BackoffPolicy,
    DispatchReservation,
    DomainStateData,
    IntervalReason,
    PacingPolicy,
    RateLimitOutcome,
    SentRequest,
} from './domain-state-types';

export class DomainState implements ScopeReads {
    readonly domain: string;
    private dispatchedCount = 0;
    private handledCount = 0;
    // The crawl-delay clock: earliest time of the next dispatch (0 before the first), and the crawl
    // delay robots.txt declared (the largest of the scope's origins), ms; 0 when none.
    private nextAt = 0;
    private declaredMs = 0;
    private readonly slots = new SlotPool();
    // The scope's learner once made; before that, what an earlier run learned (`rememberLearnedRates`),
    // which the learner will start from. One field for both: a scope needs the second only until the first.
    private learning?: RatePacer | LearnedRate;
    private backoffClock?: BackoffClock;
    private scopeLimits?: DomainLimits;

    constructor(domain: string) {
        this.domain = domain;
    }

    /** Requests dispatched (the statistics). */
    get dispatched(): number {
        return this.dispatchedCount;
    }
    /** Requests handled, successfully or given up on (the statistics). */
    get handled(): number {
        return this.handledCount;
    }
    /** Crawl delay declared for the scope (robots.txt `Crawl-delay`), in ms; 0 when none. */
    get crawlDelayMs(): number {
        return this.declaredMs;
    }
    /** Crawl-delay clock: earliest time of the next dispatch. */
    get nextDispatchAt(): number {
        return this.nextAt;
    }
    /** Backoff clock: no dispatch before this time. 0 when never backed off. */
    get backoffUntil(): number {
        return this.backoff.backoffUntil;
    }
    /**
     * The backoff clock, to read; a scope never refused and never told a limit shares an empty one
     * (every number 0). It changes only through this state, which keeps the other parts in step.
     */
    get backoff(): BackoffReadings {
        return this.backoffClock ?? NO_BACKOFF;
    }
    /** The quota window, the error budget and the crawl-delay skip, to read (an empty one until used). */
    get limits(): LimitsReadings {
        return this.scopeLimits ?? NO_LIMITS;
    }
    /** The scope's pace learner, when it has made one. */
    get rampupState(): RatePacer | undefined {
        return this.learning instanceof PaceLearner ? this.learning : undefined;
    }
    /** Requests handed out and not yet completed, as far as this state knows. */
    get inFlight(): number {
        return this.slots.inUse;
    }
    /** The per-slot clock of the free slot that can go first under `limit`; Infinity when none is free. */
    freeSlotAt(limit: number): number {
        return this.slots.free(limit).nextAt;
    }

    private ownBackoff(): BackoffClock {
        return (this.backoffClock ??= new BackoffClock());
    }

    private ownLimits(): DomainLimits {
        return (this.scopeLimits ??= new DomainLimits());
    }

    /** Notes that the scope had work it could send but every slot was busy (for rampup). */
    noteSlotBound(now: number, policy: PacingPolicy = UNLIMITED): void {
        const learner = this.rampupState;
        if (!policy.rampup || !learner) return;
        if (Math.max(this.nextDispatchAt, this.backoffUntil) <= now) learner.slotBoundInWindow = true;
    }

    /** The pace learner of this scope, created on first use (from the rate an earlier run learned, if any). */
    ramp(policy: RampupPolicy): RatePacer {
        const current = this.learning;
        if (current instanceof PaceLearner) return current;
        const learner = createPacer(policy, current);
        this.learning = learner;
        return learner;
    }

    /**
     * Starts the scope's pacing from what an earlier run learned, unless it has sent anything already
     * (then it learns for itself, or resumed its own saved pacing). Returns whether it took it.
     */
    startFrom(learned: LearnedRate): boolean {
        if (this.dispatchedCount > 0) return false;
        // A learner made before (a snapshot asked for the interval) has learned nothing yet.
        this.learning = learned;
        return true;
    }

    /** Spends `cost` in the window containing `now`. */
    spend(now: number, cost: number, quota: ResolvedPolicy['quota']): void {
        if (quota) this.ownLimits().spend(now, cost, quota);
    }

    /** Corrects the spend of a request dispatched at `dispatchedAt` (if its window is still open). */
    adjustSpend(dispatchedAt: number, delta: number, quota: ResolvedPolicy['quota']): void {
        if (quota) this.ownLimits().adjustSpend(dispatchedAt, delta, quota);
    }

    /** Frees a concurrency slot when its request was handled or reclaimed. */
    release(slot: number): void {
        this.slots.release(slot);
    }

    /**
     * Arms the clocks for a dispatch at `now` and takes a concurrency slot. Call before awaiting the
     * queue. `random` feeds the jitter; `backlog`: the scope's requests waiting; `slackMs`: the least
     * spacing the crawl's horizon allows (crawl-slack.ts).
     */
    dispatch(
        now: number,
        floorMs: number,
        policy: PacingPolicy = UNLIMITED,
        random: () => number = Math.random,
        probe = false,
        backlog = Number.POSITIVE_INFINITY,
        slackMs = 0,
    ): DispatchReservation {
        const limit = concurrencyLimit(this, policy);
        const { slot } = this.slots.free(limit);
        const factor = policy.jitter ? applyJitter(1, policy.jitter, random) : 1;
        const previousSlotNextAt = this.slots.take(
            slot,
            now + applyJitter(policy.delayPerSlotMs, policy.jitter, random),
        );
        // A probe (robots.txt) is paced like a request but is none: no count, no rampup sample. A
        // window this dispatch closes may move the pace: the clock is armed after it, at the new one.
        if (!probe && policy.rampup) this.ramp(policy.rampup).onDispatch(now, policy.rampup, backlog, this.slots.inUse);
        const reservation: DispatchReservation = {
            previousNextDispatchAt: this.nextAt,
            armedNextDispatchAt: now + Math.max(dispatchSpacing(this, now, floorMs, policy, factor), slackMs),
            slot,
            previousSlotNextAt,
            probe,
        };
        this.nextAt = reservation.armedNextDispatchAt;
        if (!probe) this.dispatchedCount += 1;
        return reservation;
    }

    /**
     * Re-arms the crawl-delay clock when a response arrives, for a scope taking one request at a
     * time: the request left at some moment between dispatch and response, so only counting the
     * interval from the response guarantees the server sees the spacing it asked for. `sent`: when
     * the request answered was handed out, and the interval its dispatch armed.
     */
    armAfterResponse(now: number, floorMs: number, policy: PacingPolicy = UNLIMITED, sent?: SentRequest): void {
        // An answer while every slot is busy and the pace would allow another: held by slots.
        if (this.slots.inUse >= concurrencyLimit(this, policy)) this.noteSlotBound(now, policy);
        if (concurrencyLimit(this, policy) !== 1) return;
        // A ramping scope searches its own rate from dispatches; only the minimums (robots.txt crawl
        // delay, the floor and a configured delay) are re-armed for it.
        const spacing = policy.rampup
            ? Math.max(crawlDelayFor(this, policy), floorMs, policy.delayMs)
            : interval(this, now, floorMs, policy).ms;
        this.holdDispatchUntil(now + spacing);
        if (policy.rampup && sent) this.holdForLateArrival(now, sent);
    }

    /**
     * An answer that came later than a typical one (the median of the last window without a queue) by
     * x, up to the jitter floor, may have reached the site x late (on a loaded machine the client delays
     * a request now and then by tens of ms): the next request leaves an interval after that arrival, not
     * after the send, or the site sees the two closer than the pace. A slow way back costs the next
     * request the same x; so does a queue at the site (a limiter that delays), which this brakes.
     * Slower answers are the site's own time (it was reached, then took longer), and a slot-bound scope
     * must not wait an interval after each of them. Measured from the least answer instead, every
     * answer's ordinary spread would slow the pace a little.
     */
    private holdForLateArrival(now: number, { sentAt, intervalMs }: SentRequest): void {
        if (intervalMs === undefined) return;
        const lateMs = now - sentAt - (this.rampupState?.typicalResponseMs ?? Number.POSITIVE_INFINITY);
        if (lateMs > 0 && lateMs <= JITTER_FLOOR_MS) this.holdDispatchUntil(sentAt + intervalMs + lateMs);
    }

    /** Holds the next dispatch until at least `at` (it leaves later than armed). Returns whether it moved. */
    holdDispatchUntil(at: number): boolean {
        if (this.nextAt >= at) return false;
        this.nextAt = at;
        return true;
    }

    /** Gives a reserved window and slot back when the queue had nothing to hand out. */
    cancelDispatch(reservation: DispatchReservation): void {
        // Only roll back if no later dispatch re-armed the clock in the meantime.
        if (this.nextAt === reservation.armedNextDispatchAt) this.nextAt = reservation.previousNextDispatchAt;
        this.slots.untake(reservation.slot, reservation.previousSlotNextAt);
        if (reservation.probe) return;
        this.dispatchedCount -= 1;
        this.rampupState?.undoDispatch();
    }

    /**
     * Records a refusal on the backoff clock (see `BackoffClock.recordRefusal`). Under rampup the
     * learner steps back instead of the pacing being raised, and the next request waits one interval
     * of the new pace: the clock was armed at the pace just refused. `sentAt`: when the refused request
     * was sent, when known.
     */
    recordRateLimit(now: number, waitMs: number | undefined, policy: BackoffPolicy, sentAt?: number): RateLimitOutcome {
        const { rampup } = policy;
        const pacer = rampup ? this.ramp(rampup) : undefined;
        if (sentAt !== undefined) pacer?.noteRefused(sentAt);
        const firstMs = pacer?.firstWaitMs(this.inFlight) ?? 0;
        const skip = pacer?.skipsRetry(now) ?? false;
        this.scopeLimits?.noteRefusal();
        const outcome = this.ownBackoff().recordRefusal(
            now,
            waitMs,
            policy,
            firstMs,
            (delayMs, fromServer) => {
                if (rampup && pacer) {
                    pacer.onTrigger(now, rampup, delayMs, fromServer, this.inFlight);
                    this.holdDispatchUntil(now + pacer.delayMs());
                }
                return this.nextAt;
            },
            skip,
        );
        if (!outcome.escalated) pacer?.onRefusedInBackoff(now, this.inFlight);
        return outcome;
    }

    /** Takes over a longer backoff the shared clock answered (see `BackoffClock.adoptShared`). */
    adoptSharedBackoff(shared: SharedRefusal, now: number, rampup: boolean): boolean {
        return this.ownBackoff().adoptShared(shared, now, rampup);
    }

    /** Holds the scope until at least `until` without a refusal (a robots.txt read to retry). */
    pauseUntil(until: number): boolean {
        if (until <= this.backoffUntil) return false;
        return this.ownBackoff().holdUntil(until);
    }

    /** A request of the scope was sent back for a free retry after a refusal. */
    noteFreeRetry(): void {
        this.ownBackoff().noteFreeRetry();
    }

    /**
     * Applies limits a server announced in a response: with quota left, spread it over the time to
     * the reset; with none left, hold the scope until the reset (not a refusal: no escalation).
     * Adaptive pacing does not spread: a reset rounded up to whole seconds and a bucket that refills
     * before it would pace far below what the site grants; it learns the pace, and still holds at zero.
     */
    announce(now: number, limits: AnnouncedLimits, maxDelayMs: number, rampup?: RampupPolicy): void {
        const { remaining, resetMs, sentAt } = limits;
        if (resetMs === undefined || !(resetMs > 0)) return;
        // The reset as the window's answers narrow it; none for a window a later request saw end.
        const resetAt = this.ownLimits().announcedReset(now, sentAt, remaining ?? Infinity, resetMs);
        if (resetAt === undefined) return;
        const capped = Math.min(Math.max(0, resetAt - now), maxDelayMs);
        if (remaining === 0) {
            // Nothing left: as telling as a refusal (the bucket is empty now), without one being spent.
            if (rampup && now >= this.backoffUntil) this.ramp(rampup).onExhausted(now, rampup, capped);
            this.pauseUntil(now + capped);
            return;
        }
        if (rampup && remaining !== undefined && remaining > 0) this.ramp(rampup).onQuotaLeft(remaining);
        if (!rampup && remaining !== undefined && remaining > 0)
            this.ownBackoff().announce(Math.min(capped / remaining, maxDelayMs), now + capped);
    }

    /**
     * Sets the declared crawl delay (robots.txt; the manager passes the largest of the scope's
     * origins). A re-read robots.txt may lower it. Returns whether it changed.
     */
    setCrawlDelay(ms: number): boolean {
        const next = Number.isFinite(ms) && ms > 0 ? ms : 0;
        if (next === this.declaredMs) return false;
        this.declaredMs = next;
        return true;
    }

    /** Skips the scope for a Crawl-delay above the maximum (undefined: stops). Returns whether it changed. */
    skipForCrawlDelay(declaredSecs: number | undefined): boolean {
        if (this.limits.excessiveCrawlDelaySecs === declaredSecs) return false;
        this.ownLimits().excessiveCrawlDelaySecs = declaredSecs;
        return true;
    }

    /**
     * The scope answered a request without a refusal: the run of refusals is broken. Under rampup the
     * answer is counted, and the next refusal starts its backoff from the first step again: it marks a
     * pace a little too fast, not a site refusing everything. An answer to a request sent before the
     * last refusal does neither: with a long response time the requests in flight when a burst ran out
     * are answered after its refusal, and each such answer restarted the backoff at its first step, so
     * a limiter that counts refused requests (haproxy) was probed a second early once per answer.
     * Answers whether the dispatch clock moved earlier (a raised pace; `floorMs`: the floor in force).
     */
    recordAnswered(now: number, policy: PacingPolicy, sentAt?: number, floorMs = 0): boolean {
        const learner = policy.rampup ? this.rampupState : undefined;
        const before = learner?.delayMs() ?? 0;
        // The probe that ended a lockout set the pace: the next request leaves an interval of it after
        // the probe. The clock was armed at the pace before the lockout, a fraction of that interval,
        // and a limiter that remembers counts the probe and the next together.
        if (learner?.onAnswer(now, sentAt) && sentAt !== undefined) this.holdDispatchUntil(sentAt + learner.delayMs());
        this.backoffClock?.recordAnswered(learner !== undefined, sentAt);
        // A quiet window raised the pace: the next request leaves an interval of it after the last one,
        // not of the pace that armed the clock (a slow site's doubled pace would wait a whole old interval).
        // Under jitter the factor drawn for the armed interval is not kept: the clock stays as armed.
        if (!learner || !(learner.delayMs() < before) || policy.jitter || learner.lastDispatchAt < 0) return false;
        const at = learner.lastDispatchAt + dispatchSpacing(this, learner.lastDispatchAt, floorMs, policy);
        if (!(at < this.nextAt)) return false;
        this.nextAt = at;
        return true;
    }

    /** A request of the scope met a network error or a timeout (the error budget). */
    noteNetworkError(): void {
        this.ownLimits().noteNetworkError();
    }

    /** The scope answered at all (a refusal too): its run of network errors is over. */
    noteReachable(): void {
        this.scopeLimits?.noteReachable();
    }

    /**
     * A request of the scope, sent at `sentAt`, was handled successfully (which also breaks a run of
     * refusals, unless it was sent before the last one).
     */
    recordSuccess(sentAt?: number): void {
        this.handledCount += 1;
        // Breaks the run of refusals only: the answer itself was counted when it arrived.
        this.backoffClock?.recordAnswered(false, sentAt);
    }

    /**
     * A request of the scope was given up on: Crawlee marks failed requests handled too. It counts
     * as handled but breaks no run of refusals, or a scope refusing everything would never stall.
     */
    recordGivenUp(): void {
        this.handledCount += 1;
    }

    /**
     * Takes over saved numbers and a saved learner (read by `domain-state-codec.ts`), with every
     * clock cut to at most `latest` and every backoff wait to at most `maxWaitMs`.
     */
    restore(data: DomainStateData, learner: RatePacer | undefined, latest: number, maxWaitMs: number): void {
        this.declaredMs = data.crawlDelayMs;
        this.nextAt = Math.min(data.nextDispatchAt, latest);
        this.dispatchedCount = data.dispatched;
        this.handledCount = data.handled;
        if (this.backoffClock || anyBackoffData(data)) this.ownBackoff().restore(data, latest, maxWaitMs);
        if (this.scopeLimits || data.quotaWindowStart !== 0 || data.quotaSpent !== 0 || data.consecutiveErrors !== 0)
            this.ownLimits().restore(data.quotaWindowStart, data.quotaSpent, data.consecutiveErrors);
        // A saved learner replaces this one; without one, a rate an earlier run learned stays the start.
        if (learner || this.learning instanceof PaceLearner) this.learning = learner;
    }
}
