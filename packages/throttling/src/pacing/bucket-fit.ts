/**
 * The rate and burst of a token bucket fitted together to a scope's requests since a refusal, or since
 * the crawl's start, when the site's bucket was full (docs/rampup.md, "Rate and burst together").
 * The delivery since the bucket was last empty is a lower bound of the rate: a full bucket wastes its
 * refill while the pace sits under the rate. One run-up to a refusal fits a slower bucket with a
 * larger burst as well as a faster one with a smaller burst; two or more, with the pace changing
 * between them, leave few buckets that fit them all.
 *
 * A bucket of burst b refilling r tokens a second holds under one token when it refuses a request and
 * at least one when it accepts one. Its level only grows with r and with b, so for each b the
 * acceptances set the least r that lets them all through, and the refusals hold when that r refuses
 * them. The largest b for which both hold has the lowest such r of all that fit: a pace under it is
 * under the site's rate, whichever of them the site is. Nothing fits a limiter that is no bucket (a
 * share refused whatever the pace, a rate that changed): then the fit says nothing.
 *
 * Requests are placed by when they were sent (one process sends them all); one whose answer has not
 * come is counted as taking a token where that makes a refusal likelier and as taking none where that
 * makes an acceptance likelier, so the fit stays a bound whatever its answer. Times are epoch ms.
 */

/** What became of a request sent. */
const enum Outcome {
    Pending,
    Accepted,
    Refused,
}

/** The bucket with the largest burst that fits every answer logged. */
export interface FittedBucket {
    /** The least rate at which it fits, requests per second: the lowest of any bucket that fits. */
    rate: number;
    /** Its burst. */
    burst: number;
}

/**
 * How far a request's arrival may be from its sending, ms, tried in turn until some bucket fits: none
 * on a quiet machine, then a few ms of the crawler's own timing (the event loop between the handout and
 * the request leaving, a loaded machine). An acceptance may have had that much longer to refill since
 * the request before, a refusal that much less; the least that fits leaves the fewest buckets. More
 * would fit anything at a fast site's spacing (50 ms between requests at 20 req/s).
 */
const JITTERS_MS = [0, 10];
/** The log's length at most: a long window of a fast site, enough for several refusals. */
const MAX_REQUESTS = 2_000;
/** Steps of the searches for a fit's least or fastest rate (2⁻³⁰ of their range). */
const SEARCH_STEPS = 30;

/**
 * Where `below` stops holding between 0 (where it holds) and `top` (where it does not): the bracket
 * `low`–`high` around it, narrowed to 2⁻³⁰ of the range. A bucket's level only grows with its rate,
 * so each test of a fit changes once along it.
 */
function edge(below: (rate: number) => boolean, top: number): { low: number; high: number } {
    let low = 0;
    let high = top;
    for (let step = 0; step < SEARCH_STEPS; step++) {
        const mid = (low + high) / 2;
        if (below(mid)) low = mid;
        else high = mid;
    }
    return { low, high };
}

export class BucketFit {
    // When each request was sent, oldest first (pushed as sent, so in order).
    private sentAt: number[] = [];
    // What became of each: pending until its answer comes.
    private outcome: Outcome[] = [];
    // Other processes send to the same site unseen here: no fit from this process's requests alone.
    private shared = false;
    // The log still holds the crawl's first request, when the site's bucket was full.
    private fromStart = true;

    constructor(private readonly horizonMs: number) {}

    /** A request went out at `now`. */
    sent(now: number): void {
        if (this.shared) return;
        this.sentAt.push(now);
        this.outcome.push(Outcome.Pending);
        this.trim(now);
    }

    /** The last request counted did not go out after all. */
    unsent(): void {
        const i = this.outcome.lastIndexOf(Outcome.Pending);
        if (i < 0) return;
        this.sentAt.splice(i, 1);
        this.outcome.splice(i, 1);
    }

    /** The request sent at `sentAt` was accepted or refused. */
    answered(sentAt: number, refused: boolean): void {
        for (let i = this.sentAt.length - 1; i >= 0; i--) {
            if (this.sentAt[i] !== sentAt || this.outcome[i] !== Outcome.Pending) continue;
            this.outcome[i] = refused ? Outcome.Refused : Outcome.Accepted;
            return;
        }
    }

    /** Other processes send to the site too: their requests are not seen here, so nothing is fitted. */
    share(): void {
        this.shared = true;
        this.sentAt = [];
        this.outcome = [];
    }

    /**
     * The bucket with the largest burst up to `maxBurst` that fits the answers logged (from the
     * crawl's start while the log holds it, else from its first refusal) up to the last refusal, when
     * two refusals or more are logged; undefined when none fits.
     */
    fit(maxBurst: number): FittedBucket | undefined {
        if (!Number.isFinite(maxBurst)) return undefined;
        for (const jitterMs of JITTERS_MS) {
            const span = this.span(jitterMs);
            if (span === undefined) return undefined;
            const fitted = this.fitWithin(span, maxBurst);
            if (fitted) return fitted;
        }
        return undefined;
    }

    /**
     * A rate the site is under, read from the crawl's start up to its first refusal (req/s), or undefined
     * without such a run in the log. A bucket that refuses a request has been sent more than it refilled
     * since it was last full: at least one token more than its rate over that time. When that was is not
     * known, so the fastest any run of requests ending at the refused one was sent at bounds it (a window
     * or a sliding count that refused more than its quota is under it too). Where two requests left
     * together before the refusal, it says nothing.
     */
    startRate(): number | undefined {
        const refusal = this.outcome.indexOf(Outcome.Refused);
        if (!this.fromStart || refusal < 1) return undefined;
        let fastest = 0;
        for (let i = 0; i < refusal; i++) {
            const spanMs = this.sentAt[refusal] - this.sentAt[i];
            if (spanMs <= 0) return undefined;
            fastest = Math.max(fastest, ((refusal - i) * 1000) / spanMs);
        }
        return fastest;
    }

    /**
     * A rate the site is under (req/s): the fastest at which any bucket of burst up to `maxBurst` fits
     * the answers logged up to the last refusal (from the crawl's start while the log holds it, else
     * from the first refusal, the bucket read as empty there), each refusal read as arriving early.
     * Undefined with fewer than two refusals logged, or when no bucket fits (a limiter that is no bucket).
     * Like {@link fit}, it needs a finite `maxBurst` (no burst seen yet: nothing to stop the search at).
     */
    fastestRate(maxBurst: number): number | undefined {
        const span = Number.isFinite(maxBurst) ? this.span(JITTERS_MS[JITTERS_MS.length - 1]) : undefined;
        if (span === undefined) return undefined;
        const top = span.topRate();
        // A smaller burst holds less, so the refusals allow it a faster refill: the least that fits wins.
        for (let burst = 1; burst <= Math.max(1, Math.ceil(maxBurst)); burst++) {
            const rate = span.mostRate(burst, top);
            if (rate !== undefined && span.acceptancesFit(burst, rate)) return rate;
        }
        return undefined;
    }

    /**
     * The answers logged up to the last refusal, read with `jitterMs`: from the crawl's start while the
     * log holds it (the bucket full there), else from the first refusal. Undefined with fewer than two
     * refusals logged.
     */
    private span(jitterMs: number): FitSpan | undefined {
        const refusal = this.outcome.indexOf(Outcome.Refused);
        const last = this.outcome.lastIndexOf(Outcome.Refused);
        if (refusal < 0 || last === refusal) return undefined;
        const first = this.fromStart ? 0 : refusal;
        return new FitSpan(this.sentAt, this.outcome, first, last, jitterMs, this.fromStart);
    }

    /** The bucket with the largest burst up to `maxBurst` that fits `span`. */
    private fitWithin(span: FitSpan, maxBurst: number): FittedBucket | undefined {
        const top = span.topRate();
        for (let burst = Math.max(1, Math.ceil(maxBurst)); burst >= 1; burst--) {
            const rate = span.leastRate(burst, top);
            if (rate !== undefined && span.refusalsFit(burst, rate)) return { rate, burst };
        }
        return undefined;
    }

    /** Drops requests older than the horizon or beyond the length, from the front to a refusal. */
    private trim(now: number): void {
        const stale = (i: number) => now - this.sentAt[i] > this.horizonMs || this.sentAt.length - i > MAX_REQUESTS;
        if (!stale(0)) return;
        let cut = 1;
        while (cut < this.sentAt.length && (stale(cut) || this.outcome[cut] !== Outcome.Refused)) cut++;
        this.sentAt = this.sentAt.slice(cut);
        this.outcome = this.outcome.slice(cut);
        this.fromStart = false;
    }
}

/**
 * The requests from one refusal (or the crawl's first request, `full`: the site's bucket was full
 * then) to a later refusal, and the jitter their times are read with.
 */
class FitSpan {
    constructor(
        private readonly sentAt: readonly number[],
        private readonly outcome: readonly Outcome[],
        private readonly first: number,
        private readonly last: number,
        private readonly jitterMs: number,
        private readonly full: boolean,
    ) {}

    /** The requests the walk takes in turn: from the first, when the bucket was full there, else after it. */
    private get from(): number {
        return this.full ? this.first : this.first + 1;
    }

    /** The time since the request before `i` (none before the span's first). */
    private gap(i: number): number {
        return i === this.first ? 0 : this.sentAt[i] - this.sentAt[i - 1];
    }

    /** A rate above any that can be least: every request of the span one token apart at it. */
    topRate(): number {
        let least = Number.POSITIVE_INFINITY;
        for (let i = this.first + 1; i <= this.last; i++) least = Math.min(least, this.sentAt[i] - this.sentAt[i - 1]);
        return 2000 / Math.max(least, 0.001);
    }

    /** The least rate at which a bucket of `burst` lets every accepted request through (undefined: none up to `top`). */
    leastRate(burst: number, top: number): number | undefined {
        if (!this.acceptancesFit(burst, top)) return undefined;
        // Just under the least: a bound from below, whatever the rounding.
        return edge((rate) => !this.acceptancesFit(burst, rate), top).low;
    }

    /** The fastest rate at which a bucket of `burst` refuses every refused request (undefined: none; `top` if all up to it). */
    mostRate(burst: number, top: number): number | undefined {
        if (!this.refusalsFit(burst, 0)) return undefined;
        if (this.refusalsFit(burst, top)) return top;
        // Just over the most: a bound from above, whatever the rounding.
        return edge((rate) => this.refusalsFit(burst, rate), top).high;
    }

    /**
     * Whether every acceptance finds a token, the level read high: one token at the first refusal (the
     * burst at the crawl's start), a pending request taking none, each acceptance arriving up to
     * `jitterMs` late.
     */
    acceptancesFit(burst: number, rate: number): boolean {
        let level = this.full ? burst : 1;
        for (let i = this.from; i <= this.last; i++) {
            const gap = this.gap(i);
            if (this.outcome[i] === Outcome.Accepted) {
                if (Math.min(burst, level + ((gap + this.jitterMs) * rate) / 1000) < 1) return false;
                level = Math.max(0, Math.min(burst, level + (gap * rate) / 1000) - 1);
            } else level = Math.min(burst, level + (gap * rate) / 1000);
        }
        return true;
    }

    /**
     * Whether every refusal finds under a token, the level read low: empty at the first refusal (full
     * at the crawl's start), a pending request taking one, each refusal arriving up to `jitterMs` early.
     */
    refusalsFit(burst: number, rate: number): boolean {
        // A full bucket at the start, less a token a request the crawl did not count may have taken
        // (a robots.txt the site's limiter counts).
        let level = this.full ? Math.max(0, burst - 1) : 0;
        for (let i = this.from; i <= this.last; i++) {
            const gap = this.gap(i);
            if (this.outcome[i] === Outcome.Refused) {
                if (Math.min(burst, level + (Math.max(0, gap - this.jitterMs) * rate) / 1000) >= 1) return false;
                level = Math.min(burst, level + (gap * rate) / 1000);
            } else level = Math.max(0, Math.min(burst, level + (gap * rate) / 1000) - 1);
        }
        return true;
    }
}
