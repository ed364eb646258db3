/**
 * Refusals that do not follow the pace: a site that refuses a share of requests whatever the pace
 * (a flaky backend, a challenge shown at random, a limiter keyed on something else). Answering each
 * with a pace cut would ratchet the pace down without end, and persisted paces carry the ratchet across
 * restarts. So a cut goes on trial: had the refusals followed the pace, the slower pace would refuse a
 * clearly smaller share of the dispatches; refused about as often instead, the cut is undone and that
 * share is remembered as background, which later refusals must exceed to cut again.
 *
 * Shares are counted in dispatches, not time: a token bucket's refill during the waits it imposes
 * would blur a share per second.
 */

/** The pace bounds a cut changed, to restore should it be undone. */
export interface PaceBounds {
    rate: number;
    safeRate: number;
    unsafeRate: number;
    quietPaces: readonly number[];
}

/** A judgment of a refusal after a cut: none open, followed the pace, held (wait for more), undo. */
export type CutVerdict = { kind: 'none' | 'followed' | 'held' } | { kind: 'undo'; bounds: PaceBounds };

interface CutOnTrial {
    bounds: PaceBounds;
    /** The refused share at the pace cut: one refusal over the dispatches since the one before. */
    share: number;
    /** Dispatches counted at the cut. */
    dispatched: number;
    /** Refusals since the cut. */
    refusals: number;
    /** What a token bucket would refuse at the cut pace, given the rate delivered before the cut. */
    bucketExpects: number;
}

/** The runs of a scope not refused yet, shared: runs are only ever replaced, never changed in place. */
const NO_RUNS: readonly number[] = Object.freeze([]);
/** Refusal runs (dispatches per refusal) kept to measure the refused share of late. */
const RECENT_RUNS = 3;
/** A refused share up to this many times the background share is background too (the share is noisy). */
const BACKGROUND_MARGIN = 1.5;
/** A share that kept more than this ratio of itself after a cut did not fall because of it. */
const BACKGROUND_HELD = 0.9;
/** Refusals after a cut that judge it: the first alone is too noisy to undo a cut on. */
const TRIAL_REFUSALS = 2;
/** Cuts at a rarer refused share are not tried: they cost little, and quiet windows bring the pace back. */
const MIN_TRIAL_SHARE = 1 / 12;
/** A site refusing this share or more is left to cuts and the backoff, never called background. */
const MAX_BACKGROUND_SHARE = 0.5;

/**
 * The share a token bucket refusing `share` of the dispatches at pace `from` would refuse at pace `to`.
 * After each refusal's wait the bucket holds at least one token, so a run of n dispatches per refusal
 * at pace P means n - 1 = 1 + (n - 1) × rate / P: rate = P × (1 - 1 / (n - 1)).
 */
export function bucketShare(from: number, share: number, to: number): number {
    const run = 1 / share;
    const rate = run > 2 ? from * (1 - 1 / (run - 1)) : 0;
    return to > rate ? 1 / (1 + 1 / (1 - rate / to)) : 0;
}

/**
 * The share a token bucket of `rate` refuses when paced at `pace` with a wait of `waitMs` after each
 * refusal: the wait refills rate × wait tokens, which a pace above the rate drains at (pace − rate)
 * per second, so about rate × wait / (1 − rate / pace) requests go through per refusal.
 */
export function refillShare(rate: number, waitMs: number, pace: number): number {
    if (!(rate > 0) || pace <= rate) return 0;
    const through = (rate * Math.max(waitMs, 0)) / 1000 / (1 - rate / pace);
    return 1 / (1 + through);
}

export class BackgroundRefusals {
    /** The share refused whatever the pace, as a cut found it; 0 while none was found. */
    share = 0;
    // Every dispatch, and the count at the last refusal.
    private dispatched = 0;
    private dispatchedAtRefusal = 0;
    // Dispatches per refusal of the last few refusals, newest last.
    private runs: readonly number[] = NO_RUNS;
    // The last pace cut, judged at the refusals after it.
    private trial: CutOnTrial | undefined;

    onDispatch(): void {
        this.dispatched += 1;
    }

    /** A dispatch counted did not go out after all (the shared clock turned it back). */
    undoDispatch(): void {
        if (this.dispatched > this.dispatchedAtRefusal) this.dispatched -= 1;
    }

    /** A refusal reached the pacer: its run (dispatches since the one before, itself included) is kept. */
    onRefusal(): void {
        const run = Math.max(1, this.dispatched - this.dispatchedAtRefusal);
        this.dispatchedAtRefusal = this.dispatched;
        this.runs = [...this.runs.slice(1 - RECENT_RUNS), run];
    }

    /**
     * The pacer cuts the pace from `bounds` on the refusal just noted: tried, unless refusals are rare
     * or this was no refusal (an announced empty quota). `seen`: the pace cut to, the rate the site
     * delivered since an earlier refusal, and the wait this refusal imposed.
     */
    onCut(bounds: PaceBounds, refused: boolean, seen?: { pace: number; delivered: number; waitMs: number }): void {
        const share = 1 / this.runs[this.runs.length - 1];
        const bucketExpects = seen ? refillShare(seen.delivered, seen.waitMs, seen.pace) : 0;
        this.trial =
            refused && share >= MIN_TRIAL_SHARE
                ? { bounds, share, dispatched: this.dispatched, refusals: 0, bucketExpects }
                : undefined;
    }

    /**
     * Judges the open cut at a refusal noted at pace `rate`. The refused share fell towards what a bucket
     * would refuse at that pace, or rose (a one-token bucket refuses every other request at any pace above
     * its rate): it followed the pace. Kept instead: the first such refusal is held (no cut, no lesson),
     * the second undoes the cut.
     */
    judge(rate: number): CutVerdict {
        const trial = this.trial;
        if (!trial) return { kind: 'none' };
        trial.refusals += 1;
        const share = trial.refusals / Math.max(1, this.dispatched - trial.dispatched);
        // Two readings of the bucket the refusals would come from: one from the run before the cut
        // (assuming each wait refilled a token), one from the rate delivered over time (each wait
        // refilled rate × wait). A share a bucket explains is no evidence of background refusals.
        const expected = Math.max(bucketShare(trial.bounds.rate, trial.share, rate), trial.bucketExpects);
        // A shallow cut (above the accepted share of the refused pace) changes a bucket's share too
        // little to tell from noise: the cut stands.
        const followed =
            rate > trial.bounds.rate * (1 - trial.share) ||
            trial.share >= MAX_BACKGROUND_SHARE ||
            expected > trial.share / 2 ||
            share < Math.max((trial.share + expected) / 2, trial.share * BACKGROUND_HELD) ||
            share > trial.share * BACKGROUND_MARGIN;
        if (followed) {
            this.trial = undefined;
            return { kind: 'followed' };
        }
        if (trial.refusals < TRIAL_REFUSALS) return { kind: 'held' };
        this.trial = undefined;
        this.share = Math.max(this.share, Math.min(trial.share, share));
        return { kind: 'undo', bounds: trial.bounds };
    }

    /** Whether the refused share of late is within the background share: no cause to cut. */
    isBackground(): boolean {
        const recent = this.runs.length / this.runs.reduce((sum, run) => sum + run, 0);
        return this.share > 0 && recent < MAX_BACKGROUND_SHARE && recent <= this.share * BACKGROUND_MARGIN;
    }
}
