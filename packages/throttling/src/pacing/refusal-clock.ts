/**
 * The backoff clock of one scope: what a refusal does to it. A refusal outside a running backoff
 * escalates (the server's wait, or the next exponential step; under rampup the pacer steps back
 * instead of the pacing being raised); refusals while it runs only lengthen it to a server-given
 * wait (one burst, one escalation). It also keeps how long the scope has been refusing without a
 * break, for stall detection. Every decision takes `now`; nothing here reads a clock.
 */
import { applyJitter } from './policy';
import { DEFAULTS } from '../options/defaults';
import { DomainStateRecord } from './domain-state-record';
import type { BackoffPolicy, PacingPolicy, RateLimitOutcome } from './domain-state-types';
import { UNLIMITED } from './domain-state-types';
import type { RampupPolicy } from './rampup-policy';
import type { RatePacer } from './rate-pacer';

/** Exponent cap: 2^20 × base is far beyond any sane cap, and keeps the arithmetic finite. */
export const MAX_BACKOFF_EXPONENT = 20;

/**
 * Slack allowed between a backoff's end and the next refusal when measuring stall time: the
 * crawler needs a moment to send the next request (pool polling, latency). Gaps longer than the
 * imposed wait plus this slack are idle time or crawl delay and do not count as stalling.
 */
export const STALL_DISPATCH_SLACK_MS = 2_000;

export abstract class RefusalClock extends DomainStateRecord {
    /** The scope's rate pacer under `policy`, made on first use. */
    abstract ramp(policy: RampupPolicy): RatePacer;

    /** Requests of the scope in flight (a refusal's own included until it is reclaimed). */
    abstract get inFlight(): number;

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

    isBackingOff(now: number): boolean {
        return now < this.backoffUntil;
    }

    /** The exponent that the next escalation starts from, after any decay due by `now`. */
    effectiveExponent(now: number): number {
        return this.decayAt !== 0 && now >= this.decayAt ? 0 : this.backoffExponent;
    }

    /**
     * Records a refusal. While the backoff clock runs, a refusal does not escalate (a burst of
     * in-flight requests all refused counts once); a server-given wait may still extend the clock.
     */
    recordRateLimit(now: number, waitMs: number | undefined, policy: BackoffPolicy): RateLimitOutcome {
        this.refusals += 1;
        let outcome: RateLimitOutcome;
        // Time backed off, for the statistics: what this refusal added beyond the running backoff.
        const coveredUntil = Math.max(this.backoffUntil, now);
        if (this.isBackingOff(now)) {
            if (waitMs !== undefined && waitMs > 0) {
                const capped = Math.min(waitMs, policy.backoffMaxDelayMs);
                this.backoffUntil = Math.max(this.backoffUntil, now + capped);
            }
            outcome = { escalated: false, waitMs: this.backoffUntil - now };
        } else {
            outcome = this.escalate(now, waitMs, policy);
        }
        this.backedOffMs += Math.max(0, this.backoffUntil - coveredUntil);
        this.accumulateStall(now);
        return outcome;
    }

    /** A refusal outside a running backoff: a new wait (the server's, or the next exponential step). */
    private escalate(now: number, waitMs: number | undefined, policy: BackoffPolicy): RateLimitOutcome {
        const exponent = Math.min(this.effectiveExponent(now) + 1, MAX_BACKOFF_EXPONENT);
        const factor = policy.backoffFactor ?? 2;
        const exponentialMs = Math.min(this.firstBackoffMs(policy) * factor ** (exponent - 1), Number.MAX_SAFE_INTEGER);
        const useHeader = waitMs !== undefined && waitMs > 0;
        const requestedMs = useHeader ? waitMs : exponentialMs;
        // Jitter spreads exponential waits so many workers do not wake together; a server-given
        // wait is a minimum and is only ever lengthened.
        const jittered = useHeader
            ? requestedMs
            : applyJitter(requestedMs, policy.jitter, policy.random ?? Math.random);
        const delayMs = Math.min(jittered, policy.backoffMaxDelayMs);
        // The rampup search paces from here: back to the last safe rate, not raised pacing.
        if (policy.rampup) {
            const pacer = this.ramp(policy.rampup);
            pacer.onTrigger(now, policy.rampup, delayMs, useHeader, this.inFlight);
            // The clock was armed at the pace just refused: the next request waits one new interval.
            this.nextDispatchAt = Math.max(this.nextDispatchAt, now + pacer.delayMs());
        } else this.raisePenalty(now, useHeader ? requestedMs : undefined, policy);
        this.lastTriggerAt = now;
        this.backoffExponent = exponent;
        this.lastBackoffMs = delayMs;
        this.backoffUntil = now + delayMs;
        // The quiet period is measured from when the domain can be dispatched again (a longer
        // crawl delay included); measured from the backoff end it would lapse before the retry.
        this.decayAt = Math.max(this.backoffUntil, this.nextDispatchAt) + delayMs;
        const outcome: RateLimitOutcome = { escalated: true, waitMs: delayMs };
        if (requestedMs > policy.backoffMaxDelayMs) {
            outcome.cappedFrom = { source: useHeader ? 'retry-after' : 'exponential', requestedMs };
        }
        return outcome;
    }

    /**
     * The first step of exponential backoff. Adaptive pacing reads a bare refusal as "a little too
     * fast", as a `Retry-After: 1` would say: it waits a second (or two intervals of a slow site), not
     * `baseDelaySecs`; a run of refusals without an answer still doubles from there.
     */
    private firstBackoffMs(policy: BackoffPolicy): number {
        if (!policy.rampup) return policy.backoffMinDelayMs;
        const rate = this.rampupState?.safeRate ?? 0;
        return Math.min(policy.backoffMinDelayMs, Math.max(1000, rate > 0 ? 2000 / rate : 0));
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
        this.lastImposedMs = Math.max(0, this.backoffUntil - now);
    }

    /**
     * How long the domain has been refusing without a break at `now` (0 when it is not refusing):
     * the accumulated refusing time plus the part of the wait imposed by the last refusal that has
     * already passed.
     */
    stalledForMs(now: number): number {
        if (this.refusingSince === 0) return 0;
        const sinceLast = Math.max(0, now - this.lastRefusalAt);
        return this.stallMs + Math.min(sinceLast, this.lastImposedMs);
    }
}
