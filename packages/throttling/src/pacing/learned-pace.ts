/**
 * The pace of one scope's learner: the rate asked for, the one learned safe, the last quiet one and
 * the refused bound above them, and how a measurement, a cut, a quiet window, a drain or another
 * process's move sets them (docs/rampup.md, "What it does with it"). Rates are requests per second;
 * times epoch ms.
 */
import type { RampupPolicy } from './rampup-policy';
import { clamp } from './rate-values';
import { RefusedBound } from './refused-bound';
import { BACKGROUND_HELD, MAX_DRAIN, PACE_GAIN, PROBE_STEP } from './pace-learner-constants';

export class LearnedPace {
    /** The pace asked for (Infinity: unpaced). */
    rate: number;
    /** The pace learned to be safe: the last quiet or estimated one; 0 while unknown. */
    safeRate = 0;
    /** The last quiet pace: a cut does not fall below it while the pace doubles and it is under the refused one. */
    quietRate = 0;
    /** The lowest pace refused, and how quiet windows probe up to it. */
    readonly bound = new RefusedBound();
    // A rate the site is under though none was refused yet: the crawl's start sent faster and was refused.
    // Doubling steps towards it as a probe steps towards a refused pace, and resumes past it.
    private ceiling = Number.POSITIVE_INFINITY;
    // The pace before the last raise, and the dispatches then: refused with none sent since, a request
    // went out at that pace, not the raised one.
    private raisedFrom = { rate: Number.POSITIVE_INFINITY, dispatched: -1 };
    // Dispatches in all when a quiet window last stepped the pace towards the refused bound (-1: never).
    private probedAt = -1;

    constructor(initialRate: number) {
        this.rate = initialRate;
    }

    /** Paces just under `measured`, with `refused` (a pace the site refused or queued at) as the bound. */
    measured(now: number, measured: number, refused: number, policy: RampupPolicy): void {
        this.ceiling = Number.POSITIVE_INFINITY;
        this.bound.lower(now, Math.max(measured, refused));
        this.learned(Math.min(measured, refused) * PACE_GAIN, policy);
    }

    /**
     * Refused at the pace: just under the rate `delivered` since the bucket was last empty (`exact`: the
     * crawl asked faster all along, so that is the site's rate) or `proven` by accepted requests since.
     * With neither a delivery nor a quiet pace to go back to: half the refused pace, or half `tooFast`
     * (a rate the refusals prove the site is under) where that is lower.
     */
    cut(
        now: number,
        delivered: number | undefined,
        exact: boolean,
        proven: number,
        policy: RampupPolicy,
        tooFast = Number.POSITIVE_INFINITY,
    ): void {
        const refused = this.rate;
        // The delivery is a lower bound on the rate (a full bucket wastes its refill); a pace that lived
        // through a quiet window clearly below the refused one is one too, unless a burst hid it. Slow
        // start refused: back to the last pace that lived through a quiet window (half the refused one).
        const doubling = !this.bound.known;
        const { heldRate } = this.bound;
        const quiet = Math.max(0, ...[doubling ? this.quietRate : 0, heldRate].filter((r) => r < refused * PACE_GAIN));
        const reading = Math.max(Math.min(delivered ?? 0, refused), quiet) || Math.min(refused, tooFast) / 2;
        // What accepted requests proved since the last refusal holds whatever the delivery says.
        const estimate = Math.max(reading, Math.min(proven, refused));
        // Exact, or a relaxed bound's probe refused above a pace held for a period: the bound sits just
        // above the estimate, with no probing up to the pace refused until the next relaxing.
        const settled = exact || (heldRate > 0 && heldRate < refused);
        this.bound.heldRate = 0;
        this.measured(now, estimate, settled ? Math.min(refused, estimate / PACE_GAIN) : refused, policy);
        // One refusal of twice a quiet pace, with no delivery to say the site held it: perhaps two
        // requests that arrived bunched, not the pace.
        this.bound.tentative = doubling && !settled;
    }

    /**
     * Whether a refusal ending a run of `run` requests, `dispatched` sent in all, came right after a
     * probe step: within the run's last `1 − BACKGROUND_HELD` (a fifth). A share refused whatever the
     * pace lands there that rarely; a pace raised past the site's rate is refused there. Its cut needs
     * no trial (which holds the pace for two runs, long after a long run held under the rate).
     */
    refusedAfterProbe(dispatched: number, run: number): boolean {
        return this.probedAt >= 0 && dispatched - this.probedAt < run * (1 - BACKGROUND_HELD);
    }

    /** The crawl's start was refused sending at `rate`: doubling slows down as it nears it. */
    capDoubling(rate: number): void {
        if (rate > this.rate) this.ceiling = rate;
    }

    /** Paces at `rate` (within the policy's bounds), learned safe. */
    learned(rate: number, policy: RampupPolicy): void {
        this.safeRate = clamp(rate, policy);
        this.rate = this.safeRate;
    }

    /** Refused with `dispatched` sent in all: with none sent since the last raise, the pace refused was the one before it. */
    refusedAt(dispatched: number): void {
        if (dispatched === this.raisedFrom.dispatched) this.rate = Math.min(this.rate, this.raisedFrom.rate);
    }

    /**
     * A queue stands at the site though the pace spaced the requests: the pace drops for a window by
     * the share of the window the queue holds (`standingMs`), at most `MAX_DRAIN` (BBR's drain).
     */
    drain(standingMs: number, policy: RampupPolicy): void {
        const share = Math.min(MAX_DRAIN, standingMs / policy.windowMs);
        this.rate = clamp((this.safeRate || this.rate) * (1 - share), policy);
    }

    /** A quiet window after a drain: the queue is gone, the safe pace holds again. Answers whether one ended. */
    endDrain(): boolean {
        if (!(this.rate < this.safeRate)) return false;
        this.rate = this.safeRate;
        return true;
    }

    /**
     * A quiet window proved the pace at `now`, `dispatched` sent in all: it doubles before any refusal,
     * else steps towards the refused bound when `probe` allows, with `left` requests waiting.
     */
    onQuiet(now: number, dispatched: number, probe: boolean, left: number, policy: RampupPolicy): void {
        this.quietRate = this.rate;
        this.safeRate = Math.max(this.safeRate, Math.min(this.rate, this.bound.rate * PACE_GAIN));
        this.raisedFrom = { rate: this.rate, dispatched };
        if (!this.bound.known) this.rate = clamp(this.doubled(), policy);
        else if (probe) {
            const next = this.bound.raise(now, this.rate, left);
            if (next !== undefined && next > this.rate) this.probedAt = dispatched;
            if (next !== undefined) this.rate = clamp(next, policy);
        }
    }

    /**
     * The pace a quiet window doubles to: twice this one, but no more than `PROBE_STEP` of the way to just
     * under the ceiling. A ceiling reached without a refusal is gone (the start was refused for a burst,
     * not for its rate) and doubling resumes.
     */
    private doubled(): number {
        if (this.rate >= this.ceiling * PACE_GAIN) this.ceiling = Number.POSITIVE_INFINITY;
        const step = this.rate + (this.ceiling - this.rate) * PROBE_STEP;
        return Math.min(this.rate * 2, this.ceiling * PACE_GAIN, step);
    }

    /**
     * Another process sharing the pace set it to `rate`. A lower pace was a refusal there: the pace
     * asked for here becomes the refused bound. A higher one was a quiet window there: the pace asked
     * for here lived through it too. `common`: the pace both last shared (0: none); one at or above it,
     * though under the pace asked for here, was a smaller raise there, not a refusal. Answers whether
     * the move was a cut.
     */
    follow(now: number, rate: number, common: number, policy: RampupPolicy): boolean {
        const asked = this.rate;
        const next = clamp(rate, policy);
        this.rate = next;
        if (next >= asked || (common > 0 && next >= common)) {
            // Raised there after a quiet window at the pace asked for here (or at the common one,
            // where it raised less than this one did meanwhile): as if here.
            const lived = next >= asked ? asked : common;
            if (Number.isFinite(lived)) {
                this.safeRate = Math.max(this.safeRate, lived);
                this.quietRate = lived;
            }
            return false;
        }
        this.safeRate = next;
        // A first bound learned from another process's refusal is unconfirmed here, as one's own in doubling.
        this.bound.lower(now, asked, !this.bound.known && Number.isFinite(asked));
        return true;
    }
}
