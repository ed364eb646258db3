import { MIN_WINDOW_ANSWERS } from './pace-learner-constants';

/**
 * One measuring window of a pace learner: when it started, what went out in it and what held the
 * scope back. The learner judges a window once it is long enough and holds enough answers for a
 * median, then starts the next one (docs/rampup.md, "What it measures").
 */
export class MeasuringWindow {
    /** When it started; -1 before the first dispatch. */
    start = -1;
    /** Requests sent in it (other processes' included). */
    dispatches = 0;
    /** Accepted answers that came in it (other processes' included). */
    answers = 0;
    /** A refused retry began it (a lockout, the pace unchanged): it proves nothing. */
    refused = false;
    /** The scope had work and a clock allowing it, but every slot was busy. */
    slotBound = false;
    // Time the backoff held the scope for refusals that do not follow the pace: the pace could not send then.
    private heldMs = 0;

    /** A new window from `now` (a refusal's window starts when its wait ends). */
    begin(now: number): void {
        this.start = now;
        this.dispatches = 0;
        this.answers = 0;
        this.refused = false;
        this.slotBound = false;
        this.heldMs = 0;
    }

    /**
     * Requests sent and accepted answers at `now`, counted only once it has started: a window may start
     * when a refusal's wait ends, and answers during the wait are to requests sent before it.
     */
    count(now: number, dispatches: number, answers: number): void {
        if (this.start < 0 || now < this.start) return;
        this.dispatches += dispatches;
        this.answers += answers;
    }

    /** A dispatch counted in it did not go out after all. */
    undoDispatch(): void {
        if (this.dispatches > 0) this.dispatches -= 1;
    }

    /** The backoff held the scope `waitMs` for a refusal that does not follow the pace. */
    hold(waitMs: number): void {
        this.heldMs += waitMs;
    }

    /**
     * Whether it can be judged at `now`: at least `lengthMs` long, with `answers` enough for a median.
     * With fewer (answers slower than the window) it may close on as many requests sent, for the pace,
     * but not when the slots held it back: slots grow only on a median, and answers a limiter holds for
     * seconds (nginx without `nodelay`) come after the window and are the queue that median must see.
     */
    canJudge(now: number, lengthMs: number, answers: number): boolean {
        if (now - this.start < lengthMs) return false;
        return answers >= MIN_WINDOW_ANSWERS || (this.dispatches >= MIN_WINDOW_ANSWERS && !this.slotBound);
    }

    /** Its length at `now`, ms. */
    lengthAt(now: number): number {
        return now - this.start;
    }

    /** Whether the pace, not the slots or a wait, held it back: it sent about what `rate` allowed over its time. */
    heldByPace(now: number, rate: number, gain: number): boolean {
        const span = Math.max(0, now - this.start - this.heldMs);
        return this.dispatches + 1 >= ((span * rate) / 1000) * gain;
    }
}
