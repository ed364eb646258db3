/**
 * What a scope's accepted requests proved of its rate since the last refusal. n requests accepted over
 * a span T took n tokens from a bucket that held at most its burst B at the span's start, so the site
 * refills at least (n − B) ÷ T (docs/rampup.md, "What it measures"). A cut never goes below it.
 *
 * Two spans are read: a window's own requests, first send to last (tight for one process: a burst-1
 * bucket at 5 req/s paced at 4.85 proves 4.85), and the last windows together, every process's answers
 * over their whole length (what processes sharing a pace prove together: each window alone is short
 * and holds few answers, and the others' answers reach this process a window late).
 */

/**
 * The least rate `accepted` requests over `spanMs` prove of a bucket that held at most `burst` tokens
 * at the span's start: (n − B) ÷ T, requests per second (0 when that proves nothing).
 */
export function provenRate(accepted: number, burst: number, spanMs: number): number {
    return accepted > burst && spanMs > 0 ? ((accepted - burst) * 1000) / spanMs : 0;
}

/** A window without a refusal: accepted answers in it (other processes' included) and its length. */
interface ClosedWindow {
    answers: number;
    lengthMs: number;
}

/** Windows kept since the last refusal: enough to span several seconds at any window length. */
const KEPT_WINDOWS = 16;

export class RateProof {
    // The windows closed since the last refusal, oldest first, at most KEPT_WINDOWS.
    private windows: ClosedWindow[] = [];
    // The most any span proved since the last refusal (0: nothing).
    private best = 0;

    /** The least rate proven since the last refusal, requests per second (0: none). */
    get rate(): number {
        return this.best;
    }

    /**
     * A window closed without a refusal: `answers` accepted in `lengthMs`, its own requests proving
     * `ownRate`; `burst`: the most tokens the bucket can have held at a span's start. Spans shorter
     * than `minSpanMs` prove nothing: the other processes' answers reach a window a tally late, and a
     * window another process's move cut short may hold a tally's worth of them in a few milliseconds.
     */
    addWindow(answers: number, lengthMs: number, ownRate: number, burst: number, minSpanMs: number): void {
        if (this.windows.length === KEPT_WINDOWS) this.windows.shift();
        this.windows.push({ answers, lengthMs });
        let best = Math.max(this.best, ownRate);
        let sum = 0;
        let ms = 0;
        for (let i = this.windows.length - 1; i >= 0; i--) {
            sum += this.windows[i].answers;
            ms += this.windows[i].lengthMs;
            if (ms >= minSpanMs) best = Math.max(best, provenRate(sum, burst, ms));
        }
        this.best = best;
    }

    /** The bucket ran empty (a refusal): what was proven before is spent, and spans start again. */
    reset(): void {
        this.windows = [];
        this.best = 0;
    }
}
