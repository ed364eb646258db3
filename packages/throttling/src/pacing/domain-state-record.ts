import type { DomainStateData } from './domain-state-types';
import { CLOCK_FIELDS, NUMERIC_FIELDS } from './domain-state-types';
import type { RatePacer } from './rate-pacer';
import { RareDomainFields } from './rare-domain-fields';

/**
 * The persisted fields of a domain's pacing state, all plain numbers in epoch milliseconds (so the
 * state is JSON and another process can restore it), with saving and restoring. The decisions on
 * them live in `DomainState`.
 */
export class DomainStateRecord implements DomainStateData {
    domain: string;
    crawlDelayMs = 0;
    nextDispatchAt = 0;
    /** The rampup search; created on first use by a ramping scope. */
    rampupState?: RatePacer;
    dispatched = 0;
    handled = 0;
    // The fields that stay 0 for most domains, made on the first write of anything else (see RareDomainFields).
    private rare?: RareDomainFields;

    constructor(domain: string) {
        this.domain = domain;
    }

    /** Backoff clock: no dispatch before this time. 0 when never backed off. */
    get backoffUntil(): number {
        return this.rare?.backoffUntil ?? 0;
    }
    set backoffUntil(value: number) {
        const rare = this.rareFor(value);
        if (rare) rare.backoffUntil = value;
    }

    /** Escalations since the last decay. */
    get backoffExponent(): number {
        return this.rare?.backoffExponent ?? 0;
    }
    set backoffExponent(value: number) {
        const rare = this.rareFor(value);
        if (rare) rare.backoffExponent = value;
    }

    /** The wait imposed by the last escalation, in ms. */
    get lastBackoffMs(): number {
        return this.rare?.lastBackoffMs ?? 0;
    }
    set lastBackoffMs(value: number) {
        const rare = this.rareFor(value);
        if (rare) rare.lastBackoffMs = value;
    }

    /** After this time without a new refusal the exponent starts over; 0 when nothing to decay. */
    get decayAt(): number {
        return this.rare?.decayAt ?? 0;
    }
    set decayAt(value: number) {
        const rare = this.rareFor(value);
        if (rare) rare.decayAt = value;
    }

    /** Start of the current unbroken run of refusals; 0 when the domain is not refusing. */
    get refusingSince(): number {
        return this.rare?.refusingSince ?? 0;
    }
    set refusingSince(value: number) {
        const rare = this.rareFor(value);
        if (rare) rare.refusingSince = value;
    }

    /** Time of the last refusal; 0 when none. */
    get lastRefusalAt(): number {
        return this.rare?.lastRefusalAt ?? 0;
    }
    set lastRefusalAt(value: number) {
        const rare = this.rareFor(value);
        if (rare) rare.lastRefusalAt = value;
    }

    /** Refusing time accumulated in the current run. */
    get stallMs(): number {
        return this.rare?.stallMs ?? 0;
    }
    set stallMs(value: number) {
        const rare = this.rareFor(value);
        if (rare) rare.stallMs = value;
    }

    /** The wait imposed at the last refusal, in ms. */
    get lastImposedMs(): number {
        return this.rare?.lastImposedMs ?? 0;
    }
    set lastImposedMs(value: number) {
        const rare = this.rareFor(value);
        if (rare) rare.lastImposedMs = value;
    }

    /** Pacing raised by backoff triggers, in ms. */
    get penaltyMs(): number {
        return this.rare?.penaltyMs ?? 0;
    }
    set penaltyMs(value: number) {
        const rare = this.rareFor(value);
        if (rare) rare.penaltyMs = value;
    }

    /** Time of the last backoff trigger; 0 when none. */
    get lastTriggerAt(): number {
        return this.rare?.lastTriggerAt ?? 0;
    }
    set lastTriggerAt(value: number) {
        const rare = this.rareFor(value);
        if (rare) rare.lastTriggerAt = value;
    }

    /** Pacing announced by the server, in ms. */
    get announcedIntervalMs(): number {
        return this.rare?.announcedIntervalMs ?? 0;
    }
    set announcedIntervalMs(value: number) {
        const rare = this.rareFor(value);
        if (rare) rare.announcedIntervalMs = value;
    }

    /** Until when the announced pacing applies. */
    get announcedUntil(): number {
        return this.rare?.announcedUntil ?? 0;
    }
    set announcedUntil(value: number) {
        const rare = this.rareFor(value);
        if (rare) rare.announcedUntil = value;
    }

    /** Start of the current quota window. */
    get quotaWindowStart(): number {
        return this.rare?.quotaWindowStart ?? 0;
    }
    set quotaWindowStart(value: number) {
        const rare = this.rareFor(value);
        if (rare) rare.quotaWindowStart = value;
    }

    /** Cost spent in the current quota window. */
    get quotaSpent(): number {
        return this.rare?.quotaSpent ?? 0;
    }
    set quotaSpent(value: number) {
        const rare = this.rareFor(value);
        if (rare) rare.quotaSpent = value;
    }

    /** Refusals met (the statistics). */
    get refusals(): number {
        return this.rare?.refusals ?? 0;
    }
    set refusals(value: number) {
        const rare = this.rareFor(value);
        if (rare) rare.refusals = value;
    }

    /** Network errors or timeouts in a row with no answer in between (the error budget). */
    get consecutiveErrors(): number {
        return this.rare?.consecutiveErrors ?? 0;
    }
    set consecutiveErrors(value: number) {
        const rare = this.rareFor(value);
        if (rare) rare.consecutiveErrors = value;
    }

    /** Time spent backed off in all (the statistics). */
    get backedOffMs(): number {
        return this.rare?.backedOffMs ?? 0;
    }
    set backedOffMs(value: number) {
        const rare = this.rareFor(value);
        if (rare) rare.backedOffMs = value;
    }

    /** Requests sent back for a free retry after a refusal (the statistics). */
    get freeRetries(): number {
        return this.rare?.freeRetries ?? 0;
    }
    set freeRetries(value: number) {
        const rare = this.rareFor(value);
        if (rare) rare.freeRetries = value;
    }

    /** The rare fields, made for a value other than 0 (writing 0 to a field never made changes nothing). */
    private rareFor(value: number): RareDomainFields | undefined {
        if (!this.rare && value !== 0) this.rare = new RareDomainFields();
        return this.rare;
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
