/**
 * What a pace learner counts of its scope's traffic: requests sent and accepted answers, its own and
 * (beside a shared clock) every other process's, and the requests still waiting here. Windows and
 * delivery samples read them as the site's traffic, not this process's share of it. Its own requests
 * are also logged one by one while no other process sends: the bucket fitted to them bounds a cut.
 * Times are epoch ms.
 */
import { BucketFit } from './bucket-fit';
import type { FittedBucket } from './bucket-fit';
import { PERIOD_MS } from './pace-learner-constants';

export class LearnerCounts {
    /** Dispatches in all, other processes' included. */
    dispatched = 0;
    /** Accepted answers in all, other processes' included. */
    answered = 0;
    /** When the first accepted answer came (-1: none yet). */
    firstAnswerAt = -1;
    // Dispatches at the last refusal: the run since it is what a cut then answers.
    private dispatchedAtRefusal = 0;
    // Dispatches of this process alone: its share of all (other processes sharing the pace send the rest).
    private ownDispatched = 0;
    // Requests of the scope waiting here at the last dispatch.
    private backlog = Number.POSITIVE_INFINITY;
    // When the other processes' counts last came (-1: alone), and the answers counted then: theirs since
    // are not known yet, so a delivery sample ends there rather than now (it would read their share low).
    private othersSeen = { at: -1, answered: 0 };
    // This process's requests since a refusal, each accepted or refused, over a period.
    private readonly requests = new BucketFit(PERIOD_MS);

    /**
     * Requests of the scope waiting at the site's pace: those waiting here over this process's share of
     * the dispatches (processes sharing the pace each hold a share of the crawl).
     */
    get siteBacklog(): number {
        return this.ownDispatched > 0 ? (this.backlog * this.dispatched) / this.ownDispatched : this.backlog;
    }

    /** A request of this process went out at `now`, with `backlog` of the scope still waiting here. */
    dispatch(now: number, backlog: number): void {
        this.requests.sent(now);
        this.backlog = backlog;
        this.dispatched += 1;
        this.ownDispatched += 1;
    }

    /** A dispatch counted did not go out after all. */
    undoDispatch(): void {
        this.requests.unsent();
        if (this.dispatched > this.dispatchedAtRefusal) this.dispatched -= 1;
        if (this.ownDispatched > 0) this.ownDispatched -= 1;
    }

    /** An accepted answer here at `now`, to a request sent at `sentAt` (when known). */
    answer(now: number, sentAt?: number): void {
        if (sentAt !== undefined) this.requests.answered(sentAt, false);
        if (this.answered === 0) this.firstAnswerAt = now;
        this.answered += 1;
    }

    /** The other processes' dispatches and accepted answers since their last counts, known at `now`. */
    others(now: number, dispatches: number, answers: number): void {
        if (dispatches > 0) this.shared();
        if (answers > 0 && this.answered === 0) this.firstAnswerAt = now;
        this.answered += answers;
        this.dispatched += dispatches;
        this.othersSeen = { at: now, answered: this.answered };
    }

    /** The request sent at `sentAt` was refused. */
    refused(sentAt: number): void {
        this.requests.answered(sentAt, true);
    }

    /** Other processes send to the site too, unseen here: no bucket is fitted to this one's requests. */
    shared(): void {
        this.requests.share();
    }

    /** The bucket with the largest burst up to `maxBurst` that fits the requests logged (bucket-fit.ts). */
    fit(maxBurst: number): FittedBucket | undefined {
        return this.requests.fit(maxBurst);
    }

    /** How fast this process sent from the crawl's start to its first refusal (bucket-fit.ts), req/s. */
    startRate(): number | undefined {
        return this.requests.startRate();
    }

    /** A rate the site is under, read from the refusals logged: `BucketFit.fastestRate`. */
    fastestRate(maxBurst: number): number | undefined {
        return this.requests.fastestRate(maxBurst);
    }

    /** The requests sent since the last refusal (at least 1). */
    get sinceRefusal(): number {
        return Math.max(1, this.dispatched - this.dispatchedAtRefusal);
    }

    /** A refusal: the requests sent since the one before (at least 1). */
    refusal(): number {
        const run = this.sinceRefusal;
        this.dispatchedAtRefusal = this.dispatched;
        return run;
    }

    /** Where a delivery sample taken at `now` ends: now, or beside other processes when their counts last came. */
    sampleEnd(now: number): { at: number; answered: number } {
        return this.othersSeen.at >= 0 ? this.othersSeen : { at: now, answered: this.answered };
    }
}
