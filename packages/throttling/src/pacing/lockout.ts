import type { EmptyPoint } from './delivery-points';

/** What a lockout read: requests per second, and ms. */
export interface LockoutReading {
    /** The run over the time from its start to the probe that got through: at most a remembering limiter's rate. */
    rate: number;
    /** The run over the time to the last refused retry, when the limiter still remembered it. */
    upper: number;
    /** The time from the run's start to the probe that got through: how long the limiter remembers, at least. */
    spanMs: number;
}

/**
 * A lockout: a refusal after a run of accepted requests, then retries refused with no answer between.
 *
 * A token bucket that refuses a retry `g` ms after the refusal before it refills under 1000 / g per
 * second. Once a retry is refused `minGapMs` (2 s) after the one before, a bucket refills under
 * 0.5 req/s, so the run it granted before (two requests or more), over the time from the run's start
 * until a probe got through, reads at least its rate: the backoff at most doubles the time it needed.
 * A limiter that remembers (haproxy's sliding `http_req_rate`, which counts the refused retries too;
 * a window) grants that run once per memory, and lets a probe through only once the run has aged out
 * of it: the same reading is then at most its rate. Paced at the run's own rate after the lockout,
 * such a limiter refuses the next run too, and locks out again.
 *
 * Each retry such a limiter refuses counts there too, and holds the lockout longer. So once a retry is
 * refused a long gap after the one before, the next retry the backoff's doubling would send (at twice
 * that gap, still within the memory of a limiter that refused this one) is skipped: the backoff waits
 * it out and retries one step later. A bucket slow enough to refuse that retry loses one step's wait.
 */
export class Lockout {
    // The point the lockout's first refusal made: answers to requests sent before it accrue there.
    private point?: EmptyPoint;
    // Where the run before it started (the previous empty point, or the first dispatch), and the answers counted there.
    private runFrom = 0;
    private answeredAtRunStart = 0;
    // Retries refused since the first refusal (the limiter counts them too), and when the last refusal came.
    private retries = 0;
    private lastRefusalAt = 0;
    // A retry was refused at least the gap that rules out a bucket of 0.5 req/s or more.
    private longGap = false;
    // The backoff skipped the retry after such a gap (it named no wait of its own: PaceLearner.skipsRetry).
    private skipped = false;

    /** A refusal after answers: the `point` it made, and the run from `runFrom`, with `answeredAtRunStart` before it. */
    begin(point: EmptyPoint | undefined, runFrom: number, answeredAtRunStart: number): void {
        this.point = point;
        this.runFrom = runFrom;
        this.answeredAtRunStart = answeredAtRunStart;
        this.retries = 0;
        this.lastRefusalAt = point?.at ?? 0;
        this.longGap = false;
        this.skipped = false;
    }

    /**
     * A refusal at `now` would come `minGapMs` or more after the refusal before it, within a lockout:
     * as a retry, it rules out a fast bucket.
     */
    longGapAt(now: number, minGapMs: number): boolean {
        return this.point !== undefined && now - this.lastRefusalAt >= minGapMs;
    }

    /**
     * A retry refused at `now` with no answer since the last refusal; `minGapMs` after it rules out a
     * fast bucket. `ownWait`: the backoff's wait follows it, not the site's, so after such a gap it
     * skips the next retry.
     */
    retried(now: number, minGapMs: number, ownWait = true): void {
        if (!this.point) return;
        this.retries += 1;
        if (this.longGapAt(now, minGapMs)) {
            this.longGap = true;
            if (ownWait) this.skipped = true;
        }
        this.lastRefusalAt = now;
    }

    /**
     * An accepted answer to a request sent at `sentAt` ends the lockout: what it read, when a retry
     * was refused a long gap after the refusal before it and the run held two answers or more. Nothing
     * when the `backlog` left fits in the next run, less the refused retries the limiter still counts:
     * the site grants that run again, at any pace.
     */
    end(sentAt: number, backlog: number): LockoutReading | undefined {
        const { point, retries } = this;
        if (!point || sentAt < point.at) return undefined;
        this.point = undefined;
        const run = point.answered - this.answeredAtRunStart;
        const spanMs = sentAt - this.runFrom;
        if (!this.longGap || run < 2 || !(spanMs > 0) || backlog + retries < run) return undefined;
        const lockedMs = Math.max(1, this.lastRefusalAt - this.runFrom);
        const rate = (run * 1000) / spanMs;
        const upper = (run * 1000) / lockedMs;
        // A retry skipped after the long gap is read as refused, as a limiter that remembers would have
        // refused it: the two readings stay at most twice apart, as the backoff's doubling leaves them.
        return { rate, upper: this.skipped ? Math.min(upper, 2 * rate) : upper, spanMs };
    }
}
