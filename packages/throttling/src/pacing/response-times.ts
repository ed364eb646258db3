import { MIN_WINDOW_ANSWERS } from './pace-learner-constants';
import { provenRate } from './rate-proof';

/**
 * Response times of one scope's accepted answers: the windowed minimum (the site's unloaded response
 * time, as TCP BBR and Vegas take the least round trip as the one without a queue), the median of
 * the current measuring window (robust to a single slow or fast answer) and the spacing of its answers.
 *
 * The minimum is kept over two periods: the current one and the one before, so an expired minimum is
 * re-taken from recent answers rather than forgotten at once (a site that got slower for good is
 * measured anew within two periods, and one lucky answer does not hold the baseline forever).
 */
export class ResponseTimes {
    // Start of the current period of the minimum (-1 before the first answer).
    private periodStart = -1;
    // Least response time in the current period, and in the period before it.
    private currentMin = Number.POSITIVE_INFINITY;
    private previousMin = Number.POSITIVE_INFINITY;
    // Response times of the answers counted in the current measuring window.
    private inWindow: number[] = [];
    // When the first and the last of them came.
    private windowFirstAt = -1;
    private windowLastAt = -1;
    // When the first and the last of their requests were sent.
    private windowFirstSent = Number.POSITIVE_INFINITY;
    private windowLastSent = Number.NEGATIVE_INFINITY;
    // The typical answer of the site without a queue (NaN: none yet), and the last few answers of the
    // windows that showed none (a short window is read with them): a median's worth, no more.
    private quietMedian = Number.NaN;
    private quietTail: number[] = [];

    constructor(private readonly periodMs: number) {}

    /** An accepted answer that took `ms`, at `now`; `inWindow`: it counts for the current window. */
    add(now: number, ms: number, inWindow: boolean): void {
        if (this.periodStart < 0) this.periodStart = now;
        if (now - this.periodStart >= this.periodMs) {
            this.previousMin = this.currentMin;
            this.currentMin = Number.POSITIVE_INFINITY;
            this.periodStart = now;
        }
        this.currentMin = Math.min(this.currentMin, ms);
        if (!inWindow) return;
        this.inWindow.push(ms);
        if (this.windowFirstAt < 0) this.windowFirstAt = now;
        this.windowLastAt = now;
        this.windowFirstSent = Math.min(this.windowFirstSent, now - ms);
        this.windowLastSent = Math.max(this.windowLastSent, now - ms);
    }

    /**
     * The least rate the window's accepted requests prove of a bucket of at most `burst` tokens, over
     * the span from the first of them sent to the last (rate-proof.ts).
     */
    windowProvenRate(burst: number): number {
        return provenRate(this.inWindow.length, burst, this.windowLastSent - this.windowFirstSent);
    }

    /**
     * Answers a second between the window's first answer and its last (NaN with fewer than two, or
     * all at once): behind a limiter that delays requests, the spacing it lets them out at.
     */
    windowSpacingRate(): number {
        const span = this.windowLastAt - this.windowFirstAt;
        return this.inWindow.length >= 2 && span > 0 ? ((this.inWindow.length - 1) * 1000) / span : Number.NaN;
    }

    /**
     * A typical answer of the site without a queue: the median of the last window that showed none,
     * read with the ones before while it has fewer answers than a median needs, or else the least
     * (Infinity before any answer).
     */
    get typicalMs(): number {
        return Number.isNaN(this.quietMedian) ? this.minMs : this.quietMedian;
    }

    /** The current window showed no queue: its answers are the typical ones now. */
    keepTypical(): void {
        if (this.inWindow.length === 0) return;
        this.quietTail = [...this.quietTail, ...this.inWindow.slice(-MIN_WINDOW_ANSWERS)].slice(-MIN_WINDOW_ANSWERS);
        if (this.inWindow.length >= MIN_WINDOW_ANSWERS) this.quietMedian = median(this.inWindow);
        else if (this.quietTail.length >= MIN_WINDOW_ANSWERS) this.quietMedian = median(this.quietTail);
    }

    /** The least response time of the last one to two periods (Infinity before any answer). */
    get minMs(): number {
        return Math.min(this.currentMin, this.previousMin);
    }

    /** Answers counted in the current window. */
    get windowCount(): number {
        return this.inWindow.length;
    }

    /** The median response time of the current window (NaN when it has none). */
    windowMedian(): number {
        return median(this.inWindow);
    }

    /** A new window starts: its answers are counted from now on. */
    newWindow(): void {
        if (this.inWindow.length > 0) this.inWindow = [];
        this.windowFirstAt = -1;
        this.windowLastAt = -1;
        this.windowFirstSent = Number.POSITIVE_INFINITY;
        this.windowLastSent = Number.NEGATIVE_INFINITY;
    }
}

/** The median of `values` (NaN when there are none). */
function median(values: readonly number[]): number {
    if (values.length === 0) return Number.NaN;
    const sorted = [...values].sort((a, b) => a - b);
    const mid = sorted.length >> 1;
    return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
