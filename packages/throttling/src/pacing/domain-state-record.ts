import type { DomainStateData } from './domain-state-types';
import { CLOCK_FIELDS, NUMERIC_FIELDS } from './domain-state-types';
import type { RatePacer } from './rate-pacer';

/**
 * The persisted fields of a domain's pacing state, all plain numbers in epoch milliseconds (so the
 * state is JSON and another process can restore it), with saving and restoring. The decisions on
 * them live in `DomainState`.
 */
export class DomainStateRecord implements DomainStateData {
    domain: string;
    crawlDelayMs = 0;
    nextDispatchAt = 0;
    backoffUntil = 0;
    backoffExponent = 0;
    lastBackoffMs = 0;
    decayAt = 0;
    refusingSince = 0;
    lastRefusalAt = 0;
    stallMs = 0;
    lastImposedMs = 0;
    penaltyMs = 0;
    lastTriggerAt = 0;
    announcedIntervalMs = 0;
    announcedUntil = 0;
    quotaWindowStart = 0;
    quotaSpent = 0;
    /** The rampup search; created on first use by a ramping scope. */
    rampupState?: RatePacer;
    dispatched = 0;
    refusals = 0;
    handled = 0;
    /** Network errors or timeouts in a row with no answer in between (the error budget). */
    consecutiveErrors = 0;
    /** Time spent backed off in all (the statistics). */
    backedOffMs = 0;
    /** Requests sent back for a free retry after a refusal (the statistics). */
    freeRetries = 0;

    constructor(domain: string) {
        this.domain = domain;
    }

    toJSON(): DomainStateData {
        const data = { domain: this.domain } as DomainStateData;
        for (const key of NUMERIC_FIELDS) data[key] = this[key];
        if (this.rampupState) data.rampup = this.rampupState.toJSON();
        return data;
    }

    /**
     * Takes over what a saved state says (clocks, counters, the rampup search), with every clock cut
     * to at most `maxAheadMs` after `now`: a record written by a faulty clock, or edited by hand, must
     * not put a domain to sleep for longer than a live backoff could.
     */
    adopt(saved: DomainStateRecord, now: number, maxAheadMs: number): void {
        for (const key of NUMERIC_FIELDS) this[key] = saved[key];
        this.rampupState = saved.rampupState;
        const latest = now + maxAheadMs;
        for (const key of CLOCK_FIELDS) this[key] = Math.min(this[key], latest);
        this.lastBackoffMs = Math.min(this.lastBackoffMs, maxAheadMs);
        this.lastImposedMs = Math.min(this.lastImposedMs, maxAheadMs);
        this.penaltyMs = Math.min(this.penaltyMs, maxAheadMs);
        this.announcedIntervalMs = Math.min(this.announcedIntervalMs, maxAheadMs);
    }
}
