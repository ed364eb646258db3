/**
 * What the optional methods of a {@link SharedDomainClock} take and answer: shared refusals,
 * concurrency leases, quotas and learned rates. Times are epoch ms in the clock's own time (its
 * `clock` option), which is the manager's time when both use the system clock.
 */

/** How {@link SharedDomainClock.recordRefusal} escalates a shared backoff. */
export interface RefusalPolicy {
    /** The server's wait (Retry-After), in ms, when it gave one: used instead of the exponential step. */
    waitMs?: number;
    /** The first backoff of a burst, in ms. */
    baseMs: number;
    /** The longest backoff, in ms (a server wait too is capped by it). */
    maxMs: number;
    /** How much each escalation multiplies the backoff. @default 2 */
    factor?: number;
}

/** The shared backoff after {@link SharedDomainClock.recordRefusal}. */
export interface SharedRefusal {
    /** Whether this refusal started a new backoff (false: one was running, from this host or another). */
    escalated: boolean;
    /** Until when every host holds the key. */
    backoffUntil: number;
    /** The shared level (how many bursts in a row). */
    level: number;
    /** How long the backoff runs from now, in ms. */
    waitMs: number;
}

/** The answer of {@link SharedDomainClock.acquireSlot}. */
export type SlotLease =
    | { granted: true; token: string; expiresAt: number; held: number }
    /** `notBefore`: when the first lease runs out (a release frees one sooner). */
    | { granted: false; notBefore: number; held: number };

/** The answer of {@link SharedDomainClock.spendQuota}. */
export type QuotaSpend =
    | { granted: true; spent: number; windowEndsAt: number }
    /** `notBefore`: when the next window opens. */
    | { granted: false; spent: number; notBefore: number };

/** A rate shared by {@link SharedDomainClock.shareRate}: requests per second for the whole key, all hosts together. */
export interface SharedRate {
    /** Requests per second (finite, > 0). */
    rate: number;
    /** When it was learned, in the clock's time (a host's `at`, carried across hosts' clock offsets). */
    at: number;
}

/** What {@link SharedDomainClock.tally} adds to a key's counts: this host's since its last call. */
export interface TallyCounts {
    /** Requests sent (whole, >= 0). */
    dispatched: number;
    /** Answers the site accepted (whole, >= 0). */
    answered: number;
}

/** The answer of {@link SharedDomainClock.tally}: the key's counts, all hosts together, and the rate in force. */
export interface SharedTally extends TallyCounts {
    /** The rate in force ({@link SharedDomainClock.shareRate}), when one was shared. */
    rate?: SharedRate;
}
