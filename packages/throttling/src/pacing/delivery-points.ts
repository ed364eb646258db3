/**
 * Points where a scope's bucket was known empty (a refusal, an announced empty quota), and the
 * delivery rate measured from them: the answers accepted since such a point, per second since it,
 * cannot exceed the site's rate by more than one token over the span, whatever burst it allows (the
 * delivery rate of TCP BBR, measured from a point where the bucket was known empty). The sample is
 * exact while the crawler asks faster than the site refills, and low when the site sat idle.
 */
export interface EmptyPoint {
    at: number;
    /** Accepted answers counted before this point (answers to requests sent before it included). */
    answered: number;
    /** The slowest pace asked for since (Infinity: unpaced throughout). */
    minPace: number;
    /** The wait the site imposed there, ms: a bucket may have filled and wasted refill during it. */
    waitMs: number;
}

/**
 * A delivery rate counted from an empty-bucket point (`rate`, leaving out the part of each wait a full
 * bucket wasted) and from the end of the wait imposed there (`upper`, over by at most the burst the wait
 * refilled), and whether the crawl asked faster than that all along with the wait mattering little:
 * then it is the site's rate.
 */
export interface DeliverySample {
    rate: number;
    upper: number;
    /** The same point's answers over its whole span, waits included: what the site surely sustained. */
    lower: number;
    exact: boolean;
}

/** What a scope never refused holds: one empty list for all, never written to. */
const NO_POINTS: readonly EmptyPoint[] = Object.freeze([]);

export class DeliveryPoints {
    // Newest last, none older than the horizon. Shared empty list until the first point.
    private points: readonly EmptyPoint[] = NO_POINTS;

    constructor(private readonly horizonMs: number) {}

    /** When the newest point was, and the answers counted before it (undefined: none yet). */
    last(): EmptyPoint | undefined {
        return this.points[this.points.length - 1];
    }

    /** The bucket is empty at `now`, after `answered` accepted answers, paced at `pace`. */
    add(now: number, answered: number, pace: number, waitMs: number): void {
        const kept = this.points.filter((p) => now - p.at <= this.horizonMs);
        this.points = [...kept, { at: now, answered, minPace: pace, waitMs }];
    }

    /** The pace asked for from now on, for each point's slowest pace since. */
    notePace(pace: number): void {
        for (const p of this.points) p.minPace = Math.min(p.minPace, pace);
    }

    /**
     * An answer (already counted) to a request sent at `sentAt`: points made after it was sent count it
     * among the answers before them, since it took its token before the bucket ran empty.
     */
    answeredBefore(sentAt: number): void {
        for (const p of this.points) if (p.at > sentAt) p.answered += 1;
    }

    /**
     * The best delivery rate (requests per second) over spans of at least `minSpanMs` up to `now`. A
     * bucket of at most `burst` tokens wastes the refill of a wait beyond what fills it, so that much of
     * each point's wait is left out (at the rate counted without the wait). It is exact when the pace
     * asked for since its point stayed clearly above it (beyond `agree`: answers about as fast as the
     * pace asked are the pace's, not the site's) and the wait changes the reading by less than `agree`.
     */
    sample(now: number, answered: number, minSpanMs: number, agree: number, burst: number): DeliverySample | undefined {
        let best: DeliverySample | undefined;
        for (const p of this.points) {
            const span = now - p.at;
            if (span < minSpanMs || span > this.horizonMs) continue;
            const since = Math.max(0, answered - p.answered);
            const upper = (since * 1000) / Math.max(span - p.waitMs, minSpanMs);
            const fillMs = upper > 0 ? (burst * 1000) / upper : Number.POSITIVE_INFINITY;
            const rate = (since * 1000) / Math.max(span - Math.max(0, p.waitMs - fillMs), minSpanMs);
            const exact = p.minPace * agree >= upper && (since * 1000) / span >= upper * agree;
            const lower = (since * 1000) / span;
            if (best === undefined || rate > best.rate) best = { rate, upper: Math.max(rate, upper), lower, exact };
        }
        return best;
    }
}
