/**
 * The least time between two dispatches to any throttled domain: the configured
 * `minCrawlDelaySecs`, raised by `minIntervalEverywhere` signals (a folded `sameDomainDelaySecs`).
 * Only the raised part is saved, so a smaller `minCrawlDelaySecs` on resume takes effect.
 */
export class PacingFloor {
    // What signals raised the floor to; never lowered while the manager lives.
    private raised = 0;

    constructor(private readonly configuredMs: number) {}

    get ms(): number {
        return Math.max(this.configuredMs, this.raised);
    }

    /** The part signals added over the configured floor (what persistence keeps). */
    get raisedMs(): number {
        return this.raised;
    }

    raise(ms: number): void {
        if (Number.isFinite(ms) && ms > this.raised) this.raised = ms;
    }
}
