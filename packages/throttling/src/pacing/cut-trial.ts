/**
 * Whether a scope's refusals follow its pace. A cut made under what the site delivered is put on
 * trial: a bucket then stops refusing. If the refused share does not fall after it (it kept
 * `BACKGROUND_HELD` of itself over two refusals), those refusals come whatever the pace (a site that
 * refuses a share of requests at random): the cut is undone and that share no longer cuts.
 *
 * A limiter with a memory (haproxy's sliding `http_req_rate`, a fixed window) still counts the run
 * before the cut after it, and refuses for a while whatever the new pace: the refusals within as long
 * after the cut as that run took do not judge it (undone on them, the cut sent the pace back up into
 * a second wave of refusals).
 *
 * A cut above what the site surely sustained (its answers over the whole span, waits included) proves
 * nothing when refusals outlast it: the reading it was cut to leaves out refill a full bucket would
 * have wasted in the wait, and a fixed window wastes none. Those refusals cut deeper, under that.
 */
import { BACKGROUND_HELD, PACE_GAIN } from './pace-learner-constants';

/** The bounds a cut replaced, put back when the cut is found not to follow the pace. */
export interface PaceBounds {
    rate: number;
    safeRate: number;
    unsafeRate: number;
}

/** A pace cut on trial: the bounds before it, and the share of dispatches refused that led to it. */
interface CutOnTrial {
    before: PaceBounds;
    share: number;
    dispatched: number;
    refusals: number;
    /** The pace cut to: refusals above it are a probe's, not the trial's. */
    cutTo: number;
    /** Refusals before this (epoch ms) may be the run before the cut, still counted by the site. */
    judgedFrom: number;
    /** Cut under what the site surely sustained, its waits included: only then can refusals that go on be no pace's. */
    sure: boolean;
}

export class CutTrial {
    // The cut being judged by the refusals after it; undefined when none is.
    private trial: CutOnTrial | undefined;
    // The share found to be refused whatever the pace: a share within it does not cut.
    private backgroundShare = 0;
    // The last trial failed above what the site surely sustained: the next cut goes under that.
    private cutDeeper = false;

    /** A cut is being judged: the pace holds until it is. */
    get open(): boolean {
        return this.trial !== undefined;
    }

    /** A share of refusals was found to come whatever the pace. */
    get background(): boolean {
        return this.backgroundShare > 0;
    }

    /** The refusals went on after a cut that stayed above what the site surely sustained: cut under it. */
    get deeper(): boolean {
        return this.cutDeeper;
    }

    /**
     * The pace was cut from `before` to `cutTo` at a refused share `share`, after `dispatched`
     * dispatches in all; judged only when `judged` (cut under what the site delivered), by the
     * refusals from `judgedFrom` (epoch ms) on.
     */
    begin(
        before: PaceBounds,
        cutTo: number,
        share: number,
        dispatched: number,
        judged: boolean,
        judgedFrom: number,
        sure = true,
    ): void {
        this.cutDeeper = false;
        this.trial = judged ? { before, share, dispatched, refusals: 0, cutTo, judgedFrom, sure } : undefined;
    }

    /**
     * Whether a refusal at `now` at `pace`, at a refused share `share` (one over the dispatches since
     * the one before), `dispatched` dispatches in all, should cut the pace. A cut found not to follow
     * the pace gives its earlier bounds to `undo`.
     */
    follows(now: number, share: number, pace: number, dispatched: number, undo: (before: PaceBounds) => void): boolean {
        const trial = this.trial;
        // Refused at a pace clearly above the one cut to: a probe found the bound, which says nothing of
        // the cut (a probe's small step above it still leaves the trial open).
        if (trial && pace > trial.cutTo / PACE_GAIN) this.trial = undefined;
        // Perhaps the run before the cut, still counted: no verdict on the cut, which may also have been
        // too small (a limit that fell): it cuts again.
        else if (trial && now < trial.judgedFrom) this.trial = undefined;
        else if (trial) {
            trial.refusals += 1;
            const since = trial.refusals / Math.max(1, dispatched - trial.dispatched);
            if (since < trial.share * BACKGROUND_HELD) this.trial = undefined;
            else if (trial.refusals < 2) return false;
            else if (!trial.sure) {
                // The cut may have been too small (a fixed window grants nothing until it turns, so the
                // reading that leaves wasted refill out was too high): no verdict yet, cut deeper.
                this.trial = undefined;
                this.cutDeeper = true;
            } else {
                this.trial = undefined;
                this.backgroundShare = Math.max(this.backgroundShare, Math.min(trial.share, since));
                undo(trial.before);
                return false;
            }
        }
        return !(this.backgroundShare > 0 && share <= this.backgroundShare / BACKGROUND_HELD);
    }

    /** A quiet window after `dispatched` dispatches: twice the run that led to the cut without a refusal, the share fell. */
    onQuiet(dispatched: number): void {
        const trial = this.trial;
        if (trial && (dispatched - trial.dispatched) * trial.share >= 2) this.trial = undefined;
    }
}
