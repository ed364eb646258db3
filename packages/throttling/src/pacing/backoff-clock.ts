import { applyJitter } from './policy';
import { DEFAULTS } from '../options/defaults';
import type { SharedRefusal } from '../core/shared-limit-types';
import type { BackoffPolicy, DomainStateData, PacingPolicy, RateLimitOutcome } from './domain-state-types';
import { UNLIMITED } from './domain-state-types';

/** Exponent cap: 2^20 × base is far beyond any sane cap, and keeps the arithmetic finite. */
export const MAX_BACKOFF_EXPONENT = 20;

/**
 * Slack allowed between a backoff's end and the next refusal when measuring stall time: the
 * crawler needs a moment to send the next request (pool polling, latency). Gaps longer than the
 * imposed wait plus this slack are idle time or crawl delay and do not count as stalling.
 */
export const STALL_DISPATCH_SLACK_MS = 2_000;

/** The fields of a saved state this clock keeps. */
export type BackoffData = Pick<DomainStateData, (typeof BACKOFF_FIELDS)[number]>;

export const BACKOFF_FIELDS = [
    'backoffUntil',
    'backoffExponent',
    'lastBackoffMs',
    'decayAt',
    'refusingSince',
    'lastRefusalAt',
    'stallMs',
    'lastImposedMs',
    'penaltyMs',
    'lastTriggerAt',
    'announcedIntervalMs',
    'announcedUntil',
    'refusals',
    'backedOffMs',
    'freeRetries',
] as const satisfies readonly (keyof DomainStateData)[];

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
    private decayAt = 0;
    // Start of the current unbroken run of refusals; 0 when the scope is not refusing.
    private refusingSince = 0;
    // Time of the last refusal; 0 when none.
    private lastRefusalAt = 0;
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
    private announcedUntil = 0;
    // Statistics: refusals met, time backed off in all, requests sent back for a free retry.
    private refusalCount = 0;
    private backedOffMs = 0;
    private freeRetryCount = 0;

    /** No dispatch before this time; 0 when never backed off. */
    get backoffUntil(): number {
        return this.until;
    }

    /** The exponent as last escalated, before any decay. */
    get backoffExponent(): number {
        return this.exponent;
    }

    /** After this time without a new refusal the exponent starts over; 0 when nothing to decay. */
    get decaysAt(): number {
        return this.decayAt;
    }

    /** Start of the current unbroken run of refusals; 0 when the scope is not refusing. */
    get refusingSinceAt(): number {
        return this.refusingSince;
    }

    /** Time of the last refusal; 0 when none. */
    get lastRefusal(): number {
        return this.lastRefusalAt;
    }

    /** Until when the announced pace applies. */
    get announcedUntilAt(): number {
        return this.announcedUntil;
    }

    get refusals(): number {
        return this.refusalCount;
    }

    get backedOff(): number {
        return this.backedOffMs;
    }

    get freeRetries(): number {
        return this.freeRetryCount;
    }

    isBackingOff(now: number): boolean {
        return now < this.until;
    }

    /** The exponent that the next escalation starts from, after any decay due by `now`. */
    effectiveExponent(now: number): number {
        return this.decayAt !== 0 && now >= this.decayAt ? 0 : this.exponent;
    }

    /** Pacing raised by backoff triggers at `now`, after the decay of full quiet windows. */
    penaltyAt(now: number, policy: PacingPolicy = UNLIMITED): number {
        if (this.penaltyMs <= 0) return 0;
        const windowMs = policy.backoffWindowMs ?? DEFAULTS.backoffWindowSecs * 1000;
        const factor = policy.backoffFactor ?? DEFAULTS.backoffFactor;
        const quietWindows = windowMs > 0 ? Math.floor(Math.max(0, now - this.lastTriggerAt) / windowMs) : Infinity;
        if (quietWindows === 0) return this.penaltyMs;
        const decayed = this.penaltyMs / factor ** Math.min(quietWindows, 64);
        // Once stepped below the least backoff, the configured pacing takes over again.
        return decayed < (policy.backoffMinDelayMs ?? 0) || decayed < 1 ? 0 : decayed;
    }

    /** The pace the server announced, while it applies at `now`; 0 otherwise. */
    announcedAt(now: number): number {
        return now < this.announcedUntil ? this.announcedMs : 0;
    }

    /**
     * Records a refusal. While the clock runs, a refusal does not escalate (a burst of in-flight
     * requests all refused counts once); a server-given wait may still extend the clock. `safeRate`
     * (the learner's, 0 when none) sets the first step under rampup; `stepBack` moves the rest.
     */
    recordRefusal(
        now: number,
        waitMs: number | undefined,
        policy: BackoffPolicy,
        safeRate: number,
        stepBack: StepBack,
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
            outcome = this.escalate(now, waitMs, policy, safeRate, stepBack);
        }
        this.backedOffMs += Math.max(0, this.until - coveredUntil);
        this.accumulateStall(now);
        return outcome;
    }

    /** A refusal outside a running backoff: a new wait (the server's, or the next exponential step). */
    private escalate(
        now: number,
        waitMs: number | undefined,
        policy: BackoffPolicy,
        safeRate: number,
        stepBack: StepBack,
    ): RateLimitOutcome {
        const exponent = Math.min(this.effectiveExponent(now) + 1, MAX_BACKOFF_EXPONENT);
        const factor = policy.backoffFactor ?? 2;
        const exponentialMs = Math.min(
            firstBackoffMs(policy, safeRate) * factor ** (exponent - 1),
            Number.MAX_SAFE_INTEGER,
        );
        const useHeader = waitMs !== undefined && waitMs > 0;
        const requestedMs = useHeader ? waitMs : exponentialMs;
        // Jitter spreads exponential waits so many workers do not wake together; a server-given
        // wait is a minimum and is only ever lengthened.
        const jittered = useHeader
            ? requestedMs
            : applyJitter(requestedMs, policy.jitter, policy.random ?? Math.random);
        const delayMs = Math.min(jittered, policy.backoffMaxDelayMs);
        // The rampup search paces from here: back to the last safe rate, not raised pacing.
        if (!policy.rampup) this.raisePenalty(now, useHeader ? requestedMs : undefined, policy);
        const nextDispatchAt = stepBack(delayMs, useHeader);
        this.lastTriggerAt = now;
        this.exponent = exponent;
        this.lastBackoffMs = delayMs;
        this.until = now + delayMs;
        // The quiet period is measured from when the scope can be dispatched again (a longer crawl
        // delay included); measured from the backoff end it would lapse before the retry.
        this.decayAt = Math.max(this.until, nextDispatchAt) + delayMs;
        const outcome: RateLimitOutcome = { escalated: true, waitMs: delayMs };
        if (requestedMs > policy.backoffMaxDelayMs) {
            outcome.cappedFrom = { source: useHeader ? 'retry-after' : 'exponential', requestedMs };
        }
        return outcome;
    }

    /**
     * The pacing after a backoff: raised to at least a server-given wait, or grown by the factor
     * without one; it steps down per quiet window afterwards.
     */
    private raisePenalty(now: number, serverWaitMs: number | undefined, policy: BackoffPolicy): void {
        const factor = policy.backoffFactor ?? 2;
        const current = this.penaltyAt(now, {
            ...UNLIMITED,
            backoffFactor: factor,
            backoffWindowMs: policy.backoffWindowMs,
            backoffMinDelayMs: policy.backoffMinDelayMs,
        });
        const max = policy.backoffMaxDelayMs;
        this.penaltyMs =
            serverWaitMs !== undefined
                ? Math.max(current, Math.min(serverWaitMs, max))
                : Math.min(current > 0 ? current * factor : policy.backoffMinDelayMs, max);
    }

    private accumulateStall(now: number): void {
        if (this.refusingSince === 0) {
            this.refusingSince = now;
            this.stallMs = 0;
        } else {
            const gap = Math.max(0, now - this.lastRefusalAt);
            this.stallMs += Math.min(gap, this.lastImposedMs + STALL_DISPATCH_SLACK_MS);
        }
        this.lastRefusalAt = now;
        this.lastImposedMs = Math.max(0, this.until - now);
    }

    /**
     * How long the scope has been refusing without a break at `now` (0 when it is not refusing):
     * the accumulated refusing time plus the part of the wait imposed by the last refusal that has
     * already passed.
     */
    stalledForMs(now: number): number {
        if (this.refusingSince === 0) return 0;
        const sinceLast = Math.max(0, now - this.lastRefusalAt);
        return this.stallMs + Math.min(sinceLast, this.lastImposedMs);
    }

    /**
     * The scope answered without a refusal: its run of refusals is over. `restart` (an answer under
     * rampup) also starts the next backoff from the first step.
     */
    recordAnswered(restart: boolean): void {
        if (restart) this.exponent = 0;
        this.refusingSince = 0;
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
        this.announcedUntil = until;
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
        this.backedOffMs += shared.backoffUntil - Math.max(this.until, now);
        // The quiet period that resets the exponent counts from the backoff's end: it moves with it.
        if (this.decayAt > 0) this.decayAt += grownBy;
        this.until = shared.backoffUntil;
        if (this.lastRefusalAt > 0) this.lastImposedMs = Math.max(this.lastImposedMs, this.until - this.lastRefusalAt);
        return true;
    }

    /** Writes this clock's fields into a saved state. */
    save(data: BackoffData): void {
        data.backoffUntil = this.until;
        data.backoffExponent = this.exponent;
        data.lastBackoffMs = this.lastBackoffMs;
        data.decayAt = this.decayAt;
        data.refusingSince = this.refusingSince;
        data.lastRefusalAt = this.lastRefusalAt;
        data.stallMs = this.stallMs;
        data.lastImposedMs = this.lastImposedMs;
        data.penaltyMs = this.penaltyMs;
        data.lastTriggerAt = this.lastTriggerAt;
        data.announcedIntervalMs = this.announcedMs;
        data.announcedUntil = this.announcedUntil;
        data.refusals = this.refusalCount;
        data.backedOffMs = this.backedOffMs;
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
        this.decayAt = Math.min(data.decayAt, latest);
        this.refusingSince = data.refusingSince;
        this.lastRefusalAt = data.lastRefusalAt;
        this.stallMs = data.stallMs;
        this.lastImposedMs = Math.min(data.lastImposedMs, maxWaitMs);
        this.penaltyMs = Math.min(data.penaltyMs, maxWaitMs);
        this.lastTriggerAt = data.lastTriggerAt;
        this.announcedMs = Math.min(data.announcedIntervalMs, maxWaitMs);
        this.announcedUntil = Math.min(data.announcedUntil, latest);
        this.refusalCount = data.refusals;
        this.backedOffMs = data.backedOffMs;
        this.freeRetryCount = data.freeRetries;
    }
}

/**
 * The first step of exponential backoff. Adaptive pacing reads a bare refusal as "a little too
 * fast", as a `Retry-After: 1` would say: it waits a second (or two intervals of a slow site), not
 * `baseDelaySecs`; a run of refusals without an answer still doubles from there.
 */
function firstBackoffMs(policy: BackoffPolicy, safeRate: number): number {
    if (!policy.rampup) return policy.backoffMinDelayMs;
    return Math.min(policy.backoffMinDelayMs, Math.max(1000, safeRate > 0 ? 2000 / safeRate : 0));
}

/** Whether saved fields hold anything this clock would keep (else a restored scope need not make one). */
export function anyBackoffData(data: BackoffData): boolean {
    return BACKOFF_FIELDS.some((key) => data[key] !== 0);
}
