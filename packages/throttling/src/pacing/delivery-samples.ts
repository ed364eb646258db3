/**
 * Delivery samples: a refusal means the site's bucket is empty at that moment, so the answers accepted
 * since, per second since, cannot exceed its rate by more than one token over the span (the delivery
 * rate of TCP BBR, measured from a point where the bucket was known empty). The sample is exact while
 * the crawler keeps asking faster than the site refills, and too low when the site sat full and idle.
 */

/** Accepted answers per second since a refusal, and the most the rate can be given them. */
export interface DeliverySample {
    rate: number;
    ceiling: number;
}

/** A point where the bucket was known empty. */
export interface RefusalReference {
    at: number;
    /** Accepted answers counted before this refusal. */
    answered: number;
    /** The wait it imposed, ms. */
    waitMs: number;
    /** The slowest pace asked for since (Infinity: unpaced throughout). */
    minPace: number;
    /** The part of its wait that was our own backoff's, not the site's: the crawler idled, the site did not refuse. */
    idleMs: number;
}

/** References older than this give no sample (the site may have changed). */
const SAMPLE_HORIZON_MS = 60_000;
/** A sample over less time than this is noise. */
const MIN_SAMPLE_SPAN_MS = 1_000;
/** What a scope never refused holds: one empty list for all, never written to. */
const NO_REFERENCES: RefusalReference[] = [];
/** References kept. */
const MAX_REFERENCES = 8;

export class DeliverySamples {
    // Newest last; bounded in count and age. Made at the first reference (most scopes are never refused).
    private references: RefusalReference[] = NO_REFERENCES;

    /** The newest reference, if any. */
    last(): RefusalReference | undefined {
        return this.references[this.references.length - 1];
    }

    /**
     * A point where the bucket is empty at `now`, after `answered` accepted answers, at `pace`; `idleMs`
     * of its wait `waitMs` was our own backoff's choice rather than the site's.
     */
    add(now: number, answered: number, waitMs: number, pace: number, idleMs = 0): void {
        if (this.references === NO_REFERENCES) this.references = [];
        this.references.push({ at: now, answered, waitMs, minPace: pace, idleMs });
        while (this.references.length > MAX_REFERENCES || now - this.references[0].at > SAMPLE_HORIZON_MS)
            this.references.shift();
    }

    /**
     * An answer (already counted) to a request sent at `sentAt`: references made after it was sent
     * count it among the answers before them, since it took its token before the bucket ran empty
     * (counting it since would raise the sample by the requests in flight at each refusal).
     */
    answeredBefore(sentAt: number): void {
        for (const ref of this.references) if (ref.at > sentAt) ref.answered += 1;
    }

    /** Notes the pace now asked for in every reference, for their ceilings. */
    notePace(pace: number): void {
        for (const ref of this.references) ref.minPace = Math.min(ref.minPace, pace);
    }

    /**
     * Accepted answers since a recent reference, per second (the longest span wins), given `answered`
     * so far: the site's rate while the crawler kept asking faster than it refills; lower when it idled.
     * `ceiling` is the most the rate can be given that sample: one token more over the span, or — if
     * the waits imposed in between were long enough for the bucket to fill — what the time outside
     * those waits allows.
     */
    sample(now: number, answered: number): DeliverySample | undefined {
        let best: DeliverySample | undefined;
        for (let i = 0; i < this.references.length; i++) {
            const ref = this.references[i];
            const span = now - ref.at;
            if (span < MIN_SAMPLE_SPAN_MS) break;
            const since = answered - ref.answered;
            const rate = (since * 1000) / Math.max(MIN_SAMPLE_SPAN_MS, span - this.idleSince(i, now));
            const ceiling = this.ceilingSince(i, span, since);
            best = { rate: Math.max(best?.rate ?? 0, rate), ceiling: Math.min(best?.ceiling ?? Infinity, ceiling) };
        }
        return best;
    }

    /**
     * Time since reference `i` the crawler spent in its own backoff beyond what the site asked: a
     * site refused twice in a row without `Retry-After` is left alone for seconds by the growing
     * backoff, and counting that time would read a 0.91 req/s site as 0.2.
     */
    private idleSince(i: number, now: number): number {
        let idle = 0;
        for (let j = i; j < this.references.length; j++) {
            const ref = this.references[j];
            idle += Math.min(ref.idleMs, Math.max(0, now - ref.at));
        }
        return idle;
    }

    /**
     * The most the rate can be, given `answered` answers in `span` ms since reference `i`: one token
     * more than was taken, unless the bucket could sit full through the waits in between (then the
     * time outside them). Only a crawl that asked faster than that all along bounds anything.
     */
    private ceilingSince(i: number, span: number, answered: number): number {
        const noIdle = ((answered + 1) * 1000) / span;
        const waits = this.references.slice(i);
        const longestWait = Math.max(...waits.map((r) => r.waitMs));
        const busy = span - waits.reduce((sum, r) => sum + r.waitMs, 0);
        // Each wait may have let a full bucket waste all but one token it refilled.
        const outside = answered + 1 - waits.length;
        // A bucket refilling less than one token per wait cannot have sat full: nothing was lost.
        const ceiling =
            noIdle * longestWait <= 1000
                ? noIdle
                : busy > 0 && outside > 0
                  ? Math.max(noIdle, (outside * 1000) / busy)
                  : Number.POSITIVE_INFINITY;
        return this.references[i].minPace >= ceiling ? ceiling : Number.POSITIVE_INFINITY;
    }
}
