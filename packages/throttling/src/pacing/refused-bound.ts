/**
 * The refused bound of a pace learner: the lowest pace the site refused (or queued at) since the bound
 * was last relaxed, and how quiet windows probe up to it (docs/rampup.md, "What it does").
 *
 * - A quiet window steps the pace `PROBE_STEP` of the way to just under the bound, when that step is
 *   worth its refusal (`worthProbing`).
 * - A bound one refusal set while the pace doubled, or that another process's refusal set here, is
 *   unconfirmed: reached without a refusal, it is dropped and doubling resumes.
 * - After a period and `RELAX_DISPATCHES` requests without moving, the bound is relaxed a step, and
 *   again while the relaxed pace lives; the refusal that ends it sends the pace back to the held one.
 *
 * Rates are requests per second; times epoch ms. Decisions take `now` and read no clock.
 */
import { BARE_REFUSAL_MS, PACE_GAIN, PERIOD_MS, PROBE_STEP, RELAX_DISPATCHES } from './pace-learner-constants';

export class RefusedBound {
    /** The lowest pace refused since the last relaxing; Infinity when none. */
    rate = Number.POSITIVE_INFINITY;
    /** One refusal of a doubling pace set it, or another process's refusal: unconfirmed. */
    tentative = false;
    /** The pace held before the bound was last relaxed (a period without refusal proved it); 0: none. */
    heldRate = 0;
    // When the bound last moved: it is relaxed a period after, and a climb from a cut is timed from it.
    private movedAt = 0;
    // Dispatches since the bound last moved (other processes' included).
    private sinceMoved = 0;
    // The wait the last refusal imposed (the site's, or the backoff's), ms: what a refused probe costs.
    private refusalWaitMs = BARE_REFUSAL_MS;

    /** Whether any pace was refused since the last relaxing (else the pace still doubles). */
    get known(): boolean {
        return Number.isFinite(this.rate);
    }

    /** Whether `pace` is a relaxed bound's probe: above the pace held before the relaxing. */
    isRelaxedProbe(pace: number): boolean {
        return this.heldRate > 0 && pace > this.heldRate;
    }

    /** `count` requests went out (a negative count: ones counted did not go out after all). */
    noteDispatches(count: number): void {
        this.sinceMoved = Math.max(0, this.sinceMoved + count);
    }

    /** A refusal imposed a wait of `waitMs`. */
    noteRefusal(waitMs: number): void {
        this.refusalWaitMs = Math.max(waitMs, 1);
    }

    /** The site refused `rate` (or another process's refusal did) at `now`: the bound is at most that. */
    lower(now: number, rate: number, tentative = false): void {
        this.rate = Math.min(this.rate, rate);
        this.tentative = tentative;
        this.moved(now);
    }

    /**
     * A quiet window at `pace` at `now`, with `left` requests waiting at the site: the pace it steps to,
     * or undefined to hold it.
     */
    raise(now: number, pace: number, left: number): number | undefined {
        if (pace < this.rate * PACE_GAIN) {
            const next = Math.min(this.rate * PACE_GAIN, pace + (this.rate - pace) * PROBE_STEP);
            if (this.tentative || this.worthProbing(now, pace, next, left)) return next;
            // Short of the bound for good (no step is worth it): relaxed after a period as at the bound.
            if (this.relaxDue(now)) this.relax(now, pace);
            return undefined;
        }
        if (this.tentative) {
            // An unconfirmed bound reached without a refusal was not the site's: doubling resumes (as TCP
            // undoes a cut made for a loss found spurious). A real one is met again, refused in probing.
            this.tentative = false;
            this.rate = Number.POSITIVE_INFINITY;
            return pace * 2;
        }
        if (this.heldRate > 0 || this.relaxDue(now)) this.relax(now, pace);
        return undefined;
    }

    private moved(now: number): void {
        this.movedAt = now;
        this.sinceMoved = 0;
    }

    /** A period and `RELAX_DISPATCHES` requests since the bound last moved. */
    private relaxDue(now: number): boolean {
        return now - this.movedAt >= PERIOD_MS && this.sinceMoved >= RELAX_DISPATCHES;
    }

    /**
     * Rarely: the site may have got faster, or its limit changed. A relaxed bound reached without a
     * refusal was wrong: it is relaxed again until one comes (then the pace goes back to the held one).
     */
    private relax(now: number, pace: number): void {
        this.heldRate ||= pace;
        this.rate *= 1 + PROBE_STEP;
        this.moved(now);
    }

    /**
     * Whether stepping from `pace` up to `next` at `now` gains more than it risks, with `left` requests
     * waiting. With the site's rate anywhere between the pace and the bound, the step is refused as
     * often as it covers of that bracket; then the site's wait is lost, and the requests left go at the
     * cut, just under what the pace delivered, for as long as the climb back takes (as long as this one
     * took). Otherwise they go that much faster. A step near the bound late in a crawl is not worth it.
     */
    private worthProbing(now: number, pace: number, next: number, left: number): boolean {
        const refusedOdds = (next - pace) / (this.rate - pace);
        const leftSecs = left / pace;
        const savedSecs = leftSecs * (1 - pace / next);
        const climbSecs = Math.min(leftSecs, (now - this.movedAt) / 1000);
        const lostSecs = this.refusalWaitMs / 1000 + climbSecs * (1 / PACE_GAIN - 1);
        return (1 - refusedOdds) * savedSecs > refusedOdds * lostSecs;
    }
}
