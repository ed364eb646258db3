import type { SharedRefusal } from '../core/shared-limit-types';
import type { BackoffData, BackoffPolicy, RateLimitOutcome } from './domain-state-types';
import type { DecayPolicy } from './backoff-steps';
import { backoffStep, decayedPenalty, MAX_BACKOFF_EXPONENT, raisedPenalty } from './backoff-steps';
import { stalledForMs, stallGapMs } from './backoff-steps';

/**
 * How an escalation moves the rest of the scope's pacing: under rampup the learner steps back and
 * the crawl-delay clock waits one new interval; returns the crawl-delay clock after it.
 */
export type StepBack = (delayMs: number, fromServer: boolean) => number;

/**
 * The backoff clock of one scope, and what the server's rate limits did to it. A refusal outside a
 * running backoff escalates (the server's wait, or the next exponential step; without rampup the
 * pacing is raised, and it decays per quiet window); refusals while it runs only lengthen it to a
 * server-given wait (one burst, one escalation). It keeps how long the scope has been refusing
 * without a break (stall detection), the pace a server announced in its rate-limit headers (an
 * announcement with nothing left holds this same clock), and the refusal statistics. A scope that
 * was never refused and never announced a limit has none: its `DomainState` makes one on the first
 * such signal (most domains of a broad crawl never need these 15 numbers). Every decision takes
 * `now`; nothing here reads a clock.
 */
export class BackoffClock {
    // No dispatch before this time; 0 when never backed off.
    private until = 0;
    // Escalations since the last decay; the next exponential wait is base × factor^exponent.
    private exponent = 0;
    // The wait imposed by the last escalation, ms.
    private lastBackoffMs = 0;
    // After this time without a new refusal the exponent starts over; 0 when nothing to decay.
    private decayDue = 0;
    // Start of the current unbroken run of refusals; 0 when the scope is not refusing.
    private runStart = 0;
    // Time of the last refusal; 0 when none.
    private lastRefused = 0;
    // Refusing time accumulated in the current run (idle time and crawl delay excluded).
    private stallMs = 0;
    // The wait imposed at the last refusal (remaining backoff at that moment), ms.
    private lastImposedMs = 0;
    // Pacing raised by backoff triggers, ms; decays one factor per quiet window.
    private penaltyMs = 0;
    // Time of the last backoff trigger (escalation); 0 when none.
    private lastTriggerAt = 0;
    // Pacing announced by the server (quota left over the time to its reset), ms, and until when.
    private announcedMs = 0;
    private announcedEnd = 0;
    // Statistics: refusals met, time backed off in all, requests sent back for a free retry.
    private refusalCount = 0;
    private backedOffTotal = 0;
    private freeRetryCount = 0;

    /** No dispatch before this time; 0 when never backed off. */
    get backoffUntil(): number {
        return this.until;
    }

    /** The exponent as last escalated, before any decay (see `effectiveExponent`). */
    get backoffExponent(): number {
        return this.exponent;
    }

    /** After this time without a new refusal the exponent starts over; 0 when nothing to decay. */
    get decayAt(): number {
        return this.decayDue;
    }

    /** Start of the current unbroken run of refusals; 0 when the scope is not refusing. */
    get refusingSince(): number {
        return this.runStart;
    }

    /** Time of the last refusal; 0 when none. */
    get lastRefusalAt(): number {
        return this.lastRefused;
    }

    /** Until when the announced pace applies. */
    get announcedUntil(): number {
        return this.announcedEnd;
    }

    /** Refusals met (the statistics). */
    get refusals(): number {
        return this.refusalCount;
    }

    /** Time spent backed off in all (the statistics). */
    get backedOffMs(): number {
        return this.backedOffTotal;
    }

    /** Requests sent back for a free retry after a refusal (the statistics). */
    get freeRetries(): number {
        return this.freeRetryCount;
    }

    isBackingOff(now: number): boolean {
        return now < this.until;
    }

    /** The exponent that the next escalation starts from, after any decay due by `now`. */
    effectiveExponent(now: number): number {
        return this.decayDue !== 0 && now >= this.decayDue ? 0 : this.exponent;
    }

    /** Pacing raised by backoff triggers at `now`, after the decay of full quiet windows. */
    penaltyAt(now: number, policy: DecayPolicy): number {
        return decayedPenalty(this.penaltyMs, this.lastTriggerAt, now, policy);
    }

    /** The pace the server announced, while it applies at `now`; 0 otherwise. */
    announcedAt(now: number): number {
        return now < this.announcedEnd ? this.announcedMs : 0;
    }

    /**
     * Records a refusal. While the clock runs, a refusal does not escalate (a burst of in-flight
     * requests all refused counts once); a server-given wait may still extend the clock.
     * `learnedFirstMs` (the pace learner's, 0 when none) sets the first step under rampup; `stepBack`
     * moves the rest; `skipRetry` (the learner's, `PaceLearner.skipsRetry`) waits out the next
     * exponential step without a retry, as one step more.
     */
    recordRefusal(
        now: number,
        waitMs: number | undefined,
        policy: BackoffPolicy,
        learnedFirstMs: number,
        stepBack: StepBack,
        skipRetry = false,
    ): RateLimitOutcome {
        this.refusalCount += 1;
        let outcome: RateLimitOutcome;
        // Time backed off, for the statistics: what this refusal added beyond the running backoff.
        const coveredUntil = Math.max(this.until, now);
        if (this.isBackingOff(now)) {
            if (waitMs !== undefined && waitMs > 0) {
                const capped = Math.min(waitMs, policy.backoffMaxDelayMs);
                this.until = Math.max(this.until, now + capped);
            }
            outcome = { escalated: false, waitMs: this.until - now };
        } else {
            outcome = this.escalate(now, waitMs, policy, learnedFirstMs, stepBack, skipRetry);
        }
        this.backedOffTotal += Math.max(0, this.until - coveredUntil);
        this.accumulateStall(now);
        return outcome;
    }

    /** A refusal outside a running backoff: a new wait (the server's, or the next exponential step). */
    private escalate(
        now: number,
        waitMs: number | undefined,
        policy: BackoffPolicy,
        learnedFirstMs: number,
        stepBack: StepBack,
        skipRetry: boolean,
    ): RateLimitOutcome {
        // A retry the learner skips is one escalation more, waited out without sending it.
        const skip = skipRetry && !(waitMs !== undefined && waitMs > 0);
        const exponent = Math.min(this.effectiveExponent(now) + (skip ? 2 : 1), MAX_BACKOFF_EXPONENT);
        const { delayMs, requestedMs, fromServer } = backoffStep(exponent, waitMs, policy, learnedFirstMs, skip);
        // The rampup search paces from here: back to the last safe rate, not raised pacing.
        if (!policy.rampup) {
            const current = this.penaltyAt(now, policy);
            this.penaltyMs = raisedPenalty(current, fromServer ? requestedMs : undefined, policy);
        }
        const nextDispatchAt = stepBack(delayMs, fromServer);
        this.lastTriggerAt = now;
        this.exponent = exponent;
        this.lastBackoffMs = delayMs;
        this.until = now + delayMs;
        // The quiet period is measured from when the scope can be dispatched again (a longer crawl
        // delay included); measured from the backoff end it would lapse before the retry.
        this.decayDue = Math.max(this.until, nextDispatchAt) + delayMs;
        const outcome: RateLimitOutcome = { escalated: true, waitMs: delayMs };
        if (requestedMs > policy.backoffMaxDelayMs) {
            outcome.cappedFrom = { source: fromServer ? 'retry-after' : 'exponential', requestedMs };
        }
        return outcome;
    }

    private accumulateStall(now: number): void {
        if (this.runStart === 0) {
            this.runStart = now;
            this.stallMs = 0;
        } else {
            this.stallMs += stallGapMs(now, this.lastRefused, this.lastImposedMs);
        }
        this.lastRefused = now;
        this.lastImposedMs = Math.max(0, this.until - now);
    }

    /**
     * How long the scope has been refusing without a break at `now` (0 when it is not refusing):
     * the accumulated refusing time plus the part of the wait imposed by the last refusal that has
     * already passed.
     */
    stalledForMs(now: number): number {
        if (this.runStart === 0) return 0;
        return stalledForMs(this.stallMs, this.lastRefused, this.lastImposedMs, now);
    }

    /**
     * Whether an answer to a request sent at `sentAt` (undefined: unknown) breaks a run of refusals:
     * one sent before the last refusal left before the site refused, and says nothing of whether it
     * takes requests again.
     */
    isBrokenBy(sentAt: number | undefined): boolean {
        return sentAt === undefined || sentAt >= this.lastRefused;
    }

    /**
     * The scope answered without a refusal: its run of refusals is over. `restart` (an answer under
     * rampup) also starts the next backoff from the first step. An answer to a request sent at
     * `sentAt`, before the last refusal, breaks nothing.
     */
    recordAnswered(restart: boolean, sentAt?: number): void {
        if (!this.isBrokenBy(sentAt)) return;
        if (restart) this.exponent = 0;
        this.runStart = 0;
        this.stallMs = 0;
        this.lastImposedMs = 0;
    }

    /** Holds the scope until at least `until` without counting a refusal (a pause, an empty quota). */
    holdUntil(until: number): boolean {
        if (until <= this.until) return false;
        this.until = until;
        return true;
    }

    /** A server announced `intervalMs` between requests until `until`. */
    announce(intervalMs: number, until: number): void {
        this.announcedMs = intervalMs;
        this.announcedEnd = until;
    }

    noteFreeRetry(): void {
        this.freeRetryCount += 1;
    }

    /**
     * Takes over the backoff the shared clock answered for a refusal this process recorded, when it
     * is longer than this process's own: another process's burst already set it, or the shared level
     * (bursts seen by every process) is higher than this process's exponent. Under rampup the
     * exponent stays the learner's (it starts over on every answer). Returns whether the backoff grew.
     */
    adoptShared(shared: SharedRefusal, now: number, rampup: boolean): boolean {
        if (!rampup && shared.level > this.exponent) this.exponent = Math.min(shared.level, MAX_BACKOFF_EXPONENT);
        if (!(shared.backoffUntil > this.until)) return false;
        const grownBy = shared.backoffUntil - this.until;
        this.backedOffTotal += shared.backoffUntil - Math.max(this.until, now);
        // The quiet period that resets the exponent counts from the backoff's end: it moves with it.
        if (this.decayDue > 0) this.decayDue += grownBy;
        this.until = shared.backoffUntil;
        if (this.lastRefused > 0) this.lastImposedMs = Math.max(this.lastImposedMs, this.until - this.lastRefused);
        return true;
    }

    /** Writes this clock's fields into a saved state. */
    save(data: BackoffData): void {
        data.backoffUntil = this.until;
        data.backoffExponent = this.exponent;
        data.lastBackoffMs = this.lastBackoffMs;
        data.decayAt = this.decayDue;
        data.refusingSince = this.runStart;
        data.lastRefusalAt = this.lastRefused;
        data.stallMs = this.stallMs;
        data.lastImposedMs = this.lastImposedMs;
        data.penaltyMs = this.penaltyMs;
        data.lastTriggerAt = this.lastTriggerAt;
        data.announcedIntervalMs = this.announcedMs;
        data.announcedUntil = this.announcedEnd;
        data.refusals = this.refusalCount;
        data.backedOffMs = this.backedOffTotal;
        data.freeRetries = this.freeRetryCount;
    }

    /**
     * Takes over a saved state's fields, with every time cut to at most `latest` and every wait to
     * at most `maxWaitMs` (a record written by a faulty clock, or edited by hand, must not put a
     * scope to sleep for longer than a live backoff could).
     */
    restore(data: BackoffData, latest: number, maxWaitMs: number): void {
        this.until = Math.min(data.backoffUntil, latest);
        this.exponent = Math.min(data.backoffExponent, MAX_BACKOFF_EXPONENT);
        this.lastBackoffMs = Math.min(data.lastBackoffMs, maxWaitMs);
        this.decayDue = Math.min(data.decayAt, latest);
        this.runStart = data.refusingSince;
        this.lastRefused = data.lastRefusalAt;
        this.stallMs = data.stallMs;
        this.lastImposedMs = Math.min(data.lastImposedMs, maxWaitMs);
        this.penaltyMs = Math.min(data.penaltyMs, maxWaitMs);
        this.lastTriggerAt = data.lastTriggerAt;
        this.announcedMs = Math.min(data.announcedIntervalMs, maxWaitMs);
        this.announcedEnd = Math.min(data.announcedUntil, latest);
        this.refusalCount = data.refusals;
        this.backedOffTotal = data.backedOffMs;
        this.freeRetryCount = data.freeRetries;
    }
}

/** What changes a backoff clock; a reader sees the rest (its numbers and decisions). */
type BackoffChanges =
    'recordRefusal' | 'recordAnswered' | 'holdUntil' | 'announce' | 'noteFreeRetry' | 'adoptShared' | 'restore';

/** A scope's backoff as its readers see it. */
export type BackoffReadings = Omit<BackoffClock, BackoffChanges>;

/** The backoff of a scope that has none yet: every number 0. Frozen, as every such scope shares it. */
export const NO_BACKOFF: BackoffReadings = Object.freeze(new BackoffClock());
