/**
 * When the crawl's slowest scope should be done: each scope's estimate, noted at its dispatches, and
 * the latest of them. A scope whose pace is a guess spreads its last requests up to it
 * (pacing/crawl-slack.ts). Estimates are epoch ms; an estimate past is dropped, so a scope that
 * finished, or went idle, no longer holds the horizon out.
 */
export class CrawlHorizon {
    // Each scope's estimated finish, by key.
    private readonly finishes = new Map<string, number>();
    // The latest estimate when last computed, and when that was: recomputed at most once per `refreshMs`.
    private latest = 0;
    private computedAt = Number.NEGATIVE_INFINITY;

    /** `refreshMs`: how often the latest estimate is recomputed over every scope (an estimate that grows counts at once). */
    constructor(private readonly refreshMs = 1_000) {}

    /** The scope `key` should be done at `finishAt` (epoch ms); at or before now: it has nothing left. */
    note(key: string, finishAt: number, now: number): void {
        if (finishAt <= now) {
            this.finishes.delete(key);
            return;
        }
        this.finishes.set(key, finishAt);
        this.latest = Math.max(this.latest, finishAt);
    }

    /** The latest finish estimated at `now`, epoch ms; 0 when no scope has requests left. */
    at(now: number): number {
        if (now - this.computedAt >= this.refreshMs) this.recompute(now);
        return this.latest > now ? this.latest : 0;
    }

    private recompute(now: number): void {
        this.computedAt = now;
        this.latest = 0;
        for (const [key, finishAt] of this.finishes) {
            if (finishAt <= now) this.finishes.delete(key);
            else this.latest = Math.max(this.latest, finishAt);
        }
    }
}
